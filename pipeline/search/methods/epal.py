"""Anchor method ε-PAL: Zuluaga, Krause & Püschel, "ε-PAL: An Active Learning Approach to the
Multi-Objective Optimization Problem", JMLR 17(104), 2016, on the lattice Θ.

Why not `pyepal`: it pins scikit-learn 0.* and does not install on this Python, so the paper's rule is
implemented here on the project's GP (`gp_surrogate.fit_gp`, `gp_surrogate.IncrementalGP`: amplitude·RBF(ARD) + white
noise by maximum likelihood, on GP-PND's inputs θ/(ℓ−1) and the activity flags θ_i > 0). ε-PAL as
published models the objectives themselves, so no warp (unlike GP-PND's `ParetoProbability._fit`).

Each iteration t (one round of q proposals):

* Modelling: the uncertainty hyper-rectangle Q_t(x) = [μ_t(x) − β_t^{1/2}σ_t(x), μ_t(x) + β_t^{1/2}σ_t(x)]
  per objective (σ_t the GP's latent sd, without the noise term: the region is one for f(x)), and the
  region R_t(x) = R_{t−1}(x) ∩ Q_t(x) for every x still undecided (U_t) or classified Pareto (P_t); an
  objective where the intersection is empty (possible after a hyperparameter refit) takes Q_t(x). Its
  corners min R_t(x) and max R_t(x) are the pessimistic and optimistic outcomes.
* Discarding: x ∈ U_t outside the pessimistic Pareto set p_pess(P_t ∪ U_t) is discarded if some
  x' ∈ p_pess(P_t ∪ U_t) has min R_t(x') + ε ⪰ max R_t(x) (ε-dominance of its optimistic outcome).
* ε-Pareto classification: x ∈ U_t moves to P_t if no other x' ∈ P_t ∪ U_t has max R_t(x') ⪰ min R_t(x) + ε
  (no optimistic outcome beats its pessimistic one by ε: x is ε-accurate).
* Sampling: the unevaluated x ∈ P_t ∪ U_t with the largest diameter w_t(x) = ||max R_t(x) − min R_t(x)||₂
  (ties at random). Batch q: greedily, each later point of the round after hallucinating the earlier ones at
  their posterior mean (σ does not depend on the observed value, and the mean is unchanged by such a
  hallucination), as in the paper's batch variant.

Choices: ε_k = 0.01 × the observed range of objective k (relative ε = 0.01); β_t per
Theorem 1, β_t = 2·log(m·|Θ|·π²·t²/(6δ)) with m = 2 objectives and δ = 0.05, scaled by 1/9 as in the
authors' experiments; the initial design is BoTorch's (2·(n+1) configurations drawn uniformly without
replacement); hyperparameters are refitted on GP-PND's schedule (`FIT_LIMIT`, `FIT_GROWTH`), the
posterior updated exactly in between. Each refit keeps the more likely of a fit from scikit-learn's default
start and one from the previous fit (why both: docs/search.md, section 'ε-PAL: refit start and a measured run').

Beyond the paper (Recall@P* counts evaluated configurations, so a long run should visit all of Θ): where
fewer unevaluated points are left in P_t ∪ U_t than the round takes (in particular once U_t is empty), the
round is filled with discarded ones, the largest additive margin of their predicted mean over the evaluated
front (`pnd.domination_margin`) first. Nothing is proposed twice, so a run stops after |Θ| proposals.
"""
from __future__ import annotations

import copy
import math

import numpy as np
from sklearn.gaussian_process.kernels import Kernel

from pipeline.front.pareto import pareto_mask
from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.search.surrogate.gp_surrogate import IncrementalGP, fit_gp
from pipeline.search.methods.pnd import domination_margin
from pipeline.front.space import Space

UNDECIDED, PARETO, DISCARDED = 0, 1, 2


def beta(t: int, size: int, objectives: int = 2, delta: float = 0.05, scale: float = 1 / 9) -> float:
    """β_t of the paper's Theorem 1, 2·log(m·|E|·π²·t²/(6δ)), times `scale`."""
    return scale * 2.0 * math.log(objectives * size * math.pi**2 * t**2 / (6.0 * delta))


def intersect(low: np.ndarray, high: np.ndarray, new_low: np.ndarray, new_high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R_t = R_{t−1} ∩ Q_t per objective; where that is empty, Q_t."""
    lo, hi = np.maximum(low, new_low), np.minimum(high, new_high)
    empty = lo > hi
    return np.where(empty, new_low, lo), np.where(empty, new_high, hi)


def classify(low: np.ndarray, high: np.ndarray, status: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """One ε-PAL discarding and ε-Pareto classification step over the regions [low, high] (one row per
    point, objectives maximised); `status` holds UNDECIDED, PARETO or DISCARDED per point. Returns the new
    status (PARETO and DISCARDED are final)."""
    status = status.copy()
    active = np.flatnonzero(status != DISCARDED)
    lo, hi = low[active], high[active]
    pess = pareto_mask(lo)  # p_pess(P_t ∪ U_t): no other pessimistic outcome dominates this one
    doubtful = np.flatnonzero((status[active] == UNDECIDED) & ~pess)
    beaten = (lo[pess][None, :, :] + eps >= hi[doubtful][:, None, :]).all(axis=2).any(axis=1)
    status[active[doubtful[beaten]]] = DISCARDED

    active = np.flatnonzero(status != DISCARDED)
    undecided = np.flatnonzero(status[active] == UNDECIDED)
    lo, hi = low[active], high[active]
    above = (hi[None, :, :] >= lo[undecided][:, None, :] + eps).all(axis=2)
    above[np.arange(len(undecided)), undecided] = False  # x' ≠ x
    status[active[undecided[~above.any(axis=1)]]] = PARETO
    return status


def latent_sd(gp: IncrementalGP) -> np.ndarray:
    """σ of f (the predictive sd less the noise term), in the targets' units."""
    return gp.y_scale * np.sqrt(np.clip((gp.sd() / gp.y_scale) ** 2 - gp.noise, 0.0, None))


class EpsilonPAL(Method):
    """ε-PAL on the lattice (module docstring); each θ at most once."""

    name, label, single_pass = "epal", "ε-PAL", True
    FIT_LIMIT = 150   # hyperparameters are refitted while fewer configurations than this are evaluated (GP-PND's schedule)
    FIT_GROWTH = 1.5  # ... each time their number has grown by this factor
    EPSILON = 0.01    # ε_k = EPSILON × the observed range of objective k
    DELTA = 0.05      # δ of β_t (Theorem 1)
    BETA_SCALE = 1 / 9

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        grid = space.grid()
        Z = np.hstack([grid / (space.levels - 1), (grid > 0).astype(float)])
        initial = rng.choice(space.size, size=min(space.size, 2 * (space.n_dims + 1)), replace=False)
        values = np.zeros((space.size, 2))
        seen = np.zeros(space.size, dtype=bool)
        evaluated = [int(i) for i in initial[: ledger.remaining]]
        values[evaluated] = ledger.propose(grid[evaluated])
        seen[evaluated] = True
        status = np.full(space.size, UNDECIDED)
        low, high = np.full((space.size, 2), -np.inf), np.full((space.size, 2), np.inf)
        gps: list[IncrementalGP] = []
        kernels: list[Kernel | None] = [None, None]
        fitted_at, t = 0, 0
        while not ledger.exhausted and len(evaluated) < space.size:
            n = len(evaluated)
            if fitted_at == 0 or (fitted_at < self.FIT_LIMIT and n >= self.FIT_GROWTH * fitted_at):
                gps = []
                for k in range(2):
                    kernels[k], params = self._fit(Z[evaluated], values[evaluated, k], kernels[k])
                    gp = IncrementalGP(Z, **params)
                    for i in evaluated:
                        gp.add(i, values[i, k])
                    gps.append(gp)
                fitted_at = n
            t += 1
            root_beta = math.sqrt(beta(t, space.size, delta=self.DELTA, scale=self.BETA_SCALE))
            mean = np.column_stack([gp.mean() for gp in gps])
            active = status != DISCARDED
            sd = np.column_stack([latent_sd(gp) for gp in gps])
            low[active], high[active] = intersect(low[active], high[active], (mean - root_beta * sd)[active], (mean + root_beta * sd)[active])
            observed = values[evaluated]
            eps = self.EPSILON * (observed.max(axis=0) - observed.min(axis=0))
            status = classify(low, high, status, eps)
            q = min(ledger.batch_size, ledger.remaining)
            candidates = np.flatnonzero((status != DISCARDED) & ~seen)
            chosen = self._sample(gps, mean, root_beta, low, high, candidates, q, rng) if len(candidates) else []
            if len(chosen) < q:  # beyond the paper: the discarded points, the most promising first
                rest = np.flatnonzero(~seen & (status == DISCARDED))
                margin = domination_margin(mean[rest], observed[pareto_mask(observed)])
                chosen += rest[np.lexsort((rng.random(len(rest)), -margin))[: q - len(chosen)]].tolist()
            values[chosen] = ledger.propose(grid[chosen])
            seen[chosen] = True
            evaluated.extend(chosen)
            for k, gp in enumerate(gps):
                for i in chosen:
                    gp.add(i, values[i, k])

    @staticmethod
    def _fit(Z: np.ndarray, y: np.ndarray, previous: Kernel | None) -> tuple[Kernel, dict[str, float | np.ndarray]]:
        """The more likely of two maximum-likelihood fits, one from the default start and one from the previous
        fit's hyperparameters (a warm start alone can stay in a degenerate optimum found on few points)."""
        fits = [fit_gp(Z, y)] + ([fit_gp(Z, y, previous)] if previous is not None else [])
        kernel, params, _ = max(fits, key=lambda fit: fit[2])
        return kernel, params

    @staticmethod
    def _sample(gps: list[IncrementalGP], mean: np.ndarray, root_beta: float, low: np.ndarray, high: np.ndarray,
                candidates: np.ndarray, q: int, rng: np.random.Generator) -> list[int]:
        """Up to q candidates of largest w_t, each after hallucinating the earlier ones at their mean."""
        chosen: list[int] = []
        lo, hi = low[candidates], high[candidates]
        hallucinated = [copy.deepcopy(gp) for gp in gps] if min(q, len(candidates)) > 1 else []
        for j in range(min(q, len(candidates))):
            if j:
                for k, gp in enumerate(hallucinated):
                    gp.add(chosen[-1], mean[chosen[-1], k])
                sd = np.column_stack([latent_sd(gp)[candidates] for gp in hallucinated])
                lo, hi = intersect(low[candidates], high[candidates], mean[candidates] - root_beta * sd, mean[candidates] + root_beta * sd)
            width = np.linalg.norm(hi - lo, axis=1)
            width[np.isin(candidates, chosen)] = -np.inf
            chosen.append(int(candidates[np.lexsort((rng.random(len(candidates)), width))[-1]]))
        return chosen
