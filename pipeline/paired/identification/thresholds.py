"""Acceptance thresholds from clean development scores (Section 4.3, Appendices D and F).

The clean threshold is the lowest score among the highest-scoring 80% of clean development records; the
policy thresholds are the descending clean-development order statistics at rank round(q_j n_dev). All
scores at or above a threshold are accepted, so ties can raise coverage above the nominal level.
"""
from __future__ import annotations

import math

import numpy as np

POLICY_COVERAGES = (0.6, 0.7, 0.8, 0.9, 1.0)
CLEAN_COVERAGE = 0.8


def coverage_rank(q: float, n_dev: int) -> int:
    """1-based descending rank round(q * n_dev), rounding halves up, at least 1."""
    if not 0.0 < q <= 1.0:
        raise ValueError(f"coverage must lie in (0, 1], got {q}")
    return max(1, min(n_dev, math.floor(q * n_dev + 0.5)))


def coverage_threshold(dev_scores: np.ndarray, q: float) -> float:
    """The descending order statistic of `dev_scores` at rank round(q n_dev) (Appendix D)."""
    scores = np.asarray(dev_scores, dtype=float)
    if scores.ndim != 1 or len(scores) == 0:
        raise ValueError(f"dev_scores must be a non-empty 1-d array, got shape {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("dev_scores contain NaN")
    ordered = np.sort(scores)[::-1]
    return float(ordered[coverage_rank(q, len(scores)) - 1])


def clean_threshold(dev_scores: np.ndarray, coverage: float = CLEAN_COVERAGE) -> float:
    """Appendix F: the lowest score among the highest-scoring `coverage` share of clean development records."""
    return coverage_threshold(dev_scores, coverage)


def policy_thresholds(dev_scores: np.ndarray, coverages=POLICY_COVERAGES) -> np.ndarray:
    """Appendix D: perturbed-side policy thresholds tau_j for nominal clean-development coverages q_j."""
    return np.array([coverage_threshold(dev_scores, q) for q in coverages])
