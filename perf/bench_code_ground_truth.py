"""Ground-truth cost of the embedded code benchmark (HumanEval, retrieval model, RP5@1), measured in one run.

Prepares the benchmark of conf/ (with the given overrides) into a temporary folder, evaluates the
configurations of a sample of ground-truth tasks (prefixes (θ_1, θ_2), as the stage schedules them, in one
process with one torch thread), and prints where a configuration's time goes: perturbation (with prefix
reuse), model (retrieval), execution (sandbox runs of programs not yet in the execution cache), and each
fidelity metric; the execution cache's hit rate; BERT-F1's reuse of encodings; and the projected wall time
of the full space on `--workers` processes (the stage's `workers=0` on this machine = its core count).

    python perf/bench_code_ground_truth.py [--tasks 3] [--workers 2] [override ...]
    python perf/bench_code_ground_truth.py benchmark.dataset.problems=40
    python perf/bench_code_ground_truth.py --quick   # one task on the first 8 problems (seconds)
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.runtime.numerics import configure_torch, ensure_pinned  # noqa: E402

ensure_pinned()

import numpy as np  # noqa: E402

QUICK_PROBLEMS = 8


def main() -> None:
    """Prepare, build and time the sampled tasks; print the split, the cache statistics and the projection."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=3, help="ground-truth tasks (36 configurations each) to time")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes of the projected full run")
    parser.add_argument("--quick", action="store_true", help=f"one task on the first {QUICK_PROBLEMS} problems (overrides still apply)")
    parser.add_argument("overrides", nargs="*", default=[])
    args = parser.parse_args()
    configure_torch()

    from _spec import benchmark_spec

    from pipeline.benchmark.build import build_benchmark
    from pipeline.benchmark.ground_truth import configs_of, tasks_for_shard
    from pipeline.perturb.compose import PrefixCache
    from pipeline.benchmark.preparation import prepare

    quick = [f"benchmark.dataset.problems={QUICK_PROBLEMS}"] if args.quick else []
    spec = benchmark_spec(["benchmark=humaneval", *quick, *args.overrides])
    n_tasks = 1 if args.quick else args.tasks
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        metrics = prepare(spec, tmp)
        t_prepare = time.perf_counter() - t0
        t0 = time.perf_counter()
        bench = build_benchmark(spec, tmp)
        t_build = time.perf_counter() - t0
    predictor = bench.predict.model.predictor  # the RobustPassPredictor of the model under test (pipeline.code.assets)
    originals = dict(bench.fidelity)
    timed = {}
    for name, phi in list(bench.fidelity.items()):
        timed[name] = 0.0

        def wrapped(x, phi=phi, name=name):
            s = time.perf_counter()
            value = phi(x)
            timed[name] += time.perf_counter() - s
            return value

        bench.fidelity[name] = wrapped
    print(f"D: {metrics['n_problems']} problems x {spec['dataset']['variants']} variants = {len(bench.labels)} inputs; "
          f"fidelity rows: first {spec['dataset']['fidelity_variants'] or spec['dataset']['variants']} variant(s) per problem; "
          f"clean pass@1 = RP@1 = {bench.clean_score:.3f}; prepare {t_prepare:.1f} s, build {t_build:.1f} s")

    space = bench.space
    tasks = tasks_for_shard(space)
    rng = np.random.default_rng(0)
    sample = sorted(tasks[i] for i in rng.choice(len(tasks), min(n_tasks, len(tasks)), replace=False))
    runs0, hits0, exec0, model0 = predictor.cache.runs, predictor.cache.hits, predictor.cache.seconds, predictor.seconds_model
    perturb = 0.0
    n = 0
    rows = []
    t0 = time.perf_counter()
    for prefix in sample:
        cache = PrefixCache(bench.perturbations, bench.clean, bench.seed)
        for theta, out in bench.evaluate_many(configs_of(space, prefix), cache):
            perturb += out["seconds_perturb"]
            rows.append((theta, out["psi"], out["delta"]))
            n += 1
    total = time.perf_counter() - t0
    runs, hits = predictor.cache.runs - runs0, predictor.cache.hits - hits0
    parts = {"perturb": perturb, "model": predictor.seconds_model - model0, "execution": predictor.cache.seconds - exec0,
             **{f"fidelity {k}": v for k, v in timed.items()}}
    per = total / n
    print(f"{n} configurations of tasks {sample}: {per:.3f} s/config")
    print("per configuration: " + ", ".join(f"{k} {v / n:.4f} s ({v / total:.0%})" for k, v in parts.items())
          + f", other {(total - sum(parts.values())) / n:.4f} s")
    print(f"execution cache: {runs} sandbox runs, {hits} hits, hit rate {hits / max(1, runs + hits):.3f} "
          f"({predictor.cache.seconds / max(1, predictor.cache.runs):.3f} s per run)")
    for phi in originals.values():
        if hasattr(phi, "reused"):
            enc = phi.encoder
            print(f"BERT-F1: {phi.reused} texts reused an encoding by token ids; encoder cache {enc.hits} hits, "
                  f"{enc.misses} misses, {enc.forward_texts} texts through the model")
    deltas = np.array([d for _, _, d in rows])
    print(f"δ over the sample: min {deltas.min():.3f}, median {np.median(deltas):.3f}, max {deltas.max():.3f}")
    startup = t_build
    projected = startup + per * space.size / max(1, args.workers)
    print(f"projected full ground truth ({space.size} configurations, {args.workers} processes): "
          f"{projected / 60:.1f} min (+ prepare {t_prepare:.0f} s)")


if __name__ == "__main__":
    main()
