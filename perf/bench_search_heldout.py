"""The held-out comparison of issue 20: unique evaluations u to recover all of P*, per method, on generated
tables of a split (`pipeline.search.studies.synthetic`) or on the real ground-truth tables, with paired intervals.

    .venv/bin/python perf/bench_search_heldout.py --split dev  --per-family 4 --seeds 3
    .venv/bin/python perf/bench_search_heldout.py --split test --per-family 4 --seeds 3 --out outputs/heldout/test
    .venv/bin/python perf/bench_search_heldout.py --split real --seeds 3 --out outputs/heldout/real
    .venv/bin/python perf/bench_search_heldout.py --split test --methods pnd,random --batch-sizes 1,4,16,36
    .venv/bin/python perf/bench_search_heldout.py --split test --per-family 1 --seeds 1 --budget 200 \
        --families rugged,crowded --methods pnd,optuna_gp,botorch_qlognehvi   # the slow GP anchors, budget-matched
    .venv/bin/python perf/bench_search_heldout.py --quick          # 1 table per family, 1 seed, 4^3 lattice (seconds)
    .venv/bin/python perf/bench_search_heldout.py --split test --methods pnd --keep-others --out outputs/heldout/test \
        # after a change to one method: rerun it alone, keep the rows of the others

Every run is a full search with the proposal budget B = 5·|Θ| (or `--budget`) and no stopping rule, so the
run's own estimate of Recall@P* (`est_recall`, where the method writes one) can be checked against the truth.
With a `--budget` too small to recover P*, the report compares the members of P* each run still misses
after its B proposals (|P*| · (1 − recall)), paired by table and seed.
Writes to `--out` (default: prints only): runs.csv, one row per (table, method, q, seed): u and rounds
to recall 1 (NaN if never), |P*|, and at the first proposal whose est_recall reaches 0.95 the u and the
true recall there; and report.md: the recovery table (mean u over reaching runs, median and mean of the
censored u, which counts a run that never reaches recall 1 as |Θ| + 1) and, at each q, the paired comparison of
each method with the reference (`--reference`, default `search.recommended`), a cluster bootstrap over tables
(`pipeline.search.scoring.comparison`), "tie" where the 95% interval covers 0, the u-and-rounds-against-q table,
and the calibration table.

The core (issue 29): the configurations on the front in ≥ 95% of the paired bootstrap resamples of the test
inputs, the `set_<metric>` column of a ground-truth table (generated tables: `synthetic_confidence`, from their
per-input layer). Where a table has one, runs.csv also holds |core| (`core_size`), u to the whole core (`u_core`,
NaN if never) and the true recall of the core at the first proposal whose est_recall reaches 0.95
(`recall_core_confident`); the report adds, at each q, the recovery of the core (censored u to the core, a run
that never evaluates all of it counting as |Θ| + 1) and the same paired comparison on it, and the calibration
table the recall of the core there and the share of runs where it is ≥ 0.95. A real table without a
`set_<metric>` column is named on stderr and in the report, and has no core columns.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from pipeline.runtime.numerics import ensure_pinned
from pipeline.search import TableOracle, run_metrics, run_search
from pipeline.search.scoring.comparison import compare_to, paired_difference, recovery_summary
from pipeline.search.ground_truth import table_space
from pipeline.search.parallel import map_runs
from pipeline.search.studies.synthetic import FAMILIES, METRIC, split_tables, synthetic_confidence, synthetic_units
from pipeline.search.tables import read_units
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

ROOT = Path(__file__).resolve().parents[1]
REAL = ("digits", "bbc_news", "humaneval", "humaneval_b")  # the embedded ground truths, every metric of each: those that
# `dvc repro` wrote (humaneval_b only where it was run on request: conf/config.yaml's suite)
CONFIDENT = 0.95  # the estimate at which calibration is read
CORE_GOAL = 0.95  # issue 29's calibration goal: the true recall of the core where est_recall reaches CONFIDENT


QUICK_SPACE = Space(("p0", "p1", "p2"), 4)  # --quick: the generated tables on a 4^3 lattice


def parse_families(ap: argparse.ArgumentParser, text: str) -> tuple[str, ...]:
    """The comma-separated generated families of `--families`; an unknown one ends the script through `ap.error`."""
    families = tuple(text.split(","))
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        ap.error(f"--families: {unknown} — valid families: {', '.join(FAMILIES)}")
    return families


def recommended() -> str:
    return yaml.safe_load((ROOT / "conf/search/default.yaml").read_text())["recommended"]


Problem = tuple[str, str, np.ndarray, Space, np.ndarray, np.ndarray | None, UnitOutcomes | None]


def real_units(bench: str, table: pd.DataFrame, metric: str, path: Path | None = None) -> UnitOutcomes:
    """The per-unit layer of a committed ground truth (`pipeline.search.tables.read_units`; `path`: the table's file,
    default outputs/groundtruth/<bench>.parquet, its layer beside it), with the labels and task metric of its
    benchmark's config."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _spec import benchmark_spec

    from pipeline.benchmark.build import build_test_set
    from pipeline.stages.layout import sibling

    spec = benchmark_spec([f"benchmark={bench}"])
    labels = build_test_set(spec, ROOT / "data" / bench)[1]
    path = path or ROOT / "outputs/groundtruth" / f"{bench}.parquet"
    return read_units(sibling(path, ".inputs.parquet"), table, labels, metric,
                      spec.get("task_metric", "accuracy"), int(spec.get("seed", 0)))


def problems(split: str, per_family: int, space: Space | None, families: tuple[str, ...] = FAMILIES) -> list[Problem]:
    """(group, table id, objectives (|Θ|, 2), Θ, P* flags, core flags or None where the table has no `set_<metric>`)
    of every table of the split (generated: of `families`)."""
    out = []
    if split == "real":
        from pipeline.search.ground_truth import GroundTruth, table_metrics
        from pipeline.search.tables import read_groundtruth

        present = [b for b in REAL if (ROOT / "outputs/groundtruth" / f"{b}.parquet").exists()]
        if not present:
            raise SystemExit(f"--split real: no ground-truth table of {', '.join(REAL)} under outputs/groundtruth; run `make repro` first")
        for bench in present:
            table = read_groundtruth(ROOT / "outputs/groundtruth" / f"{bench}.parquet", bench)
            real_space = table_space(table)
            for metric in table_metrics(table):
                gt = GroundTruth.from_table(table, bench, metric, real_space)
                if gt.core is None:
                    print(f"{bench}·{metric}: the table has no set_{metric} column; its core columns are left out",
                          file=sys.stderr)
                units = real_units(bench, table, metric) if gt.core is not None else None
                out.append((f"{bench}·{metric}", f"{bench}·{metric}", gt.oracle.objectives, real_space, gt.pareto, gt.core, units))
        return out
    for family, seed in split_tables(split, per_family):
        if family not in families:
            continue
        table = synthetic_confidence(family, seed, space)
        s = table_space(table)
        oracle = TableOracle.from_table(table, s, delta="delta_norm", rho="rho_norm")
        pareto, core = np.zeros(s.size, dtype=bool), np.zeros(s.size, dtype=bool)
        pareto[s.indices(table.loc[table["pareto"], list(s.names)].to_numpy())] = True
        core[s.indices(table.loc[table[f"set_{METRIC}"] == "core", list(s.names)].to_numpy())] = True
        out.append((family, f"{family}-{seed}", oracle.objectives, s, pareto, core, synthetic_units(family, seed, space)))
    return out


def one_run(group: str, table: str, objectives: np.ndarray, space: Space, pareto: np.ndarray, core: np.ndarray | None,
            units: UnitOutcomes | None, method: str, q: int, seed: int, budget: int | None = None) -> dict:
    """One search run's row of runs.csv (module docstring); the core columns where `core` is given."""
    trace = run_search(method, TableOracle(objectives, space, units), space, budget or 5 * space.size, seed, batch_size=q)
    m = run_metrics(trace, pareto, space, core)
    row = {"group": group, "table": table, "method": method, "q": q, "seed": seed, "space_size": space.size,
           "pareto_size": int(pareto.sum()), "u_full": m["u_full"], "final_recall": m["final_recall"], "unique": m["unique"],
           "rounds_full": np.nan, "u_confident": np.nan, "recall_confident": np.nan}
    if core is not None:
        row.update(core_size=int(core.sum()), u_core=m["u_core"], recall_core_confident=np.nan,
                   u_core_estimate=np.nan, recall_core_at_core_estimate=np.nan)
        if "est_core" in trace:
            hit = np.flatnonzero(trace["est_core"].to_numpy() >= CONFIDENT)
            if len(hit):
                row["u_core_estimate"] = int(trace["u"].iloc[hit[0]])
                row["recall_core_at_core_estimate"] = run_metrics(trace.iloc[: hit[0] + 1], pareto, space, core)["final_recall_core"]
    if not np.isnan(m["u_full"]):
        row["rounds_full"] = int(trace.loc[trace["u"] >= m["u_full"], "round"].iloc[0])
    if "est_recall" in trace:
        hit = np.flatnonzero(trace["est_recall"].to_numpy() >= CONFIDENT)
        if len(hit):
            at = run_metrics(trace.iloc[: hit[0] + 1], pareto, space, core)
            row["u_confident"] = int(trace["u"].iloc[hit[0]])
            row["recall_confident"] = at["final_recall"]
            if core is not None:
                row["recall_core_confident"] = at["final_recall_core"]
    return row


def with_earlier_runs(runs: pd.DataFrame, path: Path, *, whole_methods: bool = True) -> pd.DataFrame:
    """`runs` and the rows of the earlier runs.csv at `path` for the methods `runs` does not have (a method
    rerun after a change of its code replaces its old rows; with `whole_methods=False` only its rows of the same
    table and seed, so a slow method can be run a table at a time); a new row takes the place of the earlier row
    of the same (table, method, q, seed) (q where the runs have it), so the file and its report keep their order."""
    keys = [k for k in ("table", "method", "q", "seed") if k in runs.columns]
    earlier = pd.read_csv(path)
    where = {key: k for k, key in enumerate(earlier[keys].itertuples(index=False, name=None))}
    if whole_methods:
        kept = earlier[~earlier["method"].isin(runs["method"].unique())]
    else:
        new = set(runs[keys].itertuples(index=False, name=None))
        kept = earlier[[key not in new for key in earlier[keys].itertuples(index=False, name=None)]]
    position = [where.get(key, len(earlier) + j) for j, key in enumerate(runs[keys].itertuples(index=False, name=None))]
    merged = pd.concat([kept.assign(_at=kept.index), runs.assign(_at=position)], ignore_index=True)
    merged = merged.sort_values("_at", kind="stable", ignore_index=True).drop(columns="_at")
    return merged[list(earlier.columns.union(runs.columns, sort=False))]


def publish(table: pd.DataFrame, text: str, out: Path | None, name: str) -> None:
    """Print the report `text`; with a folder `out`, also write `table` to out/name and the text to out/report.md."""
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / name, index=False)
        (out / "report.md").write_text(text)


def markdown(df: pd.DataFrame, digits: int = 1) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [f"{v:,.{digits}f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(c.replace("nan", "–") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def core_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs on tables with a non-empty core, with u to the core in `u_full`, the column the recovery summary and
    the paired comparison read (`pipeline.search.scoring.comparison`): both then score the core as they score P*."""
    if "core_size" not in runs.columns:
        return runs.iloc[:0]
    return runs[runs["core_size"] > 0].assign(u_full=lambda r: r["u_core"])


def without_core(runs: pd.DataFrame) -> str:
    """A line naming the tables that have no core (no `set_<metric>` column, or an empty one); "" where every one has."""
    missing = runs["table"].unique() if "core_size" not in runs.columns else runs.loc[~(runs["core_size"] > 0), "table"].unique()
    if not len(missing):
        return ""
    return f"\nNo core (no set_<metric> column, or an empty core), so no core columns: {', '.join(missing)}\n"


def paired_section(at_q: pd.DataFrame, reference: str, rng: np.random.Generator, title: str) -> list[str]:
    """`title` and the paired comparison of each method's censored u (`u_full`) with the reference's, over all tables
    and, where every group has at least 2 tables (the clusters of the bootstrap), per group."""
    both = []
    tables = at_q[at_q["method"] == reference].groupby("group")["table"].nunique()
    scopes = [("all tables", at_q.assign(group="all"))] + ([("per group", at_q)] if tables.min() >= 2 else [])
    for scope, frame in scopes:
        cmp = compare_to(frame, reference, ["group"], rng, ids=("table", "seed"), cluster=("table",))
        both.append(cmp.assign(scope=scope))
    cmp = pd.concat(both)[["scope", "group", "method", "reference", "mean_diff", "lo", "hi", "ratio", "verdict"]]
    return [title, markdown(cmp), "\n"]


def report(runs: pd.DataFrame, reference: str, rng: np.random.Generator, core_rng: np.random.Generator) -> str:
    """report.md (module docstring); the comparisons on the core draw from `core_rng`, so those on P* are as without a core."""
    parts = []
    capped = runs["u_full"].isna().mean() > 0.5  # a budget too small to recover P*: compare what is still missed
    for q, at_q in runs.groupby("q", sort=True):
        parts += [f"## Recovery (q = {q})\n", markdown(recovery_summary(at_q, ["group"]).merge(
            at_q.groupby("group", sort=False)["pareto_size"].mean().rename("mean |P*|").reset_index(), on="group"))]
        core = core_runs(at_q)
        if len(core):
            parts += [f"\n## Recovery of the core (q = {q}): u to every configuration with π ≥ 0.95 (u counts the core)\n",
                      markdown(recovery_summary(core, ["group"]).merge(
                          core.groupby("group", sort=False)["core_size"].mean().rename("mean |core|").reset_index(), on="group"))]
        if capped or reference not in set(at_q["method"]) or at_q["method"].nunique() < 2:
            continue
        parts += paired_section(at_q, reference, rng, f"\n## Censored u of each method minus {reference}'s at q = {q} "
                                "(95% cluster-bootstrap interval over tables)\n")
        if core["table"].nunique() >= 2 and reference in set(core["method"]):
            parts += paired_section(core, reference, core_rng, f"\n## Censored u to the core of each method minus {reference}'s "
                                    f"at q = {q} (95% cluster-bootstrap interval over tables)\n")
    parts.append(without_core(runs))
    if capped:
        parts.append(missed_report(runs, reference, rng))
    by_q = runs.groupby(["method", "q"], sort=False).agg(runs=("u_full", "size"), reached=("u_full", "count"),
                                                         u_mean=("u_full", "mean"), rounds_mean=("rounds_full", "mean"))
    if runs["q"].nunique() > 1:
        parts += ["\n## u and rounds to recall 1 against q (mean over runs that reach it)\n", markdown(by_q.reset_index())]
    calib = runs.dropna(subset=["recall_confident"])
    if len(calib):
        on_core = {} if "recall_core_confident" not in calib.columns else {
            "core_recall_mean": ("recall_core_confident", "mean"),
            "share_core_at_least_0_95": ("recall_core_confident", lambda r: float((r.dropna() >= CORE_GOAL).mean()))}
        table = calib.groupby(["method", "q"], sort=False).agg(
            runs=("recall_confident", "size"), u_at_estimate=("u_confident", "mean"), true_recall_mean=("recall_confident", "mean"),
            true_recall_min=("recall_confident", "min"),
            share_at_least_0_9=("recall_confident", lambda r: float((r >= 0.9).mean())), **on_core)
        parts += [f"\n## Calibration: the true Recall@P* at the first proposal where est_recall ≥ {CONFIDENT}\n",
                  markdown(table.reset_index(), 3)]
    parts += core_calibration(runs)
    return "".join(parts)


def core_calibration(runs: pd.DataFrame) -> list[str]:
    """The calibration table of the core estimate (est_core, `pipeline.search.stopping.core_recall`): at the first proposal where
    it reaches 0.95, u there, u to the whole core, and the true recall of the core, per group and over all runs."""
    if "recall_core_at_core_estimate" not in runs.columns:
        return []
    calib = runs.dropna(subset=["u_core_estimate"])
    if not len(calib):
        return []
    stats = dict(runs=("u_core_estimate", "size"), u_at_estimate_median=("u_core_estimate", "median"),
                 u_core_median=("u_core", "median"), core_recall_mean=("recall_core_at_core_estimate", "mean"),
                 core_recall_min=("recall_core_at_core_estimate", "min"),
                 share_at_least_0_95=("recall_core_at_core_estimate", lambda r: float((r >= CORE_GOAL).mean())))
    table = pd.concat([calib.groupby(["method", "q", "group"], sort=False).agg(**stats).reset_index(),
                       calib.assign(group="all").groupby(["method", "q", "group"], sort=False).agg(**stats).reset_index()])
    return [f"\n## Calibration on the core: the true recall of the core at the first proposal where est_core ≥ {CONFIDENT} "
            f"(goal: ≥ {CORE_GOAL} in at least 90% of runs)\n", markdown(table, 3)]


def missed_report(runs: pd.DataFrame, reference: str, rng: np.random.Generator) -> str:
    """Members of P* still unfound after the budget, per method (mean), and each method's paired difference
    with the reference's (cluster bootstrap over tables; smaller is better)."""
    runs = runs.assign(missed=runs["pareto_size"] * (1 - runs["final_recall"]))
    rows = []
    ref = runs[runs["method"] == reference].set_index(["table", "q", "seed"])["missed"]
    for (method, q), frame in runs.groupby(["method", "q"], sort=False):
        row = {"method": method, "q": q, "runs": len(frame), "unique_mean": frame["unique"].mean(),
               "recall_mean": frame["final_recall"].mean(), "missed_mean": frame["missed"].mean()}
        if method != reference and len(frame) >= 2:
            both = frame.set_index(["table", "q", "seed"])["missed"].to_frame("m").join(ref.rename("r"), how="inner")
            codes = pd.factorize(both.index.get_level_values("table"))[0]
            d = paired_difference(both["m"].to_numpy(), both["r"].to_numpy(), rng, groups=codes if codes.max() > 0 else None)
            verdict = {"a better": "better", "b better": "worse"}.get(str(d["verdict"]), str(d["verdict"]))
            row.update(diff=d["mean_diff"], lo=d["lo"], hi=d["hi"], verdict=verdict)
        rows.append(row)
    budget = int(runs["unique"].max())
    return (f"\n## Members of P* still missed after the budget (b ≤ {budget} proposals), each method minus {reference} "
            "(95% cluster-bootstrap interval over tables)\n" + markdown(pd.DataFrame(rows), 2))


def main(argv: list[str] | None = None) -> None:
    ensure_pinned()  # one BLAS thread per process, as the stages run: the numbers here come out the same elsewhere
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "real"), default="dev")
    ap.add_argument("--per-family", type=int, default=4, help="generated tables per family")
    ap.add_argument("--families", default=",".join(FAMILIES), help="the generated families to run, comma-separated")
    ap.add_argument("--seeds", type=int, default=3, help="search seeds per table and method")
    ap.add_argument("--methods", default="pnd,testnav,random,optuna_nsga2,optuna_tpe,optuna_gp,botorch_qlognehvi,epal")
    ap.add_argument("--batch-sizes", default="1", help="q values, comma-separated")
    ap.add_argument("--budget", type=int, default=None, help="proposals per run (default: 5·|Θ|)")
    ap.add_argument("--batch-methods", default=None, help="the methods run at q > 1 (default: the reference only)")
    ap.add_argument("--reference", default=None, help="the method the others are compared with (default: search.recommended)")
    ap.add_argument("--workers", type=int, default=0, help="worker processes (0: every core)")
    ap.add_argument("--out", type=Path, default=None, help="folder for runs.csv and report.md")
    ap.add_argument("--quick", action="store_true", help="1 table per family on a 4^3 lattice, 1 seed, GP-PND and Random only")
    ap.add_argument("--keep-others", action="store_true",
                    help="keep the rows of --out's runs.csv for the methods not run now, and report on all of them")
    args = ap.parse_args(argv)
    if args.keep_others and (args.out is None or not (args.out / "runs.csv").is_file()):
        ap.error(f"--keep-others needs an --out folder with a runs.csv from an earlier run; got {args.out}")
    methods = args.methods.split(",") if not args.quick else ["pnd", "random"]
    space = QUICK_SPACE if args.quick else None
    per_family, seeds = (1, 1) if args.quick else (args.per_family, args.seeds)
    split = "dev" if args.quick else args.split
    qs = [int(q) for q in args.batch_sizes.split(",")]
    reference = args.reference or recommended()
    batched = set(args.batch_methods.split(",")) if args.batch_methods else {reference}
    families = parse_families(ap, args.families)
    tables = problems(split, per_family, space, families)
    jobs = [dict(group=g, table=t, objectives=o, space=s, pareto=p, core=c, units=units, method=m, q=q, seed=seed,
                 budget=args.budget) for g, t, o, s, p, c, units in tables for m in methods for q in qs if q == 1 or m in batched for seed in range(seeds)]
    print(f"{len(jobs)} runs: {len(tables)} tables of split {split!r} ({', '.join(families) if split != 'real' else 'real pairs'}), "
          f"methods {methods}, q {qs}, {seeds} seeds", file=sys.stderr)
    runs = pd.DataFrame(list(map_runs(one_run, jobs, args.workers, desc=f"held-out {split}")))
    if args.keep_others:
        runs = with_earlier_runs(runs, args.out / "runs.csv")
    publish(runs, report(runs, reference, np.random.default_rng(0), np.random.default_rng(1)), args.out, "runs.csv")


if __name__ == "__main__":
    main()
