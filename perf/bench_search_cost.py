"""Issue 30's comparison in model evaluations: what each method pays, in inputs through the model, to recover the
core (every configuration on the front in ≥ 95% of the paired bootstrap resamples) and all of P*, against the
exhaustive |Θ|·n, with paired intervals over tables and seeds.

    .venv/bin/python perf/bench_search_cost.py --split dev --per-family 3 --seeds 2          # choices are made here
    .venv/bin/python perf/bench_search_cost.py --split test --per-family 4 --seeds 2 --out outputs/heldout/cost_test
    .venv/bin/python perf/bench_search_cost.py --split real --seeds 3 --out outputs/heldout/cost_real
    .venv/bin/python perf/bench_search_cost.py --groundtruth outputs/groundtruth/digits.parquet --benchmark digits
        # any ground truth in the committed format: <name>.parquet beside its per-input layer <name>.inputs.parquet
    .venv/bin/python perf/bench_search_cost.py --quick     # 1 dev table per family on a 4^3 lattice (seconds)
    .venv/bin/python perf/bench_search_cost.py --split real --seeds 1 --methods botorch_qlognehvi --budget 200 \
        --keep-others --out outputs/heldout/cost_real     # a slow anchor at a capped budget, beside the rows already there
    .venv/bin/python perf/bench_search_cost.py --report-only --out outputs/heldout/cost_test   # report.md again

Methods (`--methods`):
* `assess`: what `scripts/assess.py` pays with its defaults: every single-perturbation configuration raced first
  (`pipeline.assess.live.singletons`; no rivals yet, so each is completed), then GP-PND with racing, q configurations
  a round (`user_run`);
* `pnd_race`: GP-PND with racing over inputs (`pipeline.search.racing.racing`, through `RacingOracle`), one a round;
* `pnd`, `epal`, `botorch_qlognehvi`, or any other registered search: every configuration it proposes evaluated on
  all n inputs (`TableOracle` with the per-input layer, so the trace counts n a configuration);
* `bandit`: Pareto front identification from stochastic bandit feedback (Auer et al. 2016,
  `pipeline.search.methods.pareto_bandit`), one pull an input;
* `halving`: successive halving over inputs (`pipeline.search.methods.successive_halving`);
* exhaustive evaluation is the unit of the report: |Θ|·n, recall 1.

Searches run without a stopping rule through all of Θ (budget |Θ|, or `--budget` proposals for an anchor too slow
to run that far, such as BoTorch qLogNEHVI: such a run that has not recovered the core by then counts as the
exhaustive cost, an upper bound, and is compared again at what it spent by then, a lower bound), so that the cost to
the core and to P* can be read from one trace; the stopping rule is read there too: at the first proposal whose `est_core` reaches 0.95, the
evaluations spent and the share of the core completed (calibration: ≥ 0.95 in at least 90% of runs). A search
recovers a set when every member has been evaluated on all n inputs (`pipeline.search.scoring.cost`); the identification
methods when every member has been declared in their answer. A run that never recovers the core counts as the
exhaustive cost (it is no cheaper than enumerating Θ), so every run enters the comparison.

Writes to `--out` (default: prints only): runs.csv (one row per table, method and seed) and report.md.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search_heldout import QUICK_SPACE, REAL, markdown, parse_families, problems, publish, with_earlier_runs

from pipeline.runtime.numerics import ensure_pinned
from pipeline.search import RacingOracle, TableOracle, run_search
from pipeline.search.scoring.comparison import paired_difference
from pipeline.search.scoring.cost import completed_share, evaluations_to_complete
from pipeline.search.parallel import map_runs
from pipeline.search.racing.racing import FIRST, GROWTH, Z
from pipeline.search.studies.synthetic import FAMILIES
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

STOP = 0.95     # the stopping rule's threshold on est_core
GOAL = 0.10     # issue 30: the whole core within 10% of the exhaustive cost
REFERENCE = "pnd_race"


def search_row(objectives: np.ndarray, space: Space, pareto: np.ndarray, core: np.ndarray, units: UnitOutcomes,
               method: str, seed: int, race: dict, budget: int) -> dict:
    """Costs of one search run of at most `budget` proposals (module docstring)."""
    n = len(units.clean)
    oracle = (RacingOracle(objectives, space, units, seed=seed, **race) if method in ("pnd_race", "assess")
              else TableOracle(objectives, space, units))
    trace = (user_run(oracle, space, budget, seed) if method == "assess"
             else run_search("pnd" if method == "pnd_race" else method, oracle, space, budget, seed))
    row = {"evals_core": evaluations_to_complete(trace, core, space, n), "evals_pareto": evaluations_to_complete(trace, pareto, space, n),
           "evals_total": float(trace["evaluations"].iloc[-1]), "configurations": int(trace["u"].iloc[-1]),
           "evals_stop": np.nan, "recall_core_stop": np.nan}
    if "est_core" in trace:
        hit = np.flatnonzero(trace["est_core"].to_numpy() >= STOP)
        if len(hit):
            row["evals_stop"] = float(trace["evaluations"].iloc[hit[0]])
            row["recall_core_stop"] = completed_share(trace.iloc[: hit[0] + 1], core, space, n)
    return row


def identification_row(objectives: np.ndarray, space: Space, pareto: np.ndarray, core: np.ndarray, units: UnitOutcomes,
                       method: str, seed: int) -> dict:
    """Costs of one run of an identification method that samples inputs per configuration (module docstring)."""
    from pipeline.search.methods.pareto_bandit import evaluations_to_recover, units_pareto_bandit, units_sampler
    from pipeline.search.racing.racing import input_order
    from pipeline.search.methods.successive_halving import successive_halving

    order = input_order(len(units.clean), seed)
    run = (units_pareto_bandit(units, order) if method == "bandit"
           else successive_halving(units_sampler(units, order), len(units.outcomes), len(units.clean), seed=seed))
    answer = np.zeros(space.size, dtype=bool)
    answer[np.asarray(run.answer, dtype=np.int64)] = True
    return {"evals_core": evaluations_to_recover(run.declared, np.flatnonzero(core)),
            "evals_pareto": evaluations_to_recover(run.declared, np.flatnonzero(pareto)),
            "evals_total": float(run.evaluations), "configurations": int(answer.sum()),
            "evals_stop": float(run.evaluations), "recall_core_stop": float(answer[core].mean()) if core.any() else np.nan}


def user_run(oracle: RacingOracle, space: Space, budget: int, seed: int) -> pd.DataFrame:
    """The trace of a user's run with `scripts/assess.py`'s defaults (`pipeline.assess.Settings`): the singletons first,
    each a row with the inputs it cost, then the recommended search's rows, q a round, where a singleton proposed
    again costs nothing (it is in the run's store); `evaluations` the running sum over both."""
    from pipeline.assess.assess import Settings
    from pipeline.assess.live import singletons

    defaults = Settings()
    first = singletons(space)
    head = pd.DataFrame(first, columns=list(space.names)).assign(inputs=oracle.evaluate_counted(first).inputs)
    trace = run_search(defaults.method, oracle, space, budget, seed, batch_size=defaults.batch_size)
    again = np.isin(space.indices(trace[list(space.names)].to_numpy()), space.indices(first))
    trace["inputs"] = np.where(again, 0, trace["inputs"])
    both = pd.concat([head, trace], ignore_index=True)
    both["evaluations"] = both["inputs"].cumsum()
    return both


def one_run(group: str, table: str, objectives: np.ndarray, space: Space, pareto: np.ndarray, core: np.ndarray,
            units: UnitOutcomes, method: str, seed: int, race: dict, budget: int | None = None) -> dict:
    """One row of runs.csv (`budget`: the search's proposals, None for |Θ|)."""
    n, budget = len(units.clean), min(budget or space.size, space.size)
    row = {"group": group, "table": table, "method": method, "seed": seed, "n": n, "space_size": space.size, "budget": budget,
           "exhaustive": space.size * n, "core_size": int(core.sum()), "pareto_size": int(pareto.sum())}
    if method in ("bandit", "halving"):
        row.update(identification_row(objectives, space, pareto, core, units, method, seed))
    else:
        row.update(search_row(objectives, space, pareto, core, units, method, seed, race, budget))
    return row


def shares(runs: pd.DataFrame) -> pd.DataFrame:
    """runs with each cost as a share of the exhaustive one, a run that never recovers counted as 1 (`_cens`, an upper
    bound on what a capped run would have cost) or, for a run capped at `budget` proposals, as what it spent by then
    (`_lb`, a lower bound)."""
    out = runs.copy()
    spent = out["budget"] / out["space_size"] if "budget" in out else 1.0
    for what in ("core", "pareto"):
        share = out[f"evals_{what}"] / out["exhaustive"]
        out[f"share_{what}"] = share
        out[f"share_{what}_cens"] = share.fillna(1.0)
        out[f"share_{what}_lb"] = share.fillna(spent)
    out["share_stop"] = out["evals_stop"] / out["exhaustive"]
    return out


def recovery(runs: pd.DataFrame) -> pd.DataFrame:
    """Per group and method: runs, runs that recovered the core, the median and mean censored share of the
    exhaustive cost to the core and to P*, the stopping rule's share and calibration, and the proposals a search
    was allowed (`budget`, |Θ| unless capped)."""
    g = runs.groupby(["group", "method"], sort=False)
    budget = {"budget": ("budget", "min")} if "budget" in runs else {}
    return g.agg(runs=("share_core", "size"), core_found=("share_core", "count"),
                 core_median=("share_core_cens", "median"), core_mean=("share_core_cens", "mean"),
                 pareto_median=("share_pareto_cens", "median"), stop_median=("share_stop", "median"),
                 stop_calibrated=("recall_core_stop", lambda r: float((r.dropna() >= 0.95).mean()) if r.notna().any() else np.nan),
                 **budget).reset_index()


def paired(runs: pd.DataFrame, rng: np.random.Generator, what: str = "core", bound: str = "cens",
           reference: str = REFERENCE) -> pd.DataFrame:
    """Each method's censored share of the exhaustive cost to `what` (`bound`: "cens" or "lb", `shares`) minus the
    reference's, paired by (table, seed), a 95% cluster-bootstrap interval over tables; "tie" where it covers 0
    (smaller is better)."""
    column = f"share_{what}_{bound}"
    ref = runs[runs["method"] == reference].set_index(["table", "seed"])[column]
    rows = []
    for method, frame in runs[runs["method"] != reference].groupby("method", sort=False):
        both = frame.set_index(["table", "seed"])[column].to_frame("m").join(ref.rename("r"), how="inner")
        if len(both) < 2:
            continue
        codes = pd.factorize(both.index.get_level_values("table"))[0]
        d = paired_difference(both["m"].to_numpy(), both["r"].to_numpy(), rng, groups=codes if codes.max() > 0 else None)
        verdict = {"a better": f"{method} cheaper", "b better": f"{reference} cheaper"}.get(str(d["verdict"]), str(d["verdict"]))
        rows.append({"method": method, "pairs": len(both), "mean_diff": d["mean_diff"], "lo": d["lo"], "hi": d["hi"],
                     "ratio": d["ratio"], "verdict": verdict})
    return pd.DataFrame(rows)


def report(runs: pd.DataFrame, rng: np.random.Generator, reference: str = REFERENCE, goal: float = GOAL) -> str:
    """report.md (module docstring): every method against `reference`; the goal of the whole core within `goal` of the
    exhaustive cost."""
    runs = shares(runs)
    parts = [("## Model evaluations to recover the core and P*, as a share of the exhaustive |Θ|·n (censored: a run that "
              "never recovers counts 1)\n"), markdown(recovery(runs), 3)]
    limited = set(runs["method"][runs["budget"] < runs["space_size"]]) if "budget" in runs else set()
    for what, label in (("core", "the core"), ("pareto", "all of P*")):
        # a budget capped for the core is too small for P*: those methods are left out of its comparison
        table = paired(runs if what == "core" else runs[~runs["method"].isin(limited)], rng, what, reference=reference)
        if len(table):
            parts += [(f"\n## Share of the exhaustive cost to {label}: each method minus {reference} "
                       "(95% cluster-bootstrap interval over tables"
                       f"{'' if what == 'core' or not limited else '; the capped ' + ', '.join(sorted(limited)) + ' left out'})\n"),
                      markdown(table, 3)]
    capped = runs["evals_core"].isna() & runs["method"].isin(limited)
    if capped.any():
        table = paired(runs[runs["method"].isin(limited | {reference})], rng, "core", "lb", reference)
        parts += [(f"\n## The same to the core for the capped methods, a run that missed the core within its budget counted at "
                   f"what it spent by then, a lower bound on its cost ({int(capped.sum())} such runs; where this and the "
                   "comparison above disagree, the capped budget leaves the difference undetermined)\n"), markdown(table, 3)]
    race = runs[runs["method"] == reference]
    if len(race):
        per_table = race.groupby(["group", "table"], sort=False)["share_core_cens"].median().reset_index()
        groups = per_table.groupby("group", sort=False)["share_core_cens"].median()
        calibrated = race["recall_core_stop"].dropna()
        parts += [f"\n## The goal: the whole core within {goal:.0%} of the exhaustive cost, the stopping rule calibrated\n",
                  markdown(groups.rename("median share to the core").reset_index(), 3),
                  (f"\nMedian table: {per_table['share_core_cens'].median():.3f} of the exhaustive cost; groups within {goal}: "
                   f"{int((groups <= goal).sum())} of {len(groups)}. Stopping rule: core recall ≥ 0.95 in "
                   f"{calibrated_runs(calibrated)}; the whole core completed when it fired, within {goal:.0%} of the "
                   f"exhaustive cost, in {runs_within(race, goal)}.\n")]
    return "".join(parts)


def runs_within(runs: pd.DataFrame, goal: float) -> str:
    """`counted_runs` of the runs whose stopping rule fired within `goal` of the exhaustive cost with the whole core
    completed (a run whose rule never fired misses)."""
    hit = (runs["recall_core_stop"] >= 1.0) & (runs["evals_stop"] <= goal * runs["exhaustive"])
    return counted_runs(int(hit.sum()), len(runs))


def calibrated_runs(recall: pd.Series) -> str:
    """`counted_runs` of the runs whose core recall at the stopping rule is ≥ 0.95."""
    return counted_runs(int((recall >= 0.95).sum()), len(recall))


def counted_runs(k: int, n: int) -> str:
    """"k of n runs (share, 95% Clopper-Pearson interval)"."""
    from scipy.stats import binomtest

    if not n:
        return "0 of 0 runs"
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k} of {n} runs ({k / n:.0%}, 95% interval [{ci.low:.0%}, {ci.high:.0%}])"


def groundtruth_problem(path: Path, bench: str) -> list[tuple]:
    """The problems of one ground truth in the committed format (every metric with a core)."""
    from bench_search_heldout import real_units

    from pipeline.search.ground_truth import GroundTruth, table_metrics, table_space
    from pipeline.search.tables import read_groundtruth

    table = read_groundtruth(path, bench)
    space = table_space(table)
    out = []
    for metric in table_metrics(table):
        gt = GroundTruth.from_table(table, bench, metric, space)
        if gt.core is None:
            raise SystemExit(f"{path}: no set_{metric} column; the comparison needs the core (issue 29's columns)")
        out.append((f"{bench}·{metric}", f"{bench}·{metric}", gt.oracle.objectives, space, gt.pareto, gt.core,
                    real_units(bench, table, metric, path)))
    return out


def main(argv: list[str] | None = None) -> None:
    ensure_pinned()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "real"), default="dev")
    ap.add_argument("--groundtruth", type=Path, default=None, help="one ground truth in the committed format (with --benchmark)")
    ap.add_argument("--benchmark", default=None, help=f"the benchmark config of --groundtruth, e.g. one of {', '.join(REAL)}")
    ap.add_argument("--per-family", type=int, default=4)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--methods", default="pnd_race,pnd,epal,bandit,halving")
    ap.add_argument("--reference", default=REFERENCE, help="the method every other is compared with (e.g. assess)")
    ap.add_argument("--goal", type=float, default=GOAL, help="the share of the exhaustive cost the whole core is aimed within")
    ap.add_argument("--z", type=float, default=Z, help="racing: the bound's multiplier")
    ap.add_argument("--first", type=int, default=FIRST, help="racing: inputs of the first slice")
    ap.add_argument("--growth", type=float, default=GROWTH, help="racing: slice growth factor")
    ap.add_argument("--budget", type=int, default=None, help="proposals of each search (default |Θ|); see the docstring")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="1 development table per family on a 4^3 lattice, 1 seed")
    ap.add_argument("--keep-others", action="store_true",
                    help="keep the rows of --out's runs.csv that the runs now do not replace (same table, method and "
                         "seed), and report on all of them")
    ap.add_argument("--report-only", action="store_true", help="rewrite --out's report.md from its runs.csv, running nothing")
    args = ap.parse_args(argv)
    if args.report_only:
        if args.out is None or not (args.out / "runs.csv").is_file():
            ap.error(f"--report-only needs an --out folder with a runs.csv; got {args.out}")
        runs = pd.read_csv(args.out / "runs.csv")
        publish(runs, report(runs, np.random.default_rng(0), args.reference, args.goal), args.out, "runs.csv")
        return
    if args.keep_others and (args.out is None or not (args.out / "runs.csv").is_file()):
        ap.error(f"--keep-others needs an --out folder with a runs.csv from an earlier run; got {args.out}")
    if args.budget is not None and args.budget < 1:
        ap.error(f"--budget must be a positive number of proposals; got {args.budget}")
    if (args.groundtruth is None) != (args.benchmark is None):
        ap.error("--groundtruth and --benchmark go together")
    if args.groundtruth is not None:
        tables = groundtruth_problem(args.groundtruth, args.benchmark)
    else:
        split, per_family, space = ("dev", 1, QUICK_SPACE) if args.quick else (args.split, args.per_family, None)
        tables = [p for p in problems(split, per_family, space, parse_families(ap, args.families)) if p[5] is not None]
    tables = [p for p in tables if p[5].any()]
    race = {"z": args.z, "first": args.first, "growth": args.growth}
    methods = args.methods.split(",")
    jobs = [{"group": g, "table": t, "objectives": o, "space": s, "pareto": p, "core": c, "units": u, "method": m, "seed": seed,
             "race": race, "budget": args.budget} for g, t, o, s, p, c, u in tables for m in methods for seed in range(1 if args.quick else args.seeds)]
    print(f"{len(jobs)} runs: {len(tables)} tables, methods {methods}, {args.seeds} seeds, racing {race}", file=sys.stderr)
    runs = pd.DataFrame(list(map_runs(one_run, jobs, args.workers, desc="cost")))
    # several invocations may share one --out (e.g. a slow anchor run a benchmark at a time, side by side): the
    # read-merge-write of runs.csv holds an exclusive lock, so none loses another's rows
    with open(args.out / ".runs.lock", "w") if args.keep_others else contextlib.nullcontext() as lock:
        if args.keep_others:
            fcntl.flock(lock, fcntl.LOCK_EX)
            runs = with_earlier_runs(runs, args.out / "runs.csv", whole_methods=False)
            runs["budget"] = runs["budget"].fillna(runs["space_size"]).astype(int)  # rows from before --budget ran all of Θ
        publish(runs, report(runs, np.random.default_rng(0), args.reference, args.goal), args.out, "runs.csv")


if __name__ == "__main__":
    main()
