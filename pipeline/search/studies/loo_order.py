"""The leave-one-out order of a ground-truth table: how much of P* a GP surrogate could foresee if it knew
the value of every configuration but the one it ranks: how far from the limit a surrogate search is, beyond the
paper (docs/search.md, 'How far from the limit?').

For each θ, the GP of each objective (GP-PND's model: RBF over the levels and the active flags, a
white-noise term, GP-PND's warps chosen by likelihood) is conditioned on every other configuration of the
table; its leave-one-out predictive N(μ_θ, σ_θ²) is the most any such surrogate can know of θ before
evaluating it. The membership probability p_θ is the probability that an outcome drawn from it is
dominated by no point of the true front of Θ ∖ {θ} (`non_domination_probability`: for θ outside P* that
front is P* itself). Ordering Θ by p_θ, largest first, evaluates first the configurations the rest of the
table says belong to P*; the position of the last member of P* in that order, `loo_order_u`, is what such
a static order needs to recover all of P*.

It is not a lower bound for a sequential search. A member that noise alone lifted onto the front has a
small p_θ whatever was evaluated, and any search, the order above included, finds it only by evaluating
most of what scores as high, so on noisy tables it says where a median within 5x of the ideal is out of reach
for a surrogate. But a sequential search ranks against its own, weaker front, and can find such a
member earlier by luck (GP-PND does, on some crowded tables).

Choices: the hyperparameters and the warp of each objective are fitted on `fit_size` configurations drawn
without replacement (a seeded draw: a fit on all 1,296 configurations takes about 25 s per warp; on the
development tables smooth-0 and smooth-1 it gave the same u, 36 and 27), then the GP is conditioned on all
of the table. Ties of p_θ count
against the member (its position is the number of configurations scoring at least as high).
"""
from __future__ import annotations

import numpy as np

from pipeline.front.pareto import pareto_mask
from pipeline.search.acquisition.nondomination import non_domination_probability
from pipeline.search.surrogate.gp_surrogate import Warp, fit_gp
from pipeline.search.methods.pnd import ParetoProbability
from pipeline.front.space import Space


def loo_predictive(Z: np.ndarray, y: np.ndarray, amplitude: float, length_scale: np.ndarray, noise: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of y_i's predictive under a zero-mean GP (amplitude·RBF(length_scale) + noise·I) conditioned
    on every other y_j, for every i at once: μ_i = y_i − [K⁻¹y]_i / [K⁻¹]_ii, σ_i² = 1 / [K⁻¹]_ii (the
    leave-one-out identities, Rasmussen and Williams 2006, Eq. 5.12)."""
    X = np.asarray(Z, dtype=float) / np.asarray(length_scale, dtype=float)
    sq = (X * X).sum(axis=1)
    K = amplitude * np.exp(-0.5 * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)) + noise * np.eye(len(X))
    K_inv = np.linalg.inv(K)
    diag = np.diag(K_inv)
    return y - (K_inv @ y) / diag, 1.0 / np.sqrt(diag)


def _objective_loo(Z: np.ndarray, y: np.ndarray, fit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(w(y), μ, σ) of one objective on the warped scale: the warp and hyperparameters of GP-PND's rule, fitted
    on the rows `fit`, then the leave-one-out predictive of every row given all the others."""
    spread = float(y.max() - y.min()) or 1.0
    best = None
    for rel in ParetoProbability.WARPS:
        warp = Warp(float(y.max()), None if rel is None else rel * spread)
        _, params, loglik = fit_gp(Z[fit], warp(y[fit]))
        loglik += float(warp.log_slope(y[fit]).sum())
        if best is None or loglik > best[0]:
            best = (loglik, warp, params)
    _, warp, params = best
    wy = warp(y)
    centre, scale = float(wy.mean()), float(wy.std()) or 1.0
    mean, sd = loo_predictive(Z, (wy - centre) / scale, params["amplitude"], params["length_scale"], params["noise"])
    return wy, centre + scale * mean, scale * sd


def membership_probability(objectives: np.ndarray, space: Space, fit_size: int = 400, seed: int = 0) -> np.ndarray:
    """p_θ of every θ (module docstring): P(θ's leave-one-out outcome is non-dominated by the true front of
    Θ ∖ {θ}), objectives (|Θ|, 2) both maximised, in `space`'s index order."""
    objectives = np.asarray(objectives, dtype=float)
    if objectives.shape != (space.size, 2):
        raise ValueError(f"objectives must be ({space.size}, 2) for a lattice of {space.size} configurations, got {objectives.shape}")
    grid = space.grid()
    Z = np.hstack([grid / (space.levels - 1), (grid > 0).astype(float)])  # GP-PND's inputs
    fit = np.sort(np.random.default_rng(seed).choice(space.size, min(space.size, int(fit_size)), replace=False))
    parts = [_objective_loo(Z, objectives[:, k], fit) for k in range(2)]
    warped, mean, sd = (np.column_stack([part[j] for part in parts]) for j in range(3))
    members = pareto_mask(warped)
    p = non_domination_probability(mean, sd, warped[members])
    for m in np.flatnonzero(members):
        rest = np.delete(warped, m, axis=0)
        p[m] = non_domination_probability(mean[m], sd[m], rest[pareto_mask(rest)])[0]
    return p


def loo_order_u(p: np.ndarray, pareto: np.ndarray) -> int:
    """Configurations the order by p (largest first) evaluates until every member of P* (or of another target
    mask, such as the core, `pipeline.front.membership`) is in: the largest number of configurations scoring at
    least as high as a member."""
    p, pareto = np.asarray(p, dtype=float), np.asarray(pareto, dtype=bool)
    if not pareto.any():
        raise ValueError("P* is empty: there is no member to recover")
    return int((p[None, :] >= p[pareto][:, None]).sum(axis=1).max())
