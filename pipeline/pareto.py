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


def dominated_mask(points: np.ndarray, block: int = 512) -> np.ndarray:
    """True where a point is dominated: some other point is ≥ on every objective and > on one.

    Identical points never dominate each other, so ties are all kept or all dropped together.
    Blocked O(n²) comparison, exact for any number of objectives.
    """
    points = _check(points)
    n = len(points)
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
