"""The probability that a Gaussian outcome is dominated by no point of a front (two objectives, both maximised):
GP-PND's acquisition (`pipeline.search.pnd`) and the remaining mass of its recall estimates."""
from __future__ import annotations

import numpy as np
from scipy.special import ndtr


def non_domination_probability(mean: np.ndarray, sd: np.ndarray, front: np.ndarray) -> np.ndarray:
    """P(no point of `front` is ≥ the outcome on both objectives) for independent Gaussian outcomes
    N(mean[:, 0], sd[:, 0]²) × N(mean[:, 1], sd[:, 1]²), both objectives maximised.

    With the front sorted by δ ascending (so ρ descending), q_1..q_k, and δ_0 = −∞: an outcome whose δ
    lies in (δ_{j−1}, δ_j] is dominated exactly when its ρ ≤ ρ_j, and one with δ > δ_k is never
    dominated, so P = Σ_j P(δ_{j−1} < X ≤ δ_j)·P(Y > ρ_j) + P(X > δ_k). A zero sd gives a step
    (an outcome tied with a front point on both objectives counts as dominated). 1 for an empty front.
    """
    mean, sd = np.asarray(mean, dtype=float).reshape(-1, 2), np.asarray(sd, dtype=float).reshape(-1, 2)
    front = np.asarray(front, dtype=float).reshape(-1, 2)
    if len(front) == 0:
        return np.ones(len(mean))
    front = front[np.argsort(front[:, 0], kind="stable")]

    def cdf(edge: np.ndarray, mu: np.ndarray, s: np.ndarray) -> np.ndarray:
        """P(N(mu, s²) ≤ edge) for every (candidate, front point), exact 0/1 where s = 0."""
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (edge[None, :] - mu[:, None]) / s[:, None]
        return np.where(s[:, None] > 0, ndtr(z), (mu[:, None] <= edge[None, :]).astype(float))

    below = cdf(front[:, 0], mean[:, 0], sd[:, 0])                       # P(X ≤ δ_j)
    interval = np.diff(below, axis=1, prepend=0.0)                      # P(δ_{j−1} < X ≤ δ_j)
    above = 1.0 - cdf(front[:, 1], mean[:, 1], sd[:, 1])                # P(Y > ρ_j)
    return np.clip((interval * above).sum(axis=1) + (1.0 - below[:, -1]), 0.0, 1.0)
