"""Domination of Gaussian outcomes (two objectives, both maximised): the probability that an outcome is dominated
by no point of a front, GP-PND's acquisition (`pipeline.search.methods.pnd`) and the remaining mass of its recall estimates,
and the expected number of given points that no outcome dominates, their found mass."""
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
        if (s > 0).all():  # a GP's predictive sd (noise > 0): no step to take
            return ndtr((edge[None, :] - mu[:, None]) / s[:, None])
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (edge[None, :] - mu[:, None]) / s[:, None]
        return np.where(s[:, None] > 0, ndtr(z), (mu[:, None] <= edge[None, :]).astype(float))

    below = cdf(front[:, 0], mean[:, 0], sd[:, 0])                       # P(X ≤ δ_j)
    interval = np.diff(below, axis=1, prepend=0.0)                      # P(δ_{j−1} < X ≤ δ_j)
    above = 1.0 - cdf(front[:, 1], mean[:, 1], sd[:, 1])                # P(Y > ρ_j)
    return np.clip((interval * above).sum(axis=1) + (1.0 - below[:, -1]), 0.0, 1.0)


def undominated_count(mean: np.ndarray, sd: np.ndarray, points: np.ndarray) -> float:
    """Σ_p Π_θ (1 − P(outcome θ ≥ p on both objectives)): the expected number of `points` that no outcome
    N(mean[θ], sd[θ]²) dominates (independent outcomes; ties count as not dominating; an sd of 0 a step)."""
    mean, sd = np.asarray(mean, dtype=float).reshape(-1, 2), np.asarray(sd, dtype=float).reshape(-1, 2)
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    if (sd > 0).all():
        # no step to take (a GP's predictive sd): the (θ, p) product of the two objectives' probabilities in
        # place, the same floating-point operations as below in half the time (GP-PND calls this every round)
        dominates = ndtr((mean[:, None, 0] - points[None, :, 0]) / sd[:, None, 0])
        dominates *= ndtr((mean[:, None, 1] - points[None, :, 1]) / sd[:, None, 1])
        np.minimum(dominates, 1.0 - 1e-12, out=dominates)                                # a product of probabilities: ≥ 0
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (mean[:, None, :] - points[None, :, :]) / sd[:, None, :]                  # (θ, p, objective)
        beats = np.where(sd[:, None, :] > 0, ndtr(z), (mean[:, None, :] > points[None, :, :]).astype(float))
        dominates = np.clip(beats.prod(axis=2), 0.0, 1.0 - 1e-12)                       # P(θ ≥ p on both)
    return float(np.exp(np.log1p(-dominates).sum(axis=0)).sum())
