"""Resampling intervals for equal-weight cell means of the screening metrics (Paired Evaluations, arXiv 2609.35583,
Appendix E: model groups, Tables 16, 19, 25; true classes, Tables 17, 20).

Choices where the paper leaves room: percentile intervals use numpy's default (linear) quantile of the
per-draw means, level 0.95; resampling draws that retain no defined cell of a stratum give NaN and are
left out of its quantiles.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.paired.screening.metrics import (
    BUDGETS,
    Stat,
    attach_tiers,
    cell_metrics,
    eligible_images,
    stat_name,
    stat_scores,
)


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
            rows.append({**dict(zip(strata, s_tuple)), "stat": stat_name(stat)})
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
    names = stat_scores(stats)
    merged = eligible_images(scores, real, names, split)
    merged["tier"] = attach_tiers(merged, tiers)
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
    rows = [{"source": source, "tier": tier, "stat": stat_name(stat), "metric": metric}
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
