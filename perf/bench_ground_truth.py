"""Ground-truth speed on the embedded digits benchmark, measured in one run (on the prepare stage's
data/digits/ when `make repro` or `python scripts/prepare.py` wrote it, else on the digits benchmark
prepared into a temporary folder).

Prints: transform applications per input with prefix reuse (as the stage schedules tasks) against the
naive 4 x |Θ|; the time per configuration with and without prefix reuse on a sample of tasks, as a
ratio; and where a configuration's time goes (perturbation, inference, fidelity).

    python perf/bench_ground_truth.py [n_tasks]
    python perf/bench_ground_truth.py --quick   # one task on the first 40 test images (seconds)
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _spec import benchmark_spec, digits_data  # noqa: E402

from pipeline.benchmark.problem import Benchmark  # noqa: E402
from pipeline.benchmark.build import build_benchmark  # noqa: E402
from pipeline.benchmark.ground_truth import configs_of, tasks_for_shard  # noqa: E402
from pipeline.perturb.compose import PrefixCache  # noqa: E402

QUICK_IMAGES = 40


def main(n_tasks: int, quick: bool) -> None:
    """Time `n_tasks` random ground-truth tasks with and without prefix reuse (`quick`: one task, 40 images)."""
    torch.set_num_threads(1)
    with contextlib.ExitStack() as stack:
        data_dir = digits_data(stack, quick)
        spec = benchmark_spec(["benchmark=digits", *([f"benchmark.dataset.test_limit={QUICK_IMAGES}"] if quick else [])])
        measure(build_benchmark(spec, data_dir), n_tasks)


def measure(bench: Benchmark, n_tasks: int) -> None:
    """Print the applications count, the reuse / no-reuse ratio on `n_tasks` random tasks and the time split."""
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
    print(f"{len(thetas)} configurations of tasks {sample} on {len(bench.labels)} test images: {per_config:.3f} s/config with reuse, "
          f"{t_direct / len(thetas):.3f} s/config without ({t_direct / t_reuse:.2f}x)")
    print("time per configuration: " + ", ".join(f"{k.split('_')[1]} {v:.3f} s ({v / per_config:.0%})" for k, v in parts.items()))
    print(f"extrapolated ground truth for |Θ| = {space.size}: {per_config * space.size / 60:.1f} CPU-minutes "
          f"(≈ {per_config * space.size / 60 / 2:.1f} min on 2 workers)")


class _Counting:
    name, max_level = "count", 10 ** 9

    def apply(self, x, level, seed):  # the PrefixCache calls apply_step, which calls this per input
        return x


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_tasks", type=int, nargs="?", default=2, help="random (θ_1, θ_2) tasks to time, 36 configurations each")
    parser.add_argument("--quick", action="store_true", help=f"one task on the first {QUICK_IMAGES} test images; networks "
                        "trained one epoch when data/digits/ is not prepared")
    args = parser.parse_args()
    main(1 if args.quick else args.n_tasks, args.quick)
