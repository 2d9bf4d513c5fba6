"""The wrong–wrong block of a class under five-state information I5 (Definition 1, Appendix A.6).

With the observed counts (h, r, s, w, k) fixed, a within-class correspondence has a correct–correct
block (k pairs), a correct→wrong block (h pairs), a wrong→correct block (r pairs) and a wrong–wrong block
of s + w pairs, exactly s of which keep the same wrong label. The correct records are free inside their
blocks (the symmetry of Appendix A.3); the only constraint I5 adds over Ik is which wrong perturbed
records can sit in the wrong–wrong block, and therefore which are left for the correct→wrong block.

Two exact computations over record *types* (wrong label, and a binary mark such as "accepted"):

* `mark_range`: the smallest and largest number of marked wrong perturbed records that the wrong–wrong
  block can hold. It is an integer program over per-label counts (S_c same-label pairs, D_c changed-label
  pairs), solved exactly by dynamic programming over labels. Changed-label pairs exist iff, for the clean
  wrong records chosen for them (alpha_c per label), alpha_c + D_c <= w for every label (Hall's condition
  for a perfect matching that avoids same-label edges), so feasibility is sum_c min(m_c - S_c, w - D_c) >= w.
  No general library solves this family exactly in microseconds, hence the small DP (numba).
* `hblock_probabilities`: under the uniform distribution over feasible I5 correspondences (the
  feasible-mean rule of Appendix D), the probability that a wrong perturbed record of a given label sits in
  the correct→wrong block. It counts partial matchings with exactly s same-label edges by inclusion–exclusion
  in exact integer arithmetic: P(record q outside the wrong–wrong block) = T(records without q) / T(all).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

import numpy as np
from numba import njit

_NEG = -(1 << 40)
_POS = 1 << 40


@njit(cache=True)
def _mark_range_dp(m: np.ndarray, p1: np.ndarray, p0: np.ndarray, s: int, w: int) -> tuple[int, int]:
    """Min and max of sum_c mu_c over feasible (S_c, D_c); state (sum S, sum D, capped sum of min(m-S, w-D))."""
    hi = np.full((s + 1, w + 1, w + 1), _NEG, dtype=np.int64)
    lo = np.full((s + 1, w + 1, w + 1), _POS, dtype=np.int64)
    hi[0, 0, 0] = 0
    lo[0, 0, 0] = 0
    for c in range(m.shape[0]):
        p = p1[c] + p0[c]
        nhi = np.full((s + 1, w + 1, w + 1), _NEG, dtype=np.int64)
        nlo = np.full((s + 1, w + 1, w + 1), _POS, dtype=np.int64)
        for a in range(s + 1):
            for d in range(w + 1):
                for kap in range(w + 1):
                    if hi[a, d, kap] == _NEG:
                        continue
                    for sc in range(min(m[c], p, s - a) + 1):
                        for dc in range(min(p - sc, w - d) + 1):
                            cap = min(m[c] - sc, w - dc)
                            k2 = min(w, kap + cap)
                            t = sc + dc
                            gmax = min(p1[c], t)
                            gmin = max(0, t - p0[c])
                            v = hi[a, d, kap] + gmax
                            if v > nhi[a + sc, d + dc, k2]:
                                nhi[a + sc, d + dc, k2] = v
                            v = lo[a, d, kap] + gmin
                            if v < nlo[a + sc, d + dc, k2]:
                                nlo[a + sc, d + dc, k2] = v
        hi = nhi
        lo = nlo
    return lo[s, w, w], hi[s, w, w]


@lru_cache(maxsize=200_000)
def _mark_range_cached(key: tuple[tuple[int, int, int], ...], s: int, w: int) -> tuple[int, int]:
    arr = np.array(key, dtype=np.int64).reshape(-1, 3)
    lo, hi = _mark_range_dp(arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), s, w)
    if hi < 0:
        raise ValueError(f"no feasible wrong–wrong block for s={s}, w={w} and label counts {key}")
    return int(lo), int(hi)


def _label_table(clean_wrong_labels, pert_wrong_labels, marks=None) -> dict[int, list[int]]:
    """label -> [clean wrong count, marked perturbed wrong count, unmarked perturbed wrong count]."""
    table: dict[int, list[int]] = {}
    for c in np.asarray(clean_wrong_labels).tolist():
        table.setdefault(c, [0, 0, 0])[0] += 1
    marks = np.ones(len(pert_wrong_labels), dtype=bool) if marks is None else np.asarray(marks, dtype=bool)
    for d, mark in zip(np.asarray(pert_wrong_labels).tolist(), marks.tolist()):
        table.setdefault(d, [0, 0, 0])[1 if mark else 2] += 1
    return table


def mark_range(clean_wrong_labels: np.ndarray, pert_wrong_labels: np.ndarray, marks: np.ndarray,
               s: int, w: int) -> tuple[int, int]:
    """[min, max] number of marked wrong perturbed records inside a wrong–wrong block of s same-label and
    w changed-label pairs, over all such blocks between the class's wrong records (exact)."""
    if s + w == 0:
        return 0, 0
    key = tuple(sorted(tuple(v) for v in _label_table(clean_wrong_labels, pert_wrong_labels, marks).values()))
    return _mark_range_cached(key, int(s), int(w))


def _matching_count(pairs: tuple[tuple[int, int], ...], s: int, w: int) -> int:
    """Number of partial matchings between clean and perturbed wrong records (label counts `pairs` =
    ((m_c, p_c), ...)) with exactly s same-label and w changed-label edges (inclusion–exclusion)."""
    m_tot = sum(m for m, _ in pairs)
    p_tot = sum(p for _, p in pairs)
    if m_tot - s < w or p_tot - s < w:
        return 0
    poly = [[0] * (w + 1) for _ in range(s + 1)]  # poly[j][i]: j same-label edges, i forbidden edges
    poly[0][0] = 1
    for m, p in pairs:
        if m == 0 or p == 0:
            continue
        f = [[0] * (w + 1) for _ in range(s + 1)]
        for j in range(min(m, p, s) + 1):
            base = comb(m, j) * comb(p, j) * factorial(j)
            for i in range(min(m - j, p - j, w) + 1):
                f[j][i] = (-1) ** i * base * comb(m - j, i) * comb(p - j, i) * factorial(i)
        new = [[0] * (w + 1) for _ in range(s + 1)]
        for j1 in range(s + 1):
            for i1 in range(w + 1):
                if poly[j1][i1] == 0:
                    continue
                for j2 in range(s + 1 - j1):
                    for i2 in range(w + 1 - i1):
                        if f[j2][i2]:
                            new[j1 + j2][i1 + i2] += poly[j1][i1] * f[j2][i2]
        poly = new
    m_rest, p_rest = m_tot - s, p_tot - s
    return sum(
        poly[s][i] * comb(m_rest - i, w - i) * comb(p_rest - i, w - i) * factorial(w - i) for i in range(w + 1)
    )


@lru_cache(maxsize=200_000)
def _outside_probability(pairs: tuple[tuple[int, int], ...], s: int, w: int) -> tuple[float, ...]:
    total = _matching_count(pairs, s, w)
    if total == 0:
        raise ValueError(f"no feasible wrong–wrong block for s={s}, w={w} and label counts {pairs}")
    out = []
    for idx, (m, p) in enumerate(pairs):
        if p == 0:
            out.append(float("nan"))
            continue
        reduced = pairs[:idx] + ((m, p - 1),) + pairs[idx + 1:]
        out.append(float(Fraction(_matching_count(reduced, s, w), total)))
    return tuple(out)


def hblock_probabilities(clean_wrong_labels: np.ndarray, pert_wrong_labels: np.ndarray, s: int, w: int) -> np.ndarray:
    """For each wrong perturbed record, the probability that it lies outside the wrong–wrong block (in the
    correct→wrong block) under the uniform distribution over feasible I5 correspondences (exact)."""
    pert_wrong_labels = np.asarray(pert_wrong_labels)
    if s + w == 0:
        return np.ones(len(pert_wrong_labels))
    table = _label_table(clean_wrong_labels, pert_wrong_labels)
    labels = sorted(table, key=lambda c: (table[c][0], table[c][1]))
    pairs = tuple((table[c][0], table[c][1]) for c in labels)
    probs = dict(zip(labels, _outside_probability(pairs, int(s), int(w))))
    return np.array([probs[d] for d in pert_wrong_labels.tolist()], dtype=float)
