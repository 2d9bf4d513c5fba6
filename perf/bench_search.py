"""Search overhead per proposal, and the time of the §3.3 tuning grid on this machine.

    .venv/bin/python perf/bench_search.py            # sample of 16 grid settings x 2 seeds
    .venv/bin/python perf/bench_search.py --full     # one seed of all 64 settings
    .venv/bin/python perf/bench_search.py --quick    # fewer generations, seeds, proposals, grid runs (seconds)

Prints, on a synthetic 6^4 ground-truth table (B = 6,480, the table oracle, so only search overhead
is measured): (1) one TestNav generation with this package's array path against pymoo's own
`Mating` + `RankAndCrowding` on `Population` objects (the reference), as a ratio; (2) µs per proposal
of every method at its defaults; (3) grid runs, extrapolated to the 640 runs (64 settings x 10 seeds) of one benchmark–metric pair, both
from CPU time (what an idle machine gives) and from wall time over all cores (what this machine gave
now, with whatever else it was running); (4) one Optuna NSGA-II run with `CountingNSGAIISampler` against the same run
with Optuna's own `NSGAIISampler` (the reference), as a ratio, and whether the traces are equal; (5) one GP-PND run
against the same run with each pick recomputing the posterior the round's recall estimate already computed and with
the general (step-branch) non-domination formulas (the reference), as a ratio, and whether the traces are equal; (6) the
maximum-likelihood fits of one GP-PND run with its kernel, `AmplitudeRBFWhite`, against the same fits with scikit-learn's
composition `ConstantKernel * RBF + WhiteKernel` (the reference), as a ratio, and whether the fitted hyperparameters and
likelihoods are equal.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "search"))
from search_fixtures import (  # noqa: E402
    NAMES4,
    general_non_domination_probability,
    general_undominated_count,
    kernel_composition,
    synthetic_table,
)

from pipeline.search import METHODS, run_search  # noqa: E402
from pipeline.search.ground_truth import GroundTruth  # noqa: E402
from pipeline.search.parallel import map_runs  # noqa: E402
from pipeline.search.methods.survival import rank_and_crowding  # noqa: E402
from pipeline.search.studies.tuning import grid, tune_run  # noqa: E402
from pipeline.search.methods.variation import Variation  # noqa: E402
from pipeline.front.space import Space  # noqa: E402


SLOW_ANCHORS = ("optuna_tpe", "optuna_gp", "botorch_qlognehvi")


def generation_array(problem: GroundTruth, mu: int, generations: int, rng: np.random.Generator) -> float:
    """Seconds per generation of this package's Variation + survival (what `TestNav` runs)."""
    space, table = problem.space, problem.oracle.objectives
    X = space.grid()[rng.choice(space.size, mu, replace=False)]
    F = table[space.indices(X)]
    keep, keys = rank_and_crowding(F, mu, rng)
    variation = Variation(space, 1.0, 5.0)
    t = time.perf_counter()
    for _ in range(generations):
        Q = variation(X, keys, mu, rng)
        X, F = np.concatenate([X, Q]), np.concatenate([F, table[space.indices(Q)]])
        keep, keys = rank_and_crowding(F, mu, rng)
        X, F = X[keep], F[keep]
    return (time.perf_counter() - t) / generations


def generation_pymoo(problem: GroundTruth, mu: int, generations: int, rng: np.random.Generator) -> float:
    """Seconds per generation of the same step through pymoo's Population-based machinery (reference)."""
    from pymoo.algorithms.moo.nsga2 import binary_tournament
    from pymoo.core.duplicate import DefaultDuplicateElimination
    from pymoo.core.mating import Mating
    from pymoo.core.population import Population
    from pymoo.core.problem import Problem
    from pymoo.operators.crossover.sbx import SBX
    from pymoo.operators.mutation.pm import PM
    from pymoo.operators.repair.rounding import RoundingRepair
    from pymoo.operators.selection.tournament import TournamentSelection
    from pymoo.operators.survival.rank_and_crowding import RankAndCrowding

    space, table = problem.space, problem.oracle.objectives
    pymoo_problem = Problem(n_var=space.n_dims, n_obj=2, xl=0, xu=space.levels - 1, vtype=int)
    mating = Mating(TournamentSelection(func_comp=binary_tournament), SBX(eta=1.0, vtype=float, repair=RoundingRepair()),
                    PM(eta=5.0, vtype=float, repair=RoundingRepair()), repair=RoundingRepair(),
                    eliminate_duplicates=DefaultDuplicateElimination())
    survival = RankAndCrowding()
    algorithm = types.SimpleNamespace(tournament_type="comp_by_rank_and_crowding", random_state=rng)
    X = space.grid()[rng.choice(space.size, mu, replace=False)]
    pop = survival.do(pymoo_problem, Population.new("X", X, "F", -table[space.indices(X)]), n_survive=mu, random_state=rng)
    t = time.perf_counter()
    for _ in range(generations):
        off = mating.do(pymoo_problem, pop, mu, random_state=rng, algorithm=algorithm)
        off.set("F", -table[space.indices(off.get("X").astype(int))])
        pop = survival.do(pymoo_problem, Population.merge(pop, off), n_survive=mu, random_state=rng)
    return (time.perf_counter() - t) / generations


def nsga2_bookkeeping(problem: GroundTruth, budget: int, seed: int) -> tuple[float, float, bool]:
    """Seconds of one `optuna_nsga2` run with this package's sampler and with Optuna's own, and whether the traces
    are equal (the method builds its sampler from the module's name, so the reference swaps that name)."""
    import optuna

    from pipeline.search.methods import optuna_samplers

    space = problem.space
    t = time.perf_counter()
    ours = run_search("optuna_nsga2", problem.oracle, space, budget, seed)
    fast = time.perf_counter() - t
    counting, optuna_samplers.CountingNSGAIISampler = optuna_samplers.CountingNSGAIISampler, optuna.samplers.NSGAIISampler
    try:
        t = time.perf_counter()
        theirs = run_search("optuna_nsga2", problem.oracle, space, budget, seed)
        reference = time.perf_counter() - t
    finally:
        optuna_samplers.CountingNSGAIISampler = counting
    return fast, reference, ours.equals(theirs)


def pnd_acquisition(problem: GroundTruth, budget: int, seed: int) -> tuple[float, float, bool]:
    """Seconds of one `pnd` run as it runs and as the reference of (5) runs it, and whether the traces are equal."""
    from pipeline.search.methods import pnd

    space = problem.space
    t = time.perf_counter()
    ours = run_search("pnd", problem.oracle, space, budget, seed)
    fast = time.perf_counter() - t
    saved = pnd.non_domination_probability, pnd.undominated_count, pnd.ParetoProbability._round
    pnd.non_domination_probability, pnd.undominated_count = general_non_domination_probability, general_undominated_count
    pnd.ParetoProbability._round = lambda self, *a: saved[2](self, *a[:5], None)
    try:
        t = time.perf_counter()
        theirs = run_search("pnd", problem.oracle, space, budget, seed)
        reference = time.perf_counter() - t
    finally:
        pnd.non_domination_probability, pnd.undominated_count, pnd.ParetoProbability._round = saved
    return fast, reference, ours.equals(theirs)


def kernel_fits(problem: GroundTruth, budget: int, seed: int) -> tuple[float, float, bool, int]:
    """Seconds of the GP fits of one `pnd` run with `AmplitudeRBFWhite` and with the composition (the reference of (6)),
    whether every fit's hyperparameters and log-likelihood are equal, and the number of fits."""
    from pipeline.search.methods import pnd
    from pipeline.search.surrogate.gp_surrogate import AmplitudeRBFWhite, fit_regressor

    fits, fit_gp = [], pnd.fit_gp
    pnd.fit_gp = lambda Z, y, start=None, extra=None: fits.append((Z, y, extra)) or fit_gp(Z, y, start, extra)
    try:
        run_search("pnd", problem.oracle, problem.space, budget, seed)
    finally:
        pnd.fit_gp = fit_gp

    def timed(kernel) -> tuple[float, list]:
        out, t = [], time.perf_counter()
        for Z, y, extra in fits:
            _, gp = fit_regressor(Z, y, kernel(Z.shape[1]), extra)
            out.append((gp.kernel_.theta, gp.log_marginal_likelihood_value_))
        return time.perf_counter() - t, out

    fast, ours = timed(lambda d: AmplitudeRBFWhite(1.0, np.full(d, 0.5), 1e-2))
    reference, theirs = timed(lambda d: kernel_composition(1.0, np.full(d, 0.5), 1e-2))
    same = all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(ours, theirs))
    return fast, reference, same, len(fits)


def main() -> None:
    """The six measurements on the synthetic table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="time one seed of all 64 grid settings instead of a sample")
    parser.add_argument("--quick", action="store_true",
                        help="10 generations in (1); one seed, budget |Θ|/16 in (2); 4 grid runs in (3); |Θ|/8 in (5), (6)")
    args = parser.parse_args()
    space = Space(NAMES4, 6)
    problem = GroundTruth.from_table(synthetic_table(space), "synthetic", "ssim")
    B = 5 * space.size
    generations, seeds, budget = (10, (0,), space.size // 16) if args.quick else (60, (0, 1), B)
    print(f"synthetic 6^4 table, |P*| = {int(problem.pareto.sum())}, B = {B}, cores = {os.cpu_count()}, load = {os.getloadavg()[0]:.1f}")

    print("\n(1) one TestNav generation, array path vs pymoo Population machinery (reference)")
    for mu in (20, 110):
        fast = generation_array(problem, mu, generations, np.random.default_rng(0))
        ref = generation_pymoo(problem, mu, generations, np.random.default_rng(0))
        print(f"  mu={mu:>3}: {fast * 1e3:6.2f} ms vs {ref * 1e3:6.2f} ms per generation -> {ref / fast:4.1f}x faster")

    print(f"\n(2) search overhead per proposal, defaults (eta_c=1, eta_m=5, mu=110), {len(seeds)} seed(s), budget {budget}")
    for method in METHODS:
        # the GP and TPE anchors cost seconds a proposal at a few hundred evaluations: 50 proposals show it (12 in --quick)
        limit = min(budget, 12 if args.quick else 50) if method in SLOW_ANCHORS else budget
        t = time.perf_counter()
        n = sum(len(run_search(method, problem.oracle, space, limit, seed)) for seed in seeds)
        print(f"  {method:<11} {(time.perf_counter() - t) / n * 1e6:7.1f} us/proposal ({n // len(seeds)} proposals per run)")

    settings = grid([1, 5, 10, 15], [1, 5, 10, 15], [20, 50, 80, 110])
    if args.quick:
        sample = [s for s in settings if s["eta_c"] in (1, 15) and s["eta_m"] == 5 and s["mu"] in (20, 110)]
        jobs = [dict(problem=problem, setting=s, seed=0, budget=5 * problem.space.size) for s in sample]
    elif args.full:
        jobs = [dict(problem=problem, setting=s, seed=0, budget=5 * problem.space.size) for s in settings]
    else:
        sample = [s for s in settings if s["eta_c"] in (1, 15) and s["eta_m"] in (1, 15)]
        jobs = [dict(problem=problem, setting=s, seed=seed, budget=5 * problem.space.size) for s in sample for seed in (0, 1)]
    print(f"\n(3) {len(jobs)} grid runs: CPU time in this process, then wall time over all cores (joblib)")
    cpu = time.process_time()
    rows = [tune_run(**job) for job in jobs]
    cpu_per_run = (time.process_time() - cpu) / len(rows)
    t = time.perf_counter()
    list(map_runs(tune_run, jobs, workers=0, progress=False))
    wall_per_run = (time.perf_counter() - t) / len(jobs)
    cores = os.cpu_count() or 1
    print(f"  {cpu_per_run:.2f} CPU s per run; {wall_per_run:.2f} s wall per run over {cores} cores; "
          f"mean final recall {np.mean([r['final_recall'] for r in rows]):.3f}")
    print(f"  640 runs (one benchmark-metric pair): {640 * cpu_per_run / cores:.0f} s on {cores} idle cores (CPU time / cores), "
          f"{640 * wall_per_run:.0f} s at the measured wall rate (load {os.getloadavg()[0]:.1f})")

    runs = 1500 if args.quick else B
    fast, reference, same = nsga2_bookkeeping(problem, runs, 0)
    print(f"\n(4) Optuna NSGA-II, {runs} proposals: counting sampler {fast:.2f} s vs Optuna's own {reference:.2f} s "
          f"-> {reference / fast:.1f}x faster; traces equal: {same}")

    budget = space.size // 8 if args.quick else space.size
    fast, reference, same = pnd_acquisition(problem, budget, 0)
    print(f"\n(5) GP-PND, {budget} proposals: {fast:.2f} s vs the reference {reference:.2f} s -> {reference / fast:.2f}x faster; "
          f"traces equal: {same}")

    fast, reference, same, n = kernel_fits(problem, budget, 0)
    print(f"\n(6) the {n} GP fits of that GP-PND run: AmplitudeRBFWhite {fast:.2f} s vs scikit-learn's composition {reference:.2f} s "
          f"-> {reference / fast:.2f}x faster; hyperparameters and likelihoods equal: {same}")


if __name__ == "__main__":
    main()
