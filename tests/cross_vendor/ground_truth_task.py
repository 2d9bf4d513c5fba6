"""One task of a default benchmark's ground truth (the configurations under a prefix: 36 under two levels),
recomputed in this process from the prepared assets, the perturbations included (no perturbation store), against
the committed table `outputs/groundtruth/<benchmark>.parquet`: prints one JSON object, exits 1 when a value differs.

    python tests/cross_vendor/ground_truth_task.py digits 2,3
    qemu-x86_64 -cpu EPYC-Rome .venv/bin/python tests/cross_vendor/ground_truth_task.py digits 2,3 --numpy-baseline

It needs the assets `make repro` prepares (`data/<benchmark>/`). Compared: ψ, δ, each adequacy metric and each ρ,
bit for bit; `digest` also covers the per-input predictions and fidelities, which the table does not keep.

`--numpy-baseline` turns numpy's own AVX2 kernels off (its x86-64-v2 baseline instead), for QEMU: QEMU 7.2's user
mode computes numpy's AVX2 argsort wrong (docs/reproducibility.md, "The text side under QEMU, and what crashes
there"), and DSA's
`np.unique` calls it. Under the emulator, set the pinned variables before it starts, as `run_slice` does."""
import pipeline.runtime.pin  # noqa: F401  (first: pins the numerical environment)

import os
import sys

if "--numpy-baseline" in sys.argv:  # before numpy loads; the pinned value disables only its AVX-512 kernels
    os.environ["NPY_DISABLE_CPU_FEATURES"] = "X86_V3 " + os.environ["NPY_DISABLE_CPU_FEATURES"]

import hashlib
import json
import time

import numpy as np
import pandas as pd

from pipeline.benchmark.build import build_benchmark
from pipeline.benchmark.ground_truth import configs_of
from pipeline.perturb.compose import PrefixCache
from pipeline.runtime.numerics import configure_torch
from pipeline.stages.layout import ROOT, data_dir
from pipeline.stages.runner import benchmark_spec, load_params


def compare(benchmark: str, prefix: tuple[int, ...]) -> dict:
    """The task's values against the committed table's rows."""
    configure_torch()  # as every stage and ground-truth worker sets it
    cfg = load_params([f"benchmark={benchmark}"])
    spec = benchmark_spec(cfg)
    bench = build_benchmark(spec, str(data_dir(cfg)), per_input=True)
    table = pd.read_parquet(ROOT / "outputs" / "groundtruth" / f"{benchmark}.parquet")
    rows = {tuple(int(v) for v in key): row for key, row in zip(table[list(bench.space.names)].to_numpy(),
                                                                table.to_dict("records"))}
    psi = spec.get("task_metric", "accuracy")  # the column ψ takes in the table, as the ground-truth stage names it
    pending = configs_of(bench.space, prefix)
    start, digest, compared, differ = time.perf_counter(), hashlib.sha256(), 0, []
    for theta, values in bench.evaluate_many(pending, PrefixCache(bench.perturbations, bench.clean, bench.seed)):
        for key, value in sorted(values.items()):
            if key.startswith("seconds"):
                continue
            digest.update(f"{theta} {key}".encode() + np.asarray(value, dtype=np.float64).tobytes())
            column = psi if key == "psi" else key
            if np.isscalar(value) and column in table.columns:
                compared += 1
                if float(rows[theta][column]).hex() != float(value).hex():
                    differ.append([list(theta), column, float(rows[theta][column]), float(value)])
    return {"benchmark": benchmark, "prefix": list(prefix), "configurations": len(pending), "values_compared": compared,
            "differ": len(differ), "first_differences": differ[:5], "digest": digest.hexdigest()[:16],
            "seconds": round(time.perf_counter() - start, 1)}


if __name__ == "__main__":
    result = compare(sys.argv[1], tuple(int(x) for x in sys.argv[2].split(",")))
    print(json.dumps(result))
    sys.exit(1 if result["differ"] or not result["values_compared"] else 0)
