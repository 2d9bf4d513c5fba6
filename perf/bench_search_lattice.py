"""GP-PND against TestNav and Random Search (issue 11 §5): AUC-Recall@P* on the unique-configuration
axis, and the unique configurations u and proposals b needed to reach Recall@P* = 1, over seeds.

    .venv/bin/python perf/bench_search_lattice.py                      # synthetic tables (below)
    .venv/bin/python perf/bench_search_lattice.py outputs/groundtruth/digits.parquet
    .venv/bin/python perf/bench_search_lattice.py --seeds 3 --methods pnd,random --workers 2
    .venv/bin/python perf/bench_search_lattice.py --quick   # one seed, no GP-PND, the synthetic_table fixture only

Tables. With a ground-truth table path (the `groundtruth` stage's parquet), every fidelity metric of
that table. Without one, two synthetic 6^4 tables: `synthetic_table` of tests/search/search_fixtures.py
(smooth objectives plus i.i.d. noise) and `near_monotone_table` below (a simulated benchmark: accuracy
counted on 360 inputs, interacting perturbations, SSIM-like and KID-like fidelity).

Printed per benchmark–metric pair: |P*|, the share of lattice edges along which δ does not decrease and
ρ does not increase (`monotonicity.edge_monotonicity`), then per method the mean ± sd over seeds of
AUC-Recall@P* (unique axis), u and b to full recall (over the seeds that reach it, with their count),
and the recovery table (`recovery.recovery_table`, speed-ups of TestNav). B = 5·|Θ| for every method.
Methods are registry names; `testnav:rank_crowding` is TestNav with the other parent selection.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "search"))
from search_fixtures import NAMES4, minmax, synthetic_table  # noqa: E402

from pipeline.front.pareto import pareto_mask  # noqa: E402
from pipeline.search import METHODS, run_metrics, run_search  # noqa: E402
from pipeline.search.ground_truth import GroundTruth, table_metrics  # noqa: E402
from pipeline.search.studies.monotonicity import edge_monotonicity  # noqa: E402
from pipeline.search.parallel import map_runs  # noqa: E402
from pipeline.search.scoring.recovery import recovery_markdown, recovery_table  # noqa: E402
from pipeline.front.space import Space  # noqa: E402

DEFAULT_METHODS = ("pnd", "testnav", "testnav:rank_crowding", "random")


def near_monotone_table(space: Space, seed: int = 0, n_inputs: int = 360) -> pd.DataFrame:
    """A simulated benchmark in the `groundtruth` stage's format, built to look like a real one.

    Each perturbation type i has a saturating severity curve s_i(level) of its own amplitude and shape;
    type 1 (a blur) masks half of type 0 (a noise) at its top level, and types 2 and 3 act together
    (a synergy term). Accuracy is counted on `n_inputs` simulated inputs: an input fails when the total
    strength plus its own perturbation noise (re-drawn per configuration, as the perturbations' RNG is)
    exceeds its latent robustness, and a failed input is still right by chance one time in ten; so δ
    is near-monotone with counting noise. SSIM-like fidelity is a product of per-type factors with
    costs unrelated to the accuracy strengths (brightness can be visible yet harmless) plus tiny noise;
    KID-like fidelity is a power of another additive cost with multiplicative estimator noise, negated.
    """
    rng = np.random.default_rng(seed)
    n = space.n_dims
    grid = space.grid()
    lv = grid / (space.levels - 1)
    s = rng.uniform(0.6, 1.6, n) * lv ** rng.uniform(0.7, 2.2, n)
    s[:, 0] *= 1 - 0.5 * lv[:, 1 % n]
    synergy = 0.6 * s[:, 2] * s[:, 3] if n >= 4 else np.zeros(len(grid))
    strength = s.sum(axis=1) + synergy
    robust = rng.gamma(2.0, 0.9, n_inputs)
    clean_right = rng.random(n_inputs) < 0.9
    jitter = rng.normal(0.0, 0.35, (len(grid), n_inputs)) * np.sqrt(strength)[:, None]
    failed = ~clean_right[None, :] | (strength[:, None] + jitter >= robust[None, :])
    lucky = rng.random((len(grid), n_inputs)) < 0.1
    accuracy = (~failed | lucky).mean(axis=1)
    delta = np.clip(accuracy[0] - accuracy, 0.0, None)
    cost = rng.uniform(0.2, 1.5, n) * lv ** rng.uniform(0.6, 1.6, n)
    cost[:, 0] *= 1 - 0.3 * lv[:, 1 % n]
    ssim = np.exp(-(cost + 0.2 * cost**2).sum(axis=1) - 0.3 * synergy) + rng.normal(0.0, 0.004, len(grid))
    kid_cost = (rng.uniform(0.2, 1.5, n) * lv ** rng.uniform(0.6, 1.6, n)).sum(axis=1) + 0.4 * synergy
    kid = kid_cost**1.3 * (1 + rng.normal(0.0, 0.05, len(grid))) + rng.normal(0.0, 0.02, len(grid))
    df = pd.DataFrame(grid, columns=list(space.names))
    df["order"] = Space.order(grid)
    df["accuracy"] = accuracy
    df["delta"] = delta
    df["delta_norm"] = minmax(delta)
    for metric, rho in (("ssim", ssim), ("kid", -kid)):
        df[f"rho_{metric}"] = rho
        df[f"rho_{metric}_norm"] = minmax(rho)
        df[f"pareto_{metric}"] = pareto_mask(df[["delta_norm", f"rho_{metric}_norm"]].to_numpy())
    return df


def one_run(problem: GroundTruth, method: str, seed: int) -> dict[str, Any]:
    name, _, selection = method.partition(":")
    hyper = {"selection": selection} if selection else {}
    t = time.perf_counter()
    trace = run_search(name, problem.oracle, problem.space, 5 * problem.space.size, seed, **hyper)
    return {"benchmark": problem.benchmark, "metric": problem.metric, "method": method, "seed": seed,
            "seconds": time.perf_counter() - t, **run_metrics(trace, problem.pareto, problem.space)}


def pm(values: pd.Series, digits: int) -> str:
    v = values.dropna()
    if v.empty:
        return "–"
    return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}" if len(v) > 1 else f"{v.mean():.{digits}f}"


def report(problem: GroundTruth, runs: pd.DataFrame, methods: list[str]) -> None:
    mono = edge_monotonicity(problem.oracle.objectives, problem.space).set_index("dimension")
    share = " ".join(f"{d}={mono.loc[d, 'delta_monotone']:.2f}/{mono.loc[d, 'rho_monotone']:.2f}" for d in mono.index)
    print(f"\n## {problem.benchmark} / {problem.metric}: |Θ| = {problem.space.size}, |P*| = {int(problem.pareto.sum())}")
    print(f"monotone edges (δ non-decreasing / ρ non-increasing): {share}")
    print("| Method | AUC (unique axis) | u to recall 1 | b to recall 1 | seeds at recall 1 | final recall | s/run |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for method in methods:
        r = runs[runs["method"] == method]
        print(f"| {method} | {pm(r['auc'], 3)} | {pm(r['u_full'], 1)} | {pm(r['b_full'], 1)} | {r['u_full'].notna().sum()}/{len(r)} "
              f"| {r['final_recall'].mean():.3f} | {r['seconds'].mean():.1f} |")


def main() -> None:
    """Every benchmark-metric pair of the tables: the per-method summary, then the recovery table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", nargs="?", help="a ground-truth table (parquet); default: the synthetic tables")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--methods", default=None, help=f"default: {','.join(DEFAULT_METHODS)} (--quick: without pnd)")
    parser.add_argument("--workers", type=int, default=1, help="processes (0 = all cores)")
    parser.add_argument("--realistic-seed", type=int, default=0, help="seed of near_monotone_table")
    parser.add_argument("--quick", action="store_true", help="one seed, no pnd unless --methods names it; without a table, "
                        "the synthetic_table fixture only")
    args = parser.parse_args()
    seeds = 1 if args.quick else args.seeds
    if args.methods is not None:
        methods = args.methods.split(",")
    elif args.quick:
        methods = [m for m in DEFAULT_METHODS if m != "pnd"]
        print("--quick: GP-PND (pnd) left out, its Gaussian-process runs take seconds each; name it in --methods to run it")
    else:
        methods = list(DEFAULT_METHODS)
    unknown = sorted({m.partition(":")[0] for m in methods} - set(METHODS))
    if unknown:
        parser.error(f"unknown methods {unknown}; valid: {', '.join(METHODS)}")
    if args.table:
        path = Path(args.table)
        tables = {path.stem: pd.read_parquet(path)}
    else:
        space = Space(NAMES4, 6)
        tables = {"fixture": synthetic_table(space)}
        if not args.quick:
            tables[f"near_monotone{args.realistic_seed}"] = near_monotone_table(space, args.realistic_seed)
    problems = [GroundTruth.from_table(table, name, metric) for name, table in tables.items() for metric in table_metrics(table)]
    all_runs = []
    for problem in problems:
        jobs = [dict(problem=problem, method=m, seed=s) for m in methods for s in range(seeds)]
        runs = pd.DataFrame(list(map_runs(one_run, jobs, args.workers, progress=False)))
        report(problem, runs, methods)
        all_runs.append(runs.assign(space_size=problem.space.size))
    labels = {m: (METHODS[m.partition(":")[0]].label + (f" ({m.partition(':')[2]})" if ":" in m else "")) for m in methods}
    print("\n## Recovery (speed-up of TestNav, ratio of means, where both reach recall 1 in every seed)\n")
    print(recovery_markdown(recovery_table(pd.concat(all_runs), reference="testnav"), labels))


if __name__ == "__main__":
    main()
