"""The retained-correct confidence decrease dM_k = E[M - M' | T = k] (Table 2) and its bounds.

* fixed classwise overlaps k_y (Ik and, by Theorem 1, I5): Eq. (6), score-subset extremes;
* marginal records (I0): all correspondences with positive support K > 0 (Appendix A.10), a ratio of
  separable class sums, solved exactly by Dinkelbach's parametric method on the same subproblem that
  A.10 bisects (min_k sum_y D_y(k_y) - r k_y), which terminates at the optimum rather than an interval;
* class-conditional independent matching: Eq. (14);
* the signed decomposition of dM_k - dM_k,ind into composition and within-class selection: Eq. (9).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.paired.identification.cell import Cell, as_cell
from pipeline.paired.identification.states import class_counts


def _prefix_sums(cell: Cell, values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ascending within-class cumulative sums of `values` over records in `mask`: (C, max+1) and counts."""
    cls = cell.cls[mask]
    vals = values[mask]
    order = np.lexsort((vals, cls))
    cls, vals = cls[order], vals[order]
    counts = np.bincount(cls, minlength=cell.n_classes)
    width = int(counts.max(initial=0))
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(len(cls)) - start[cls]
    table = np.zeros((cell.n_classes, width + 1))
    table[cls, rank + 1] = vals
    return np.cumsum(table, axis=1), counts


def _score_extremes(cell: Cell) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per class and k: min and max over k-subsets of sum(M) - sum(M'), shape (C, kmax+1); NaN where k is
    not a feasible overlap count. Also the feasible overlap range [max(0, a+b-n), min(a, b)] (Eq. 3)."""
    cx, a = _prefix_sums(cell, cell.clean_true, cell.clean_correct)
    cz, b = _prefix_sums(cell, cell.pert_true, cell.pert_correct)
    n = cell.per_class(None)
    klo, khi = np.maximum(0, a + b - n), np.minimum(a, b)
    kmax = int(khi.max(initial=0))
    ks = np.arange(kmax + 1)
    rows = np.arange(cell.n_classes)[:, None]
    valid = (ks >= klo[:, None]) & (ks <= khi[:, None])
    kk = np.minimum(ks, khi[:, None])
    small_x = cx[rows, kk]
    large_x = cx[rows, a[:, None]] - cx[rows, a[:, None] - kk]
    small_z = cz[rows, kk]
    large_z = cz[rows, b[:, None]] - cz[rows, b[:, None] - kk]
    low = np.where(valid, small_x - large_z, np.nan)
    high = np.where(valid, large_x - small_z, np.nan)
    return low, high, klo, khi


def dmk_bounds_fixed(cell: Cell, k: np.ndarray) -> tuple[float, float]:
    """Eq. (6): sharp [lower, upper] of dM_k with classwise overlaps k_y fixed; NaN when K = 0."""
    total = int(k.sum())
    if total == 0:
        return float("nan"), float("nan")
    low, high, _, _ = _score_extremes(cell)
    rows = np.arange(cell.n_classes)
    return float(low[rows, k].sum() / total), float(high[rows, k].sum() / total)


def _dinkelbach(num: np.ndarray, sense: int, tol: float) -> float:
    """Extreme (sense=-1 min, +1 max) of sum_y num[y, k_y] / sum_y k_y over feasible (non-NaN) k_y with K > 0."""
    ks = np.arange(num.shape[1])
    feasible = ~np.isnan(num)
    khi = np.where(feasible, ks, -1).max(axis=1)
    if khi.max(initial=0) <= 0:
        return float("nan")
    rows = np.arange(num.shape[0])
    choice = khi
    ratio = num[rows, choice].sum() / choice.sum()
    for _ in range(10_000):
        score = np.where(feasible, sense * (np.nan_to_num(num) - ratio * ks), -np.inf)
        choice = score.argmax(axis=1)
        gain = score[rows, choice].sum()
        if gain <= tol or choice.sum() == 0:
            break
        new = num[rows, choice].sum() / choice.sum()
        if sense * (new - ratio) <= 0:
            break
        ratio = new
    return float(ratio)


def dmk_bounds_marginal(cell: Cell) -> tuple[float, float]:
    """Appendix A.10: [lower, upper] of dM_k over all within-class correspondences with K > 0 (I0); NaN if none."""
    low, high, _, _ = _score_extremes(cell)
    tol = 1e-12 * max(1.0, float(cell.n_records))
    return _dinkelbach(low, -1, tol), _dinkelbach(high, +1, tol)


def _correct_means(cell: Cell) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    cc, pc = cell.clean_correct, cell.pert_correct
    a, b = cell.per_class(cc), cell.per_class(pc)
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = cell.class_sum(np.where(cc, cell.clean_true, 0.0)) / a
        mu_p = cell.class_sum(np.where(pc, cell.pert_true, 0.0)) / b
    return a, b, cell.per_class(None), mu, mu_p


def dmk_independent(cell: Cell) -> float:
    """Eq. (14): class-conditional independent counterpart of dM_k; NaN when no class has a_y b_y > 0."""
    a, b, n, mu, mu_p = _correct_means(cell)
    mass = a * b / n
    if mass.sum() == 0:
        return float("nan")
    diff = np.where(mass > 0, mu - mu_p, 0.0)
    return float((mass * diff).sum() / mass.sum())


def dmk_observed(cell: Cell) -> float:
    both = cell.clean_correct & cell.pert_correct
    if not both.any():
        return float("nan")
    return float((cell.clean_true[both] - cell.pert_true[both]).mean())


def confidence_decomposition(records: pd.DataFrame | Cell) -> dict[str, float]:
    """Eq. (9): dM_k - dM_k,ind = W (class composition) + V (within-class selection), on a cell with K > 0.

    Returns dM_k, dM_k_ind, W, V (all NaN when K = 0).
    """
    cell = as_cell(records)
    counts = class_counts(cell)
    a, b, n, mu, mu_p = _correct_means(cell)
    K = counts.k.sum()
    if K == 0:
        nan = float("nan")
        return {"dM_k": nan, "dM_k_ind": nan, "W": nan, "V": nan}
    bias = np.where(a * b > 0, mu - mu_p, 0.0)          # b^M_y
    both = cell.clean_correct & cell.pert_correct
    diff_sum = cell.class_sum(np.where(both, cell.clean_true - cell.pert_true, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(counts.k > 0, diff_sum / counts.k, 0.0)  # delta_y on surviving pairs
    mass = a * b / n
    weight_obs, weight_ind = counts.k / K, mass / mass.sum()
    composition = float(((weight_obs - weight_ind) * bias).sum())
    selection = float((weight_obs * (delta - bias))[counts.k > 0].sum())
    return {"dM_k": dmk_observed(cell), "dM_k_ind": dmk_independent(cell), "W": composition, "V": selection}
