"""Ground truth of a second model from the perturbation store (warm) against in-memory prefix reuse
(cold, what `Benchmark.evaluate_many` does by default), on the embedded digits benchmark, measured in
one process, on the prepare stage's data/digits/ (splits.npz, model.pt, features.pt), or on the digits
benchmark prepared into a temporary folder when data/digits/ is not there.

The perturbation store is filled once for a subset of Θ (the configurations of `n_tasks` random
(θ_1, θ_2) prefixes, 36 each, as the ground-truth stage schedules them); the second model (the
separately trained KID feature network, a width-8 CNN classifier) is then evaluated over that subset
cold and warm, alternating, and the rows of every run are asserted identical. Printed: the fill time;
cold and warm seconds per configuration (the best run of each), in total and for the perturbation part
alone, as ratios; the store's bytes per configuration and the projected size of the full 6^4 space.

    .venv/bin/python perf/bench_perturb_store.py [n_tasks] [--fidelity ssim,kid] [--repeats 2]
    .venv/bin/python perf/bench_perturb_store.py --quick   # one prefix, one run each, 40 test images

The warm reads come from the page cache (the store was just written), as they would for a model
evaluated soon after the fill; a cold disk adds its read time, about 1.1 MB per configuration.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _spec import benchmark_spec, digits_data  # noqa: E402

from pipeline.runtime.numerics import configure_torch, ensure_pinned  # noqa: E402

QUICK_IMAGES = 40


def digits_spec(fidelity: list[str], quick: bool) -> dict:
    """The digits benchmark spec of conf/ with fidelity metrics `fidelity`, without the adequacy observer (it
    reads the layers of the model under test, not of the second model timed here); `quick`: 40 test images."""
    return benchmark_spec(["benchmark=digits", f"fidelity=[{','.join(fidelity)}]", "benchmark.adequacy=null",
                           *([f"benchmark.dataset.test_limit={QUICK_IMAGES}"] if quick else [])])


def main(n_tasks: int, fidelity: list[str], repeats: int, quick: bool) -> None:
    """Fill the store for `n_tasks` random tasks, then time the second model cold and warm `repeats` times."""
    with contextlib.ExitStack() as stack:
        measure(digits_data(stack, quick), digits_spec(fidelity, quick), n_tasks, repeats)


def measure(data_dir: Path, spec: dict, n_tasks: int, repeats: int) -> None:
    """The fill, the cold and warm runs of the second model and the store's size, printed."""
    from pipeline.benchmark.build import build_benchmark
    from pipeline.benchmark.ground_truth import configs_of, tasks_for_shard
    from pipeline.models.cnn import load_cnn, predict_proba
    from pipeline.perturb.compose import compose
    from pipeline.perturb.fill import materialize
    from pipeline.perturb.materialize import PerturbationStore

    first = build_benchmark(spec, data_dir)
    second_net = load_cnn(data_dir / "features.pt")
    bench = dataclasses.replace(first, predict=lambda x: predict_proba(second_net, x, 512).argmax(1))
    space = bench.space

    rng = np.random.default_rng(0)
    tasks = tasks_for_shard(space)
    prefixes = sorted(tasks[i] for i in rng.choice(len(tasks), n_tasks, replace=False))
    thetas = [t for p in prefixes for t in configs_of(space, p)]
    compose(bench.perturbations, bench.clean[:1], (1, 1, 1, 1), bench.seed)  # JIT and import warm-up, untimed
    list(bench.evaluate_many(thetas[:1]))

    with tempfile.TemporaryDirectory(prefix="perturb-store-") as root:
        store = PerturbationStore.for_benchmark(root, bench, thetas=thetas)
        fill = materialize(store, progress=False)

        def values(rows):
            return [(t, {k: v for k, v in r.items() if not k.startswith("seconds_")}) for t, r in rows]

        t_cold = t_warm = p_cold = p_warm = float("inf")
        for _ in range(repeats):  # best of `repeats` for each: other load on the machine only slows a run
            t0 = time.perf_counter()
            cold = list(bench.evaluate_many(thetas))
            t_cold = min(t_cold, time.perf_counter() - t0)
            reader = PerturbationStore.for_benchmark(root, bench, thetas=thetas)  # nothing held in memory
            t0 = time.perf_counter()
            warm = list(bench.evaluate_many(thetas, source=reader))
            t_warm = min(t_warm, time.perf_counter() - t0)
            assert values(warm) == values(cold), "rows through the store differ from in-memory prefix reuse"
            assert reader.applications == 0, "the warm run computed perturbations"
            p_cold = min(p_cold, sum(r["seconds_perturb"] for _, r in cold))
            p_warm = min(p_warm, sum(r["seconds_perturb"] for _, r in warm))
        size, stored = store.size_bytes(), fill["configurations"]

    n = len(thetas)
    print(f"{n} configurations of prefixes {prefixes} on {len(bench.labels)} test images, fidelity {spec['fidelity']}")
    print(f"fill: {fill['seconds']:.2f} s ({fill['applications']} transform applications per input, "
          f"{fill['chunks_written']} chunks)")
    print(f"second-model ground truth: cold {t_cold / n:.4f} s/config, warm {t_warm / n:.4f} s/config "
          f"({t_cold / t_warm:.2f}x); rows identical")
    print(f"perturbation part: cold {p_cold / n:.4f} s/config, warm (store read) {p_warm / n:.4f} s/config "
          f"({p_cold / p_warm:.1f}x)")
    print(f"fill + warm {fill['seconds'] + t_warm:.2f} s against cold {t_cold:.2f} s for one model "
          f"(the fill is paid once for every later model)")
    per_config = size / stored
    print(f"store: {size / 1e6:.1f} MB for {stored} configurations, {per_config / 1e6:.3f} MB/config "
          f"(raw images {bench.clean.nbytes / 1e6:.3f} MB); projected full {space.levels}^{space.n_dims} space "
          f"({space.size - 1} stored configurations): {per_config * (space.size - 1) / 1e9:.2f} GB")


if __name__ == "__main__":
    ensure_pinned()
    configure_torch()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_tasks", type=int, nargs="?", default=2, help="(θ_1, θ_2) prefixes to evaluate, 36 configurations each")
    parser.add_argument("--fidelity", default="ssim,kid", help="comma-separated fidelity metrics of the ground-truth rows")
    parser.add_argument("--repeats", type=int, default=2, help="cold and warm runs, alternating; the best of each is printed")
    parser.add_argument("--quick", action="store_true", help=f"one prefix, one run each, {QUICK_IMAGES} test images; networks "
                        "trained one epoch when data/digits/ is not prepared")
    args = parser.parse_args()
    fidelity = [m for m in args.fidelity.split(",") if m]
    if args.quick:
        main(1, fidelity, 1, quick=True)
    else:
        main(args.n_tasks, fidelity, args.repeats, quick=False)
