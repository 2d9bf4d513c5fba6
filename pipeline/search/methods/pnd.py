"""GP-PND: Pareto-set search by the probability of non-domination under a Gaussian-process surrogate
(beyond the paper; the target is TestNav's P* of §3.3/§4.1).

The idea. Recall@P* rewards evaluating exactly the configurations that turn out non-dominated, so each proposal
should be the unevaluated θ most likely to be non-dominated. δ and ρ are smooth in the severity levels (close to
monotone, see `monotonicity.py`), so a GP over the lattice coordinates predicts both well from a few evaluated
configurations; what it cannot predict (the table's non-smooth part: accuracy counted on |D| inputs, sampling
noise of KID) it estimates as a noise term. Given the evaluated front F and the predictive N(μ_δ, σ_δ²) ×
N(μ_ρ, σ_ρ²) of θ, the probability that θ is dominated by no point of F is exact for two objectives (a sum over
F's staircase, `non_domination_probability`). GP-PND proposes the θ with the highest such probability, updates
the GPs with its (δ, ρ), and repeats. Nothing is ever proposed twice (b = u); configurations predicted to be
dominated are not excluded, only ordered last, so a run that continues visits all of Θ and always reaches
recall 1, at |Θ| proposals at worst.

Steps and choices (those tried and measured: docs/search.md, section 'GP-PND: choices and experiments'):

* Initial design (uses the lattice): the identity θ = 0 (the highest fidelity, so in P*), the all-maximum corner
  (typically the highest δ) and every axis point (one active perturbation at each level: the main effects, where
  the paper's fronts put many members), n·(ℓ−1) + 2 configurations, plus ⌈n·(ℓ−1)/2⌉ drawn uniformly from the
  rest so that the first fit also sees interactions, in a random order (the seed's only influence, with ties).
* Surrogate: one GP per objective, RBF kernel with a length scale per input plus a white-noise term. Inputs: the
  levels θ / (ℓ−1) and, per dimension, whether it is active (θ_i > 0), because level 0 is no perturbation at all
  and the step 0 → 1 is often larger than any later one. Targets: the objective through a strictly increasing
  warp (`gp_surrogate.Warp`, c among `WARPS` × the observed spread, or none) chosen by the likelihood of y; the
  probability below is computed on the warped scale, since such warps leave dominance unchanged. Hyperparameters
  and warp by maximum likelihood (scikit-learn), refitted whenever the number of evaluated configurations has
  grown by half, up to `FIT_LIMIT`, each fit from the same default start, never from the previous fit; in between
  the exact posterior is updated one configuration at a time (`gp_surrogate.IncrementalGP`: a Cholesky row,
  O(u·|Θ|) per proposal). The predictive σ adds the noise term, because the value to be observed includes it.
* Front: the non-dominated evaluated configurations (the method's own current estimate of P*). Ties of the
  probability (e.g. all ≈ 0 far below the front) are broken by the additive margin of the predictive mean to the
  front (`domination_margin`, larger first), then at random. Monotonicity is not imposed.

Cost: two u × |Θ| arrays of floats (the posterior's Cholesky rows against all of Θ), 2·8·|Θ|² bytes when a run
visits all of Θ (27 MB for 6^4, 1.6 GB for 10^4), and some 5-20 s of CPU per 6^4 run, mostly the likelihood fits.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pipeline.search.methods.base import Method
from pipeline.search.stopping.core_recall import CoreTracker
from pipeline.search.surrogate.gp_surrogate import IncrementalGP, Warp, fit_gp
from pipeline.search.ledger import Ledger
from pipeline.search.acquisition.nondomination import non_domination_probability, undominated_count
from pipeline.front.pareto import add_to_front
from pipeline.front.space import Space


def lattice_design(space: Space) -> np.ndarray:
    """Indices of the identity, the all-maximum corner and every axis point (one dimension active at
    each level 1..ℓ−1), in that order, without repeats."""
    top = space.levels - 1
    thetas = [np.zeros(space.n_dims, dtype=np.int64), np.full(space.n_dims, top, dtype=np.int64)]
    for dim in range(space.n_dims):
        for level in range(1, space.levels):
            theta = np.zeros(space.n_dims, dtype=np.int64)
            theta[dim] = level
            thetas.append(theta)
    idx = space.indices(np.array(thetas))
    return idx[np.sort(np.unique(idx, return_index=True)[1])]


def initial_design(space: Space, rng: np.random.Generator) -> np.ndarray:
    """GP-PND's initial design: `lattice_design` plus ⌈n·(ℓ−1)/2⌉ configurations drawn uniformly from the
    rest, all in a random order (module docstring)."""
    design = lattice_design(space)
    rest = np.setdiff1d(np.arange(space.size), design)
    extra = rng.choice(rest, size=min(len(rest), math.ceil(space.n_dims * (space.levels - 1) / 2)), replace=False)
    design = np.concatenate([design, extra])
    return design[rng.permutation(len(design))]


def domination_margin(points: np.ndarray, front: np.ndarray) -> np.ndarray:
    """Additive ε-indicator of each point (δ, ρ) against a front (both maximised): min over q in the
    front of max(δ − δ_q, ρ − ρ_q). Positive: the point would extend the front by that much on its
    better objective; ≤ 0: some q is at least as good on both (it is weakly dominated); +∞ for an
    empty front."""
    points, front = np.asarray(points, dtype=float).reshape(-1, 2), np.asarray(front, dtype=float).reshape(-1, 2)
    if len(front) == 0:
        return np.full(len(points), np.inf)
    return np.maximum(points[:, None, 0] - front[None, :, 0], points[:, None, 1] - front[None, :, 1]).min(axis=1)


class Posterior(NamedTuple):
    """What GP-PND reads of the surrogates at the unevaluated inputs `candidates`: predictive mean and sd (one
    column per objective) and the probability of non-domination by the evaluated front."""

    candidates: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    non_dominated: np.ndarray


def estimated_recall(mean: np.ndarray, sd: np.ndarray, front: np.ndarray, non_dominated: np.ndarray | None = None) -> float:
    """The method's own estimate of Recall@P*: A / (A + R) from the posterior of the unevaluated
    configurations alone (mean and sd, one row each) and the evaluated front.

    R = Σ_θ P(θ is dominated by no point of the front) bounds the expected number of P* members still
    unevaluated (a member must at least escape the evaluated front); A = Σ_f Π_θ (1 − P(θ dominates f))
    is the expected number of front points that no unevaluated configuration dominates, i.e. of P*
    members already evaluated (independent outcomes; ties count as not dominating). Both use only what
    has been evaluated: the posterior is conditioned on it, and the front is made of it. 1 when nothing
    is left unevaluated. `non_dominated`: the terms of R, `non_domination_probability(mean, sd, front)`, where
    the caller has them."""
    mean, sd, front = (np.asarray(a, dtype=float).reshape(-1, 2) for a in (mean, sd, front))
    if len(mean) == 0:
        return 1.0
    if non_dominated is None:
        non_dominated = non_domination_probability(mean, sd, front)
    remaining = float(non_dominated.sum())
    kept = undominated_count(mean, sd, front)
    return kept / (kept + remaining) if kept + remaining > 0 else 1.0


class ParetoProbability(Method):
    """GP-PND: propose the unevaluated configuration most likely to be non-dominated by the evaluated
    front under two GP surrogates (module docstring); each θ once, so b = u and a run stops after
    min(B, |Θ|) proposals, like Random Search.

    Beyond one proposal at a time: with q = `ledger.batch_size` > 1 a round proposes q
    configurations, chosen one after another with the "kriging believer" rule: each pick is conditioned
    on, as if observed, at its predictive mean, which updates the posterior variance exactly (it does not
    depend on the values) and the front by the believed point, so the next pick of the round goes
    elsewhere. After every round the trace records `estimated_recall`; with `stop_at_recall` = r the run
    ends at the first round where that estimate reaches r.

    Where the oracle holds the per-unit outcomes (`TableOracle(inputs=…)`), the trace also records
    `est_core`, the estimate of its recall of the core from the outcomes of what it evaluated
    (`pipeline.search.stopping.core_recall`), and `stop_at_recall` applies to that estimate instead: the run stops
    when the configurations the data support are found, not every member that one input put on P*.

    With a racing oracle (`pipeline.search.racing.racing`), a configuration stopped early answers an estimate of δ with its
    variance: the surrogates take it as that observation's own noise (scikit-learn's per-sample `alpha` in the fits,
    `IncrementalGP.add(extra=…)` between them, through the warp by the delta method), it never enters the front, and
    the core estimate reads the completed configurations only."""

    name, label, single_pass = "pnd", "GP-PND", True
    FIT_LIMIT = 150  # hyperparameters are refitted while fewer configurations than this are evaluated
    FIT_GROWTH = 1.5  # ... each time their number has grown by this factor
    WARPS: tuple[float | None, ...] = (None, 1.0, 0.1, 0.01)  # c / spread of the candidate warps; None: no warp

    def __init__(self, stop_at_recall: float | None = None) -> None:
        if stop_at_recall is not None and not 0.0 < float(stop_at_recall) <= 1.0:
            raise ValueError(f"stop_at_recall must be in (0, 1] or null (no stopping rule), got {stop_at_recall}")
        self.stop_at_recall = None if stop_at_recall is None else float(stop_at_recall)

    def _fit(self, Z: np.ndarray, evaluated: np.ndarray, y: np.ndarray, variance: np.ndarray) -> tuple[IncrementalGP, Warp]:
        """The GP of one objective on the evaluated configurations (observed with `variance` each: 0 but for raced
        estimates), under the most likely of `WARPS`, every fit from `fit_gp`'s default start (module docstring: a
        warm start can stay in a degenerate optimum)."""
        spread = float(y.max() - y.min()) or 1.0
        best: tuple[float, Warp, dict, np.ndarray] | None = None
        for rel in self.WARPS:
            warp = Warp(float(y.max()), None if rel is None else rel * spread)
            extra = warp.noise(y, variance)
            _, params, loglik = fit_gp(Z[evaluated], warp(y), extra=extra)
            loglik += float(warp.log_slope(y).sum())
            if best is None or loglik > best[0]:
                best = (loglik, warp, params, extra)
        _, warp, params, extra = best
        gp = IncrementalGP(Z, **params)
        for i, wy, e in zip(evaluated, warp(y), extra / params["y_scale"] ** 2):
            gp.add(int(i), float(wy), float(e))
        return gp, warp

    def _design(self, space: Space, rng: np.random.Generator) -> np.ndarray:
        """The initial design (module docstring), in a random order."""
        return initial_design(space, rng)

    @staticmethod
    def _posterior(gps: list[IncrementalGP], front: np.ndarray, seen: np.ndarray) -> Posterior:
        """Predictive mean and sd of every unevaluated input and its probability of non-domination by `front`."""
        candidates = np.flatnonzero(~seen)
        mean = np.column_stack([gp.mean()[candidates] for gp in gps])
        sd = np.column_stack([gp.sd()[candidates] for gp in gps])
        return Posterior(candidates, mean, sd, non_domination_probability(mean, sd, front))

    @classmethod
    def _pick(cls, gps: list[IncrementalGP], front: np.ndarray, seen: np.ndarray, rng: np.random.Generator,
              posterior: Posterior | None = None) -> int:
        """The unevaluated input with the highest probability of non-domination (ties: margin, then random);
        `posterior`: `_posterior(gps, front, seen)` where the caller has it."""
        c = posterior or cls._posterior(gps, front, seen)
        order = np.lexsort((rng.random(len(c.candidates)), domination_margin(c.mean, front), c.non_dominated))
        return int(c.candidates[order[-1]])

    def _round(self, gps: list[IncrementalGP], front: np.ndarray, seen: np.ndarray, q: int, rng: np.random.Generator,
               posterior: Posterior | None = None) -> list[int]:
        """q picks by the kriging believer (class docstring), on the warped scale; `gps` are left as they were.
        `posterior`: `_posterior(gps, front, seen)` where the caller has it (read by the first pick)."""
        if q == 1:
            return [self._pick(gps, front, seen, rng, posterior)]
        believed, seen, picks = [gp.copy() for gp in gps], seen.copy(), []
        for _ in range(min(q, int((~seen).sum()))):
            i = self._pick(believed, front, seen, rng, posterior)
            posterior = None  # the believed point changes what the next pick sees
            picks.append(i)
            seen[i] = True
            point = np.array([gp.mean()[i] for gp in believed])
            for gp, y in zip(believed, point):
                gp.add(i, float(y))
            front = add_to_front(front, point)
        return picks

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        grid = space.grid()
        Z = np.hstack([grid / (space.levels - 1), (grid > 0).astype(float)])
        design = self._design(space, rng)

        q = ledger.batch_size
        seen = np.zeros(space.size, dtype=bool)
        order: list[int] = []
        values = np.zeros((space.size, 2))
        front = np.zeros((0, 2))
        gps: list[IncrementalGP] = []
        warps: list[Warp] = []
        fitted_at = 0
        posterior: Posterior | None = None  # after the last round, while no refit has changed the surrogates
        tracker = CoreTracker(max(0.95, self.stop_at_recall or 0.0)) if ledger.has_inputs else None

        def warp_points(points: np.ndarray) -> np.ndarray:
            return np.column_stack([warps[k](points[:, k]) for k in range(2)])

        def observe(picks: np.ndarray) -> None:
            nonlocal front
            answers = ledger.propose(grid[picks])
            picks = picks[: len(answers)]
            for i, v, complete, variance in zip(picks.tolist(), answers, ledger.complete(picks), ledger.variance(picks)):
                seen[i] = True
                values[i] = v
                order.append(i)
                if complete:  # a raced estimate is dominated with confidence: never on the front
                    front = add_to_front(front, v)
                for k, gp in enumerate(gps):
                    y = np.array([v[k]])
                    gp.add(i, float(warps[k](y)[0]), float(warps[k].noise(y, variance[k : k + 1])[0]) / gp.y_scale ** 2)

        for start in range(0, len(design), q):
            if ledger.exhausted:
                return
            observe(design[start : start + q])
        while not ledger.exhausted and len(order) < space.size:
            n = len(order)
            if fitted_at == 0 or (fitted_at < self.FIT_LIMIT and n >= self.FIT_GROWTH * fitted_at):
                evaluated = np.array(order)
                variance = ledger.variance(evaluated)
                fits = [self._fit(Z, evaluated, values[evaluated, k], variance[:, k]) for k in range(2)]
                gps, warps = [f[0] for f in fits], [f[1] for f in fits]
                fitted_at, posterior = n, None
            warped_front = warp_points(front)
            observe(np.array(self._round(gps, warped_front, seen, q, rng, posterior), dtype=np.int64))
            warped_front = warp_points(front)
            posterior = self._posterior(gps, warped_front, seen)  # the next round's first pick reads it too
            mean, sd = posterior.mean, posterior.sd
            estimate, core = estimated_recall(mean, sd, warped_front, posterior.non_dominated), None
            if tracker is not None:
                evaluated = np.array(order)
                evaluated = evaluated[ledger.complete(evaluated)]  # the per-unit outcomes of a raced one are partial
                core = tracker.estimate(evaluated, values[evaluated], ledger, mean, sd, warp_points)
            ledger.estimate(estimate, core)
            target = estimate if core is None else core
            if self.stop_at_recall is not None and target >= self.stop_at_recall:
                return
