"""Ground-truth speed on the embedded digits benchmark, measured in one run (needs `make repro`'s
prepare stage, or `python scripts/prepare.py`, to have written data/digits/).

Prints: transform applications per input with prefix reuse (as the stage schedules tasks) against the
naive 4 x |Θ|; the time per configuration with and without prefix reuse on a sample of tasks, as a
ratio; and where a configuration's time goes (perturbation, inference, fidelity).
    python benchmarks/bench_groundtruth.py [n_tasks]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.builders import build_benchmark  # noqa: E402
from pipeline.groundtruth import configs_of, tasks_for_shard  # noqa: E402
from pipeline.perturb.compose import PrefixCache  # noqa: E402


def main(n_tasks: int = 2) -> None:
    torch.set_num_threads(1)
    spec = OmegaConf.to_container(OmegaConf.load(ROOT / "conf/benchmark/digits.yaml"), resolve=True)
    bench = build_benchmark(spec, ROOT / "data" / spec["name"])
    space = bench.space
    tasks = tasks_for_shard(space)

    applications = 0
    for prefix in tasks:  # count only: apply nothing, mirror the cache's bookkeeping
        counter = PrefixCache([_Counting()] * space.n_dims, np.zeros(1), 0)
        for theta in configs_of(space, prefix):
            counter.get(theta)
        applications += counter.applications
    naive = space.n_dims * space.size
    naive_active = int(space.order(space.grid()).sum())
    print(f"transform applications per input: prefix reuse {applications}, naive {naive} "
          f"({naive / applications:.2f}x fewer), naive active-only {naive_active} ({naive_active / applications:.2f}x fewer)")

    rng = np.random.default_rng(0)
    sample = sorted(tasks[i] for i in rng.choice(len(tasks), n_tasks, replace=False))
    thetas = [t for p in sample for t in configs_of(space, p)]
    t0 = time.perf_counter()
    reuse = list(bench.evaluate_many(thetas))
    t_reuse = time.perf_counter() - t0
    t0 = time.perf_counter()
    direct = [bench.evaluate(t) for t in thetas]
    t_direct = time.perf_counter() - t0
    assert [t for t, _ in reuse] == thetas  # evaluate_many goes in lexicographic order, as `sample` is sorted
    assert all(a[1]["rho_ssim"] == b["rho_ssim"] and a[1]["delta"] == b["delta"] for a, b in zip(reuse, direct))
    parts = {k: np.mean([r[k] for _, r in reuse]) for k in ("seconds_perturb", "seconds_infer", "seconds_fidelity")}
    per_config = t_reuse / len(thetas)
    print(f"{len(thetas)} configurations of tasks {sample}: {per_config:.3f} s/config with reuse, "
          f"{t_direct / len(thetas):.3f} s/config without ({t_direct / t_reuse:.2f}x)")
    print("time per configuration: " + ", ".join(f"{k.split('_')[1]} {v:.3f} s ({v / per_config:.0%})" for k, v in parts.items()))
    print(f"extrapolated ground truth for |Θ| = {space.size}: {per_config * space.size / 60:.1f} CPU-minutes "
          f"(≈ {per_config * space.size / 60 / 2:.1f} min on 2 workers)")


class _Counting:
    name, max_level = "count", 10 ** 9

    def apply(self, x, level, seed):  # the PrefixCache calls apply_step, which calls this per input
        return x


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
