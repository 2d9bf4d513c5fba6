"""Brute-force references for the adequacy metrics: plain Python loops over inputs, neurons and
sections, written from the papers' definitions and sharing no code with pipeline.adequacy."""
from __future__ import annotations

import math


def nac(acts: dict[str, list[list[float]]], t: float) -> float:
    covered = total = 0
    for rows in acts.values():
        n = len(rows[0]) if rows else 0
        for j in range(n):
            total += 1
            for row in rows:
                lo, hi = min(row), max(row)
                if hi > lo and (row[j] - lo) / (hi - lo) > t:
                    covered += 1
                    break
    return covered / total


def snac(acts: dict[str, list[list[float]]], high: dict[str, list[float]]) -> float:
    covered = total = 0
    for layer, rows in acts.items():
        for j, h in enumerate(high[layer]):
            total += 1
            covered += any(row[j] > h for row in rows)
    return covered / total


def kmnc(acts: dict[str, list[list[float]]], low: dict[str, list[float]], high: dict[str, list[float]], k: int) -> float:
    covered = total = 0
    for layer, rows in acts.items():
        for j, (lo, hi) in enumerate(zip(low[layer], high[layer])):
            if hi <= lo:
                continue  # no sections on a constant neuron
            width = (hi - lo) / k
            for i in range(k):
                left, right = lo + i * width, lo + (i + 1) * width
                total += 1
                for row in rows:
                    v = row[j]
                    if left <= v < right or (i == k - 1 and v == hi):
                        covered += 1
                        break
    return covered / total


def tknc(acts: dict[str, list[list[float]]], k: int) -> float:
    covered = total = 0
    for rows in acts.values():
        n = len(rows[0])
        total += n
        top: set[int] = set()
        for row in rows:
            top.update(sorted(range(n), key=lambda j: (-row[j], j))[:k])
        covered += len(top)
    return covered / total


def gaussian_kde_density(x: list[float], data: list[list[float]]) -> float:
    """Scott's-rule Gaussian KDE at x, from its formula: mean over points of N(x; x_i, h²·Σ),
    Σ the unbiased sample covariance, h = n^(-1/(d+4))."""
    n, d = len(data), len(x)
    mean = [sum(p[a] for p in data) / n for a in range(d)]
    cov = [[sum((p[a] - mean[a]) * (p[b] - mean[b]) for p in data) / (n - 1) for b in range(d)] for a in range(d)]
    h2 = n ** (-2.0 / (d + 4))
    H = [[h2 * cov[a][b] for b in range(d)] for a in range(d)]
    inv, det = _inverse_and_det(H)
    total = 0.0
    for p in data:
        diff = [x[a] - p[a] for a in range(d)]
        q = sum(diff[a] * inv[a][b] * diff[b] for a in range(d) for b in range(d))
        total += math.exp(-0.5 * q)
    return total / n / math.sqrt((2 * math.pi) ** d * det)


def _inverse_and_det(m: list[list[float]]) -> tuple[list[list[float]], float]:
    """Gauss-Jordan elimination with partial pivoting."""
    d = len(m)
    a = [row[:] + [float(i == j) for j in range(d)] for i, row in enumerate(m)]
    det = 1.0
    for c in range(d):
        p = max(range(c, d), key=lambda r: abs(a[r][c]))
        if p != c:
            a[c], a[p] = a[p], a[c]
            det = -det
        det *= a[c][c]
        pivot = a[c][c]
        a[c] = [v / pivot for v in a[c]]
        for r in range(d):
            if r != c:
                f = a[r][c]
                a[r] = [vr - f * vc for vr, vc in zip(a[r], a[c])]
    return [row[d:] for row in a], det


def dsa(x: list[float], pred: int, train: list[list[float]], classes: list[int]) -> float:
    same = [t for t, c in zip(train, classes) if c == pred]
    other = [t for t, c in zip(train, classes) if c != pred]
    anchor = min(same, key=lambda t: math.dist(x, t))
    return math.dist(x, anchor) / min(math.dist(anchor, o) for o in other)
