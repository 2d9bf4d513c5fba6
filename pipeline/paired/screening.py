"""Prospective screening metrics: AUROC, tie-prorated failure coverage, cell tables and resampling intervals
(papers/paired-evaluations.md, Sections 3.3 and 5.1-5.4, Appendix E.1).

A *cell* is one (model, real condition) pair of a source. Its images are the model's clean-correct
evaluation images; an image *fails* when its real-condition prediction is wrong. Every risk score is
oriented so that larger values mean riskier (Appendix E.1), and within a cell every score is evaluated on
the same images: those on which all requested scores are finite.

All metrics go through one weighted core: an image of weight w counts as w identical copies (ties among
them included). Unit weights give the plain metrics; class-resampling weights (Table 17/20) give the
metrics of the resampled multiset, so both uses share one implementation.

Choices where the paper leaves room, documented here once:

* budget k = max(1, round(q n)) rounds halves *up* (floor(q n + 1/2)), as `thresholds.coverage_rank` and
  `records.split_dev_eval` do; Python's round() would round halves to even (round(2.5) == 2);
* coverage ties at the cutoff are prorated to their expectation under uniformly random tie-breaking
  (Appendix E.1, "Screening differences"), so a cut tie group contributes r/g of its failures when r of
  its g slots fall inside the budget;
* percentile intervals use numpy's default (linear) quantile of the per-draw means, level 0.95;
* resampling draws that retain no defined cell of a stratum give NaN and are left out of its quantiles.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

BUDGETS = (0.1, 0.2, 0.3)
TIER_CUTS = (0.4, 0.2)          # mild: accuracy >= 0.4; severe: [0.2, 0.4); extreme: < 0.2 (Section 3.3)
TIERS = ("mild", "severe", "extreme")
Stat = str | tuple[str, str]     # a score name, or (a, b) for the paired difference a - b


# --------------------------------------------------------------------------------------------------
# weighted core
# --------------------------------------------------------------------------------------------------
def budget_size(n, q: float):
    """k = max(1, round(q n)) with halves rounded up (Appendix E.1, Table 21); `n` may be an array."""
    if not 0.0 < q <= 1.0:
        raise ValueError(f"budget q must lie in (0, 1], got {q}")
    return np.maximum(1, np.floor(q * np.asarray(n, dtype=float) + 0.5))


def _check_cell(risk, failed) -> tuple[np.ndarray, np.ndarray]:
    risk = np.asarray(risk, dtype=float)
    failed = np.asarray(failed)
    if risk.ndim != 1 or risk.shape != failed.shape:
        raise ValueError(f"risk {risk.shape} and failed {failed.shape} must be 1-d arrays of one length")
    if np.isnan(risk).any():
        raise ValueError("risk contains NaN")
    if failed.dtype != bool:
        if not np.isin(failed, (0, 1)).all():
            raise ValueError("failed must hold booleans or 0/1")
        failed = failed.astype(bool)
    return risk, failed


def _tie_sums(risk: np.ndarray, failed: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted failures P and non-failures N per tie group of `risk`, groups in ascending risk: (B, g) each."""
    _, inverse = np.unique(risk, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
    w = weights[:, order]
    pos = np.add.reduceat(np.where(failed[order], w, 0.0), starts, axis=1)
    return pos, np.add.reduceat(w, starts, axis=1) - pos


def cell_metrics(risk, failed, weights: np.ndarray | None = None,
                 budgets: Sequence[float] = BUDGETS) -> dict[str, np.ndarray]:
    """AUROC, coverage per budget and the failure totals of one cell, for each row of `weights` (B, n).

    Returns {"auroc": (B,), "coverage": (B, Q), "n": (B,), "n_fail": (B,)}; AUROC is NaN when a class
    has zero weight, coverage when no failure has weight. Without weights, B = 1 with unit weights.
    """
    risk, failed = _check_cell(risk, failed)
    w = np.ones((1, len(risk))) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    if w.shape[1] != len(risk):
        raise ValueError(f"weights {w.shape} do not match {len(risk)} images")
    qs = np.asarray(budgets, dtype=float)
    if len(risk) == 0:
        zero = np.zeros(len(w))
        return {"auroc": zero + np.nan, "coverage": np.full((len(w), len(qs)), np.nan), "n": zero, "n_fail": zero}
    pos, neg = _tie_sums(risk, failed, w)
    n_pos, n_neg = pos.sum(1), neg.sum(1)
    below = np.cumsum(neg, axis=1) - neg                        # non-failures strictly below each group
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (pos * (below + 0.5 * neg)).sum(1) / (n_pos * n_neg)
    auc = np.where((n_pos > 0) & (n_neg > 0), auc, np.nan)
    tot, fail = (pos + neg)[:, ::-1], pos[:, ::-1]               # descending risk for selection
    cum_tot, cum_fail = np.cumsum(tot, axis=1), np.cumsum(fail, axis=1)
    n, rows = cum_tot[:, -1], np.arange(len(w))
    coverage = np.full((len(w), len(qs)), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        for i, q in enumerate(qs):
            k = budget_size(n, q)
            # the group holding the k-th selected unit: everything before it is taken, it is prorated
            cut = np.minimum((cum_tot < k[:, None]).sum(1), tot.shape[1] - 1)
            t_cut, f_cut = tot[rows, cut], fail[rows, cut]
            found = cum_fail[rows, cut] - f_cut + (k - (cum_tot[rows, cut] - t_cut)) * f_cut / t_cut
            coverage[:, i] = np.where(n_pos > 0, found / n_pos, np.nan)
    return {"auroc": auc, "coverage": coverage, "n": n, "n_fail": n_pos}


def auroc(risk, failed) -> float:
    """P(risk of a failed image > risk of a non-failed image), ties counting one half (Section 5.1,
    Mann-Whitney form); NaN when either class is absent (an undefined cell, Appendix E.1)."""
    return float(cell_metrics(risk, failed, budgets=())["auroc"][0])


def failure_coverage(risk, failed, q: float) -> float:
    """Share of all failures among the k = max(1, round(q n)) highest-risk images, a tie group cut by the
    budget prorated to its expectation under random tie-breaking (Section 5.2, Appendix E.1); NaN
    without failures."""
    return float(cell_metrics(risk, failed, budgets=(q,))["coverage"][0, 0])


def coverage_ceiling(n: int, n_fail: int, q: float) -> float:
    """Attainable coverage min(1, k / n_fail) with k = max(1, round(q n)) (Table 21); NaN when n_fail = 0."""
    if n_fail <= 0:
        return float("nan")
    if n_fail > n:
        raise ValueError(f"n_fail {n_fail} exceeds n {n}")
    return float(min(1.0, budget_size(n, q) / n_fail))


def coverage_of_ceiling(risk, failed, q: float) -> float:
    """Failure coverage as a fraction of its attainable ceiling (Table 21, last column, per cell)."""
    risk, failed = _check_cell(risk, failed)
    return failure_coverage(risk, failed, q) / coverage_ceiling(len(risk), int(failed.sum()), q)


# --------------------------------------------------------------------------------------------------
# outcomes, tiers and cell tables
# --------------------------------------------------------------------------------------------------
def real_outcomes(real: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, image) of a real-condition record table: clean correctness and failure
    (wrong real-condition prediction), the outcome screened for (Section 5.1)."""
    out = real[["model", "group", "condition", "image_id", "split", "y"]].copy()
    out["clean_correct"] = (real["clean_pred"] == real["y"]).to_numpy()
    out["failed"] = (real["pert_pred"] != real["y"]).to_numpy()
    return out.reset_index(drop=True)


def condition_tiers(real: pd.DataFrame, split: str = "dev", cuts: tuple[float, float] = TIER_CUTS) -> pd.DataFrame:
    """Tier of each real condition from its accuracy on `split` images (all images, not only clean-correct),
    averaged over models with equal weight: mild >= cuts[0] > severe >= cuts[1] > extreme (Section 3.3)."""
    part = real[real["split"] == split]
    if part.empty:
        raise ValueError(f"no {split!r} records to define tiers from")
    correct = (part["pert_pred"] == part["y"]).rename("accuracy")
    per_model = correct.groupby([part["condition"], part["model"]]).mean()
    acc = per_model.groupby(level=0).mean()
    tier = np.where(acc >= cuts[0], "mild", np.where(acc >= cuts[1], "severe", "extreme"))
    return pd.DataFrame({"condition": acc.index.astype(str), "accuracy": acc.to_numpy(), "tier": tier})


def _stat_name(stat: Stat) -> str:
    return stat if isinstance(stat, str) else f"{stat[0]}-{stat[1]}"


def _stat_scores(stats: Iterable[Stat]) -> list[str]:
    names: list[str] = []
    for s in stats:
        for name in ((s,) if isinstance(s, str) else s):
            if name not in names:
                names.append(name)
    return names


def eligible_images(scores: pd.DataFrame, real: pd.DataFrame, score_names: Sequence[str],
                    split: str = "eval") -> pd.DataFrame:
    """Clean-correct `split` images of every real cell joined to their scores (one row per cell image).

    Every such image must have a score row of the same model and split, and no score row may belong to
    an image that is clean-wrong or in the other split of the real records (inconsistent inputs raise).
    """
    missing = [c for c in ("model", "image_id", "split", *score_names) if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lack columns {missing}")
    if scores.duplicated(["model", "image_id"]).any():
        raise ValueError("scores hold more than one row for a (model, image)")
    out = real_outcomes(real)
    clean = out.drop_duplicates(["model", "image_id"])
    check = scores[["model", "image_id", "split"]].merge(clean, on=["model", "image_id"], how="inner",
                                                         suffixes=("", "_real"))
    bad = (check["split"] != check["split_real"]) | ~check["clean_correct"]
    if bad.any():
        row = check[bad].iloc[0]
        raise ValueError(f"score row for model {row['model']!r}, image {row['image_id']!r} is not a clean-correct "
                         f"{row['split_real']!r} image of the real records")
    cell = out[(out["split"] == split) & out["clean_correct"]]
    merged = cell.merge(scores[["model", "image_id", *score_names]], on=["model", "image_id"], how="left",
                        indicator=True)
    if (merged["_merge"] != "both").any():
        row = merged[merged["_merge"] != "both"].iloc[0]
        raise ValueError(f"no score for clean-correct {split!r} image {row['image_id']!r} of model {row['model']!r}")
    return merged.drop(columns="_merge").sort_values(["model", "condition", "image_id"], kind="stable")


def _attach_tiers(df: pd.DataFrame, tiers: pd.DataFrame | None) -> pd.Series:
    if tiers is None:
        return pd.Series("all", index=df.index)
    tier = df["condition"].map(tiers.set_index("condition")["tier"])
    if tier.isna().any():
        raise ValueError(f"condition {df.loc[tier.isna(), 'condition'].iloc[0]!r} has no tier")
    return tier


def evaluate_cells(scores: pd.DataFrame, real: pd.DataFrame, score_names: Sequence[str],
                   tiers: pd.DataFrame | None = None, source: str = "", budgets: Sequence[float] = BUDGETS,
                   split: str = "eval") -> pd.DataFrame:
    """One row per (model, condition, score): n images of the cell's common set, failures, failure share p,
    AUROC, and per budget the coverage, its ceiling min(1, k/n_fail) and their ratio (Tables 16, 18, 21).

    The common set of a cell holds its clean-correct `split` images whose requested scores are all finite
    (Appendix E.1: identical image sets for every score). Undefined metrics are NaN.
    """
    merged = eligible_images(scores, real, score_names, split)
    merged["tier"] = _attach_tiers(merged, tiers)
    rows = []
    for (model, group, condition, tier), g in merged.groupby(["model", "group", "condition", "tier"], sort=True):
        risks = g[list(score_names)].to_numpy(float)
        keep = np.isfinite(risks).all(1)
        failed = g["failed"].to_numpy()[keep]
        n, n_fail = int(keep.sum()), int(failed.sum())
        ceilings = [coverage_ceiling(n, n_fail, q) for q in budgets]
        for j, name in enumerate(score_names):
            m = cell_metrics(risks[keep, j], failed, budgets=budgets)
            row = {"source": source, "model": model, "group": group, "condition": condition, "tier": tier,
                   "score": name, "n": n, "n_fail": n_fail, "p": n_fail / n if n else np.nan,
                   "auroc": m["auroc"][0]}
            for i, q in enumerate(budgets):
                row[f"coverage_{q:g}"] = m["coverage"][0, i]
                row[f"ceiling_{q:g}"] = ceilings[i]
                row[f"of_ceiling_{q:g}"] = m["coverage"][0, i] / ceilings[i]
            rows.append(row)
    return pd.DataFrame(rows)


def _metric_columns(cells: pd.DataFrame) -> list[str]:
    fixed = {"source", "model", "group", "condition", "tier", "score", "n", "n_fail"}
    return [c for c in cells.columns if c not in fixed]


def summarize_cells(cells: pd.DataFrame, by: Sequence[str] = ("source", "tier", "score")) -> pd.DataFrame:
    """Means of every cellwise metric with cells weighted equally within `by` (Table 18/21: means of
    cellwise ratios), skipping undefined cells; `cells` and `undefined` count cells with and without AUROC."""
    metrics = _metric_columns(cells)
    grouped = cells.groupby(list(by), sort=True)
    out = grouped[metrics].mean()
    out["cells"] = grouped["auroc"].count()
    out["undefined"] = grouped["auroc"].size() - out["cells"]
    return out.reset_index()


def paired_cells(cells: pd.DataFrame, a: str, b: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Per cell, metric of score `a` minus that of score `b` (paired on identical image sets)."""
    metrics = list(metrics or [c for c in _metric_columns(cells) if c.startswith(("auroc", "coverage_"))])
    key = ["source", "model", "group", "condition", "tier"]
    left = cells[cells["score"] == a].set_index(key)[metrics]
    right = cells[cells["score"] == b].set_index(key)[metrics]
    if not left.index.equals(right.index):
        right = right.reindex(left.index)
    out = (left - right).reset_index()
    out.insert(len(key), "score", f"{a}-{b}")
    return out


# --------------------------------------------------------------------------------------------------
# resampling
# --------------------------------------------------------------------------------------------------
def _quantiles(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column; all-NaN columns give NaN (numpy's warning silenced)."""
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(draws, [alpha, 1.0 - alpha], axis=0)
    return lo, hi


def _draw_counts(rng: np.random.Generator, n_draws: int, n_units: int) -> np.ndarray:
    """(B, n_units) multiplicities of n_units units drawn with replacement, B times."""
    idx = rng.integers(0, n_units, size=(n_draws, n_units))
    counts = np.zeros((n_draws, n_units))
    np.add.at(counts, (np.repeat(np.arange(n_draws), n_units), idx.ravel()), 1.0)
    return counts


def group_bootstrap(cells: pd.DataFrame, metric: str, stats: Sequence[Stat], rng: np.random.Generator,
                    n_draws: int = 2000, level: float = 0.95, strata: Sequence[str] = ("source", "tier"),
                    return_draws: bool = False):
    """Percentile intervals for equal-weight cell means by resampling the model groups (Appendix E:
    ten groups, 2,000 draws). One draw of groups is shared by every stratum and stat; a group drawn
    c times contributes its defined cells c times. A stat is a score or a pair (a, b) for a - b per cell.

    Returns a table (strata..., stat, estimate, lo, hi, cells) and, with `return_draws`, the (B, rows)
    array of per-draw means in the table's row order.
    """
    groups = np.array(sorted(cells["group"].astype(str).unique()))
    key = [*strata, "model", "group", "condition"]
    wide = cells.set_index([*key, "score"])[metric].unstack("score")
    gidx = np.searchsorted(groups, wide.index.get_level_values("group").astype(str))
    strat_codes, strat_keys = pd.factorize(wide.index.droplevel(["model", "group", "condition"]), sort=True)
    rows, sums, counts = [], [], []
    for stat in stats:
        if isinstance(stat, str):
            values = wide[stat].to_numpy(float)
        else:
            values = wide[stat[0]].to_numpy(float) - wide[stat[1]].to_numpy(float)
        for code, s in enumerate(strat_keys):
            mask = (strat_codes == code) & np.isfinite(values)
            s_tuple = s if isinstance(s, tuple) else (s,)
            rows.append({**dict(zip(strata, s_tuple)), "stat": _stat_name(stat)})
            sums.append(np.bincount(gidx[mask], values[mask], minlength=len(groups)))
            counts.append(np.bincount(gidx[mask], minlength=len(groups)).astype(float))
    S, N = np.array(sums).T, np.array(counts).T                      # (G, rows)
    C = _draw_counts(rng, n_draws, len(groups))                        # (B, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (C @ S) / (C @ N)
        estimate = S.sum(0) / N.sum(0)
    lo, hi = _quantiles(draws, level)
    table = pd.DataFrame(rows).assign(estimate=estimate, lo=lo, hi=hi, cells=N.sum(0).astype(int))
    return (table, draws) if return_draws else table


def class_bootstrap(scores: pd.DataFrame, real: pd.DataFrame, stats: Sequence[Stat], rng: np.random.Generator,
                    tiers: pd.DataFrame | None = None, source: str = "", n_draws: int = 200,
                    budgets: Sequence[float] = BUDGETS, level: float = 0.95, split: str = "eval",
                    return_draws: bool = False):
    """Percentile intervals from resampling the true classes of one source (Appendix E, Tables 17, 20):
    one draw of classes (with replacement) weights the images of every cell of the source; AUROC and
    tie-prorated coverage are recomputed on the weighted images, and a cell whose weighted failures or
    non-failures vanish is skipped for that draw. Estimates are the plain (unweighted) cell means.

    Classes are those of the source's `split` records. Returns a table (source, tier, stat, metric,
    estimate, lo, hi, cells = mean cells retained per draw) and optionally the (B, rows) draws.
    """
    names = _stat_scores(stats)
    merged = eligible_images(scores, real, names, split)
    merged["tier"] = _attach_tiers(merged, tiers)
    classes = np.unique(real.loc[real["split"] == split, "y"].to_numpy())
    counts = _draw_counts(rng, n_draws, len(classes))
    metrics = ["auroc", *[f"coverage_{q:g}" for q in budgets]]
    tier_keys = sorted(merged["tier"].unique())
    shape = (len(tier_keys), len(stats), len(metrics))
    acc = {"draw": (np.zeros((*shape, n_draws)), np.zeros((*shape, n_draws))),
           "point": (np.zeros((*shape, 1)), np.zeros((*shape, 1)))}
    for (tier, _, _), g in merged.groupby(["tier", "model", "condition"], sort=True):
        t = tier_keys.index(tier)
        risks = g[names].to_numpy(float)
        keep = np.isfinite(risks).all(1)
        failed = g["failed"].to_numpy()[keep]
        weights = {"draw": counts[:, np.searchsorted(classes, g["y"].to_numpy()[keep])], "point": None}
        for label, (sums, kept) in acc.items():
            res = {}
            for j, name in enumerate(names):
                m = cell_metrics(risks[keep, j], failed, weights[label], budgets)
                res[name] = np.column_stack([m["auroc"], m["coverage"]]).T           # (metrics, B)
            for s, stat in enumerate(stats):
                value = res[stat] if isinstance(stat, str) else res[stat[0]] - res[stat[1]]
                ok = np.isfinite(value)
                sums[t, s] += np.where(ok, value, 0.0)
                kept[t, s] += ok
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = acc["draw"][0] / acc["draw"][1]
        estimate = acc["point"][0][..., 0] / acc["point"][1][..., 0]
    kept = acc["draw"][1]
    rows = [{"source": source, "tier": tier, "stat": _stat_name(stat), "metric": metric}
            for tier in tier_keys for stat in stats for metric in metrics]
    flat = draws.reshape(-1, n_draws).T                                   # (B, rows)
    lo, hi = _quantiles(flat, level)
    table = pd.DataFrame(rows).assign(estimate=estimate.ravel(), lo=lo, hi=hi,
                                      cells=kept.reshape(-1, n_draws).mean(1))
    return (table, flat) if return_draws else table


def interval_text(table: pd.DataFrame, stat: str, tier: str, metric: str | None = None) -> str:
    """"+estimate [lo, hi]" of one stat of an interval table (`group_bootstrap`'s, of one metric, or
    `class_bootstrap`'s with its `metric` column); "" when absent or undefined."""
    mask = (table["stat"] == stat) & (table["tier"] == tier)
    if metric is not None:
        mask &= table["metric"] == metric
    part = table[mask]
    if part.empty or not np.isfinite(part["estimate"].iloc[0]):
        return ""
    r = part.iloc[0]
    return f"{r['estimate']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]"
