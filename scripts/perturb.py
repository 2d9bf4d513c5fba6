"""Stage `perturb`: materialise T_θ of the configured benchmark into the perturbation store, once for every
model, shard and run that evaluates the same clean set, perturbations and seed (`pipeline.perturb.materialize`).

    python scripts/perturb.py                       # params.yaml's benchmark: data/cache/perturb/<digest>/
    python scripts/perturb.py benchmark=bbc_news    # any benchmark (after its `prepare`)

The store is content-addressed (clean set, perturbation code, levels, seed), chunked, checksummed and
resumable: an interrupted fill continues where it stopped, a code change writes a new folder. The ground
truth reads it (and fills what is missing within the bound itself, so it never depends on this stage having
run); `benchmark.store.enabled=false` leaves a benchmark without a store, `benchmark.store.max_order=k`
bounds it to θ of order ≤ k. Writes `outputs/perturb/<benchmark>.json` (what is stored, its size);
wall-clock time goes to `outputs/timings/perturb/<benchmark>.parquet`.
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import functools

import pandas as pd

from pipeline.benchmark.build import build_store
from pipeline.runtime.io import write_json, write_parquet
from pipeline.runtime.numerics import n_workers
from pipeline.perturb.fill import materialize
from pipeline.benchmark.plugin_code import check_plugins
from pipeline.stages.layout import data_dir, perturb_manifest, perturb_root, timings_path
from pipeline.stages.runner import benchmark_spec, run_stage


def main(cfg) -> None:
    spec = benchmark_spec(cfg)
    check_plugins(spec)
    store_cfg = spec["store"]
    out = {"benchmark": spec["name"], "enabled": bool(store_cfg["enabled"]), "max_order": store_cfg["max_order"]}
    if store_cfg["enabled"]:
        factory = functools.partial(build_store, spec, data_dir(cfg), perturb_root(cfg))
        store = factory()
        stats = materialize(store, workers=n_workers(int(cfg.workers)), factory=factory)
        write_parquet(pd.DataFrame([{"seconds": stats["seconds"], "computed": stats["computed"]}]), timings_path(cfg, "perturb"))
        out.update(digest=store.digest, configurations=stats["configurations"], size_bytes=stats["size_bytes"],
                   bytes_per_configuration=stats["size_bytes"] / max(1, stats["configurations"]))
        print(f"{stats['configurations']} configurations stored ({stats['computed']} computed now), "
              f"{stats['size_bytes'] / 2**20:.1f} MiB in {store.path}")
    else:
        print(f"benchmark {spec['name']!r} has no perturbation store (benchmark.store.enabled=false)")
    write_json(out, perturb_manifest(cfg))


if __name__ == "__main__":
    run_stage(main)
