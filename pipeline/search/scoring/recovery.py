"""Recovery statistics of TestNav §4.2: how much search each method needs to recover all of P*.

Per benchmark, fidelity metric and method, over seeds: the unique configurations u and the proposals b
(budget) at which Recall@P* first reaches 1 (`run_metrics`' `u_full` and `b_full`), as mean and sample
standard deviation over the seeds that reach it and the number of seeds that do; u as a percentage of
|Θ| ("using 35.8%-89.3% of Θ"); the final recall; and the speed-up of the reference method (TestNav) over
each other method, on both axes.

Conventions (the paper leaves them open):

* Speed-up is a ratio of means: mean u_full (or b_full) of the other method over that of the reference,
  so 2.15 means the reference needs 2.15 times fewer. A ratio of means, not a mean of per-seed ratios,
  because seeds of different methods are not paired.
* It is defined only where both methods reach full recall in every seed (`reached == seeds`): a mean
  over only the seeds that happened to reach it would flatter a method that usually fails. Elsewhere
  it is NaN, shown as "–".
* Runs that never reach recall 1 are shown too: `u_cens_median` is the median over all seeds
  of the censored u, which counts such a run as |Θ| + 1 (worse than enumerating Θ;
  `pipeline.search.scoring.comparison.censored_u`), so a method that usually fails is not flattered by a mean
  over its few successes.
* Both axes are reported, because they can disagree: a method that re-proposes cached configurations
  (TestNav) spends budget b that buys no new u, while Random never repeats itself (b = u).
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from pipeline.search.scoring.comparison import censored_u
from pipeline.search.scoring.metrics import run_metrics
from pipeline.front.space import Space

KEYS = ["benchmark", "metric", "method"]
COLUMNS = [*KEYS, "seeds", "reached", "u_full_mean", "u_full_sd", "u_full_pct", "u_cens_median", "b_full_mean", "b_full_sd",
           "final_recall_mean", "final_recall_min", "speedup_u", "speedup_b", "space_size"]
CORE_COLUMNS = ["core_reached", "u_core_mean", "u_core_cens_median"]  # where the runs carry u_core (`run_metrics` with a core)


def recovery_runs(traces: Iterable[tuple[str, int, pd.DataFrame]], pareto: np.ndarray, space: Space, benchmark: str,
                  metric: str, core: np.ndarray | None = None) -> pd.DataFrame:
    """One row per run of a benchmark–metric pair from its traces, given as (method, seed, trace): the
    columns `recovery_table` reads (u_full, b_full, final_recall; NaN u/b where recall never reaches 1)
    and |Θ| as `space_size`; with `core` (a mask over indices), also u_core (NaN where never all of it)."""
    rows = []
    columns = [*KEYS, "seed", "u_full", "b_full", "final_recall", "space_size"] + (["u_core"] if core is not None else [])
    for method, seed, trace in traces:
        m = run_metrics(trace, pareto, space, core)
        rows.append({"benchmark": benchmark, "metric": metric, "method": method, "seed": int(seed), "space_size": space.size,
                     **{k: m[k] for k in columns if k in m}})
    return pd.DataFrame(rows, columns=columns)


def recovery_table(runs: pd.DataFrame, reference: str = "testnav", space_size: int | Mapping[str, int] | None = None) -> pd.DataFrame:
    """Recovery statistics per (benchmark, metric, method), in the order the runs first list them.

    `runs` has one row per run with benchmark, metric, method, seed, u_full, b_full, final_recall (as
    `recovery_runs` or the summary stage's runs.csv give them). |Θ| comes from a `space_size` column, or
    from `space_size` (one int, or one per benchmark). `speedup_u` / `speedup_b` are mean u_full / b_full
    of the row's method over the `reference` method's, where both reach full recall in every seed;
    NaN otherwise and on the reference's own row. Below 1, the reference is the slower of the two.
    """
    missing = [c for c in (*KEYS, "seed", "u_full", "b_full", "final_recall") if c not in runs.columns]
    if missing:
        raise ValueError(f"the run table lacks columns {missing}; it has {list(runs.columns)}")
    runs = runs.copy()
    if space_size is not None:
        sizes = space_size if isinstance(space_size, Mapping) else {b: space_size for b in runs["benchmark"].unique()}
        unknown = sorted(set(runs["benchmark"]) - set(sizes))
        if unknown:
            raise ValueError(f"no |Θ| given for benchmarks {unknown}")
        runs["space_size"] = runs["benchmark"].map(sizes)
    elif "space_size" not in runs.columns:
        raise ValueError("|Θ| is unknown: give space_size, or a space_size column in the runs")
    runs["u_cens"] = censored_u(runs["u_full"].to_numpy(dtype=float), runs["space_size"].to_numpy())
    core = "u_core" in runs.columns
    extra = {}
    if core:
        runs["u_core_cens"] = censored_u(runs["u_core"].to_numpy(dtype=float), runs["space_size"].to_numpy())
        extra = dict(core_reached=("u_core", "count"), u_core_mean=("u_core", "mean"), u_core_cens_median=("u_core_cens", "median"))
    g = runs.groupby(KEYS, sort=False)
    out = g.agg(seeds=("seed", "nunique"), reached=("u_full", "count"), u_full_mean=("u_full", "mean"), u_full_sd=("u_full", "std"),
                b_full_mean=("b_full", "mean"), b_full_sd=("b_full", "std"), final_recall_mean=("final_recall", "mean"),
                final_recall_min=("final_recall", "min"), space_size=("space_size", "first"),
                u_cens_median=("u_cens", "median"), **extra).reset_index()
    out["u_full_pct"] = 100.0 * out["u_full_mean"] / out["space_size"]
    out["speedup_u"] = np.nan
    out["speedup_b"] = np.nan
    complete = out["reached"] == out["seeds"]
    for (bench, metric), idx in out.groupby(["benchmark", "metric"], sort=False).groups.items():
        ref = out.index[(out["benchmark"] == bench) & (out["metric"] == metric) & (out["method"] == reference)]
        if len(ref) == 0 or not complete[ref[0]]:
            continue
        others = [i for i in idx if i != ref[0] and complete[i]]
        out.loc[others, "speedup_u"] = out.loc[others, "u_full_mean"] / out.at[ref[0], "u_full_mean"]
        out.loc[others, "speedup_b"] = out.loc[others, "b_full_mean"] / out.at[ref[0], "b_full_mean"]
    return out[COLUMNS + (CORE_COLUMNS if core else [])]


def recovery_markdown(table: pd.DataFrame, labels: Mapping[str, str] | None = None, reference: str = "TestNav") -> str:
    """`recovery_table` as Markdown: one row per benchmark, metric and method; mean ± sd over the seeds
    that reach full recall, "–" where none does (or where a speed-up is undefined)."""
    labels = dict(labels or {})

    def pm(mean: float, sd: float) -> str:
        if np.isnan(mean):
            return "–"
        return f"{mean:,.1f} ± {sd:,.1f}" if not np.isnan(sd) else f"{mean:,.1f}"

    def cens(median: float, size: int) -> str:
        return "> \\|Θ\\| (never)" if median > size else f"{median:,.0f}"

    def num(value: float, fmt: str) -> str:
        return "–" if np.isnan(value) else format(value, fmt)

    core = "u_core_cens_median" in table.columns
    lines = [f"| Benchmark | Metric | Method | Seeds at recall 1 | u to recall 1 | u / \\|Θ\\| (%) | Median u, all seeds | b to recall 1 | "
             f"Final recall | Speed-up of {reference} (u) | Speed-up of {reference} (b) |"
             + (" Seeds at the whole core | Median u to the core, all seeds |" if core else ""),
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if core else "")]
    for r in table.itertuples():
        lines.append((f"| {r.benchmark} | {r.metric} | {labels.get(r.method, r.method)} | {r.reached}/{r.seeds} | "
                      f"{pm(r.u_full_mean, r.u_full_sd)} | {num(r.u_full_pct, '.1f')} | {cens(r.u_cens_median, r.space_size)} | "
                      f"{pm(r.b_full_mean, r.b_full_sd)} | "
                      f"{r.final_recall_mean:.3f} | {num(r.speedup_u, '.2f')}× | {num(r.speedup_b, '.2f')}× |"
                      + (f" {r.core_reached}/{r.seeds} | {cens(r.u_core_cens_median, r.space_size)} |" if core else ""))
                     .replace("–×", "–"))
    return "\n".join(lines) + "\n"
