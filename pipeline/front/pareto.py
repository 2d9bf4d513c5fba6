"""Pareto utilities over objective tables, all objectives maximised (TestNav §3.3, ground truth §4.1)."""
from __future__ import annotations

import numpy as np


def _check(points: np.ndarray) -> np.ndarray:
    points = np.asarray(points, dtype=float)
    if points.ndim != 2:
        raise ValueError(f"objectives must be an (n_points, n_objectives) array, got shape {points.shape}")
    if np.isnan(points).any():
        row = int(np.argwhere(np.isnan(points))[0, 0])
        raise ValueError(f"objective row {row} contains NaN; every configuration needs finite objectives")
    return points


def _dominated_2d(points: np.ndarray) -> np.ndarray:
    """`dominated_mask` of two objectives by one sort, O(n log n): sorted by x descending, a point (x, y) is
    dominated iff a point of larger x has y' ≥ y, or a point of the same x has y' > y. Only comparisons, no
    arithmetic on the values, so the mask is the blocked comparison's exactly (numpy's tie rules: -0.0 = 0.0)."""
    x, y = points[:, 0], points[:, 1]
    order = np.lexsort((-y, -x))  # x descending, then y descending
    xs, ys = x[order], y[order]
    first = np.ones(len(xs), dtype=bool)
    first[1:] = xs[1:] != xs[:-1]  # where a run of equal x starts
    group = np.cumsum(first) - 1
    top = ys[first]  # each run's largest y (its first point)
    above = np.maximum.accumulate(top)  # the largest y over this run and every run of larger x
    earlier = group > 0
    out_sorted = top[group] > ys  # beaten within its run of equal x
    out_sorted[earlier] |= above[group[earlier] - 1] >= ys[earlier]  # a point of larger x is ≥ on y
    out = np.empty(len(xs), dtype=bool)
    out[order] = out_sorted
    return out


def dominated_mask(points: np.ndarray, block: int = 512) -> np.ndarray:
    """True where a point is dominated: some other point is ≥ on every objective and > on one.

    Identical points never dominate each other, so ties are all kept or all dropped together.
    Two objectives (every front of the pipeline): one sort (`_dominated_2d`); more: a blocked O(n²)
    comparison, exact for any number of objectives.
    """
    points = _check(points)
    n = len(points)
    if points.shape[1] == 2 and n:
        return _dominated_2d(points)
    out = np.zeros(n, dtype=bool)
    for start in range(0, n, block):
        chunk = points[start : start + block, None, :]  # (b, 1, k)
        geq = (points[None, :, :] >= chunk).all(axis=2)  # others ≥ chunk point
        gt = (points[None, :, :] > chunk).any(axis=2)
        out[start : start + block] = (geq & gt).any(axis=1)
    return out


def pareto_mask(points: np.ndarray) -> np.ndarray:
    """True for the non-dominated points (the Pareto set P* when `points` covers all of Θ)."""
    return ~dominated_mask(points)
