"""Prospective screening metrics: AUROC, tie-prorated failure coverage and cell tables
(Paired Evaluations, arXiv 2609.35583, Sections 5.1-5.4, Appendix E.1; the resampling intervals over the cells are
`pipeline.paired.screening.resampling`).

A *cell* is one (model, real condition) pair of a source. Its images are the model's clean-correct
evaluation images; an image *fails* when its real-condition prediction is wrong. Every risk score is
oriented so that larger values mean riskier (Appendix E.1), and within a cell every score is evaluated on
the same images: those on which all requested scores are finite.

All metrics go through one weighted core: an image of weight w counts as w identical copies (ties among
them included). Unit weights give the plain metrics; class-resampling weights (Table 17/20) give the
metrics of the resampled multiset, so both uses share one implementation.

Choices where the paper leaves room, documented here once:

* budget k = max(1, round(q n)) rounds halves *up* (floor(q n + 1/2)), as
  `identification.thresholds.coverage_rank` and `records.table.split_dev_eval` do; Python's round()
  would round halves to even (round(2.5) == 2);
* coverage ties at the cutoff are prorated to their expectation under uniformly random tie-breaking
  (Appendix E.1, "Screening differences"), so a cut tie group contributes r/g of its failures when r of
  its g slots fall inside the budget.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

BUDGETS = (0.1, 0.2, 0.3)
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
# outcomes and cell tables
# --------------------------------------------------------------------------------------------------
def real_outcomes(real: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, image) of a real-condition record table: clean correctness and failure
    (wrong real-condition prediction), the outcome screened for (Section 5.1)."""
    out = real[["model", "group", "condition", "image_id", "split", "y"]].copy()
    out["clean_correct"] = (real["clean_pred"] == real["y"]).to_numpy()
    out["failed"] = (real["pert_pred"] != real["y"]).to_numpy()
    return out.reset_index(drop=True)


def stat_name(stat: Stat) -> str:
    """The name of a stat in interval tables: the score, or "a-b" for the paired difference a - b."""
    return stat if isinstance(stat, str) else f"{stat[0]}-{stat[1]}"


def stat_scores(stats: Iterable[Stat]) -> list[str]:
    """The distinct scores the stats read, in order of first use."""
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


def attach_tiers(df: pd.DataFrame, tiers: pd.DataFrame | None) -> pd.Series:
    """The tier of each row's condition from a `condition_tiers` table; "all" without one (an unknown
    condition raises)."""
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
    merged["tier"] = attach_tiers(merged, tiers)
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
