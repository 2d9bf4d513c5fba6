"""Pareto dominance, all objectives maximised (TestNav §3.3, ground truth §4.1): the one two-objective kernel, in a
batched (`front_mask`), a query (`dominated_by`) and an incremental form (`add_to_front`), and the masks over a table."""
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


def front_mask(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Non-dominated flags of each row of (K, m) arrays of two objectives (both maximised), the batched sweep every
    two-objective front goes through: per row, sorted by the first objective descending and the second descending,
    a point is on the front iff its second objective is the largest among the points with its first and exceeds
    the running maximum over the points with a larger first. Only comparisons, so the flags are the blocked
    comparison's exactly (numpy's tie rules: -0.0 = 0.0); identical points are on the front together or off it
    together."""
    first, second = np.atleast_2d(first), np.atleast_2d(second)
    order = np.lexsort((-second, -first), axis=-1)
    d, r = np.take_along_axis(first, order, axis=-1), np.take_along_axis(second, order, axis=-1)
    position = np.arange(d.shape[1])
    starts = np.ones(d.shape, dtype=bool)
    starts[:, 1:] = d[:, 1:] != d[:, :-1]
    group = np.maximum.accumulate(np.where(starts, position, 0), axis=1)  # first point of each tie group
    best = np.maximum.accumulate(r, axis=1)
    above = np.where(group > 0, np.take_along_axis(best, np.maximum(group - 1, 0), axis=1), -np.inf)
    keep = (r == np.take_along_axis(r, group, axis=1)) & ((group == 0) | (r > above))
    out = np.empty_like(keep)
    np.put_along_axis(out, order, keep, axis=1)
    return out


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(values[lo..hi]) per pair (inclusive), −inf where lo > hi."""
    out = np.full(len(lo), -np.inf)
    ok = lo <= hi
    if ok.any():
        padded = np.append(values, -np.inf)
        bounds = np.column_stack([lo[ok], hi[ok] + 1]).ravel()
        out[ok] = np.maximum.reduceat(padded, bounds)[::2]
    return out


def dominated_by(points: np.ndarray, queries: np.ndarray, own: np.ndarray | None = None) -> np.ndarray:
    """The query form: (k,) True where some row of `points` (m, 2) dominates query k of `queries` (k, 2) (≥ on
    both, > on one, both maximised), not counting `points[own[k]]` where `own` is given (−1: none). One sort,
    O((m + k) log m)."""
    out = np.zeros(len(queries), dtype=bool)
    if not len(points) or not len(queries):
        return out
    order = np.argsort(-points[:, 0], kind="stable")
    xs, ys = -points[order, 0], points[order, 1]  # xs ascending: points by x descending
    best = np.maximum.accumulate(ys)  # best y over the first k + 1 points (largest x)
    top = np.maximum.accumulate(np.where(ys == best, np.arange(len(ys)), 0))  # where that best is attained
    place = np.full(len(points), -1)
    place[order] = np.arange(len(points))
    mine = np.full(len(queries), -1) if own is None else np.where(own >= 0, place[np.maximum(own, 0)], -1)
    for side, strict in (("left", False), ("right", True)):
        last = np.searchsorted(xs, -queries[:, 0], side=side) - 1  # left: x > q.x; right: x ≥ q.x
        valid = last >= 0
        k = np.maximum(last, 0)
        y = np.where(valid, best[k], -np.inf)
        clash = valid & (mine >= 0) & (top[k] == mine)  # the best point is the query's own: the next best
        if clash.any():
            before = np.where(mine[clash] > 0, best[np.maximum(mine[clash] - 1, 0)], -np.inf)
            y[clash] = np.maximum(before, _range_max(ys, mine[clash] + 1, k[clash]))
        out |= (y > queries[:, 1]) if strict else (y >= queries[:, 1])
    return out


def add_to_front(front: np.ndarray, point: np.ndarray) -> np.ndarray:
    """The incremental form: the non-dominated points of `front` (m, 2) ∪ {point} (both objectives maximised; a
    point equal to a front point is kept beside it)."""
    v = np.asarray(point, dtype=float).reshape(1, 2)
    if dominated_by(front, v)[0]:
        return front
    return np.vstack([front[~dominated_by(v, front)], v])


def dominated_mask(points: np.ndarray, block: int = 512) -> np.ndarray:
    """True where a point is dominated: some other point is ≥ on every objective and > on one.

    Identical points never dominate each other, so ties are all kept or all dropped together.
    Two objectives (every front of the pipeline): one sort (`front_mask`); more: a blocked O(n²)
    comparison, exact for any number of objectives.
    """
    points = _check(points)
    n = len(points)
    if points.shape[1] == 2 and n:
        return ~front_mask(points[:, 0], points[:, 1])[0]
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
