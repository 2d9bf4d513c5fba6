"""A search's own estimate of its recall of the core: the configurations on the front in ≥ 95%
of the paired bootstrap resamples of the test inputs (`pipeline.front.membership`), estimated from the per-input outcomes
of what the search has evaluated and its surrogate's predictive of the rest.

Objects. E is the evaluated set, U the rest of Θ. For each θ ∈ E the search knows its per-unit outcomes o_θi, the
clean outcomes c_i and its per-unit fidelity f_θi (or one set-level value, e.g. KID), `UnitOutcomes`; for θ ∈ U a
predictive N(μ, σ²) of each objective (GP-PND's, on its warped scale). The core of Θ is C = {θ : π_Θ(θ) ≥ 0.95}.

The estimate, A / (A + R), like GP-PND's estimate of Recall@P* (`pipeline.search.methods.pnd.estimated_recall`):

* K, the core of E: θ ∈ E with π_E(θ) ≥ 0.95, π_E the bootstrap share computed on E alone (same paired resamples
  for every θ). A configuration on the front of Θ in a resample is on the front of E ⊆ Θ in it, so π_Θ ≤ π_E and
  C ∩ E ⊆ K: K holds every core member found so far, and possibly some that an unevaluated θ will push out.
  A = Σ_{k ∈ K} Π_{θ ∈ U} (1 − P(θ ≥ k on both objectives)), the expected number of K that no unevaluated θ
  dominates (independent outcomes).
* R, the expected number of core members still in U. θ ∈ C beats every θ' of E on one objective in ≥ 95% of resamples,
  so by a margin of some standard errors of the paired difference. We take f's own standard error,
  se_f = sd_i(x_fi) / √n of its per-unit values x (outcome differences c − o for δ, fidelity for ρ; 0 for a set-level
  fidelity, which the bootstrap holds fixed), as the scale, raise every point of E near the front by z·se_f on both
  objectives, and sum over U the probability of non-domination by that raised front (`non_domination_probability`).
  The raised front is the bar a core member must clear; the plain front, which GP-PND's Recall@P* estimate uses, is
  the bar of any member of P*, most of which (on the real pairs) are on it by one or two inputs.

What it uses: the outcomes of E only (`Ledger.inputs_of` refuses any other), and the surrogate conditioned on E.

Cost. π_E is computed on the configurations of E near the front only: those not dominated by the front of E
lowered by `NEAR` = 4 standard errors of each of its points (a configuration further below is on a resample's
front, or dominates a point of K in one, only where both move 4 standard errors, which B = 1,000 resamples all but
never draw). K is recomputed on a schedule (`CoreTracker`).

Choices (made on the development split of `pipeline.search.studies.synthetic`; the runs and timings:
docs/confidence.md, section 'The core estimate: choices and cost'): z = `Z` = 1.0, not 1.645, the one-sided 95% point
for one rival, which stopped before a late core member on long_front (calibration first); B = 1,000 and the layer's
bootstrap seed, the ground truth's (so K uses its resamples); the standard error of f alone rather than of the
(unknown) paired difference with θ.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pipeline.front.membership import front_share, resample_counts
from pipeline.front.pareto import front_mask
from pipeline.front.pareto import pareto_mask
from pipeline.search.acquisition.nondomination import non_domination_probability, undominated_count
from pipeline.search.racing.unit_outcomes import UnitOutcomes

if TYPE_CHECKING:
    from pipeline.search.ledger import Ledger

Z = 1.0  # the bar: each rival's point raised by this many of its standard errors (module docstring)
NEAR = 4.0  # configurations more than this many standard errors below the front are left out of π_E
RESAMPLES = 1000  # B of the in-search bootstrap (as the ground truth's core)
CORE = 0.95  # π at which a configuration is in the core


def near_front(values: np.ndarray, se: np.ndarray, margin: float = NEAR) -> np.ndarray:
    """Mask of the rows of `values` (m, 2; both maximised) not dominated by any front point lowered by `margin`
    of its standard errors `se` (m, 2) on both objectives."""
    front = front_mask(values[:, 0], values[:, 1])[0]
    lowered = values[front] - margin * se[front]
    beaten = ((lowered[None, :, 0] >= values[:, None, 0]) & (lowered[None, :, 1] >= values[:, None, 1])
              & ((lowered[None, :, 0] > values[:, None, 0]) | (lowered[None, :, 1] > values[:, None, 1])))
    return front | ~beaten.any(axis=1)


def core_of_evaluated(layer: UnitOutcomes, resamples: int = RESAMPLES, counts: np.ndarray | None = None) -> np.ndarray:
    """K (module docstring) as a mask over the rows of `layer`: π_E ≥ `CORE` by the paired bootstrap on them, seeded
    by the layer's seed (or over the resamples `counts` drawn so already): with the ground truth's B, its resamples
    are the ground truth's, so C ∩ E ⊆ K holds resample by resample."""
    if counts is None:
        counts = resample_counts(layer.strata, len(layer.clean), resamples, layer.seed)
    return front_share(counts, layer.outcomes, layer.clean, layer.fidelity) >= CORE


def estimated_core_recall(mean: np.ndarray, sd: np.ndarray, core_points: np.ndarray, raised_front: np.ndarray) -> float:
    """A / (A + R) (module docstring) from the predictive (mean, sd) of each unevaluated configuration (rows), the
    points of K and the raised front (its non-dominated points), all on the surrogate's scale. 1 when nothing is
    left unevaluated."""
    mean, sd = np.asarray(mean, dtype=float).reshape(-1, 2), np.asarray(sd, dtype=float).reshape(-1, 2)
    core_points = np.asarray(core_points, dtype=float).reshape(-1, 2)
    if len(mean) == 0:
        return 1.0
    remaining = float(non_domination_probability(mean, sd, raised_front).sum())
    kept = undominated_count(mean, sd, core_points)
    return kept / (kept + remaining) if kept + remaining > 0 else 1.0


class CoreTracker:
    """The core estimate of one search run (module docstring), kept across its rounds: the standard errors of what
    it evaluated (from each one's per-unit rows, fetched once), the bootstrap's resamples (drawn once), and K (from
    the rows of the near set, fetched from the ledger when K is recomputed),
    recomputed when the configurations near the front have changed and either the evaluated set has grown by
    `REFRESH_GROWTH` since K was computed, or the estimate has reached `FRESH_ABOVE` while no estimate from an
    up-to-date K has yet reached `fresh_until` (the stopping threshold). So the estimate at which a stopping rule
    fires is computed from an up-to-date K, and a run pays for at most some hundred bootstraps."""

    REFRESH_GROWTH = 1.05
    FRESH_ABOVE = 0.9

    def __init__(self, fresh_until: float = 0.95, resamples: int = RESAMPLES, z: float = Z) -> None:
        self.fresh_until, self.resamples, self.z = fresh_until, resamples, z
        self._crossed = False  # an estimate from an up-to-date K has reached fresh_until
        self._se = np.zeros((0, 2))
        self._counts: np.ndarray | None = None
        self._near: np.ndarray | None = None  # the near set K was computed on (positions in the evaluated order)
        self._core = np.zeros(0, dtype=np.int64)
        self._computed_at = 0

    def _refresh(self, near: np.ndarray, evaluated: np.ndarray, ledger: Ledger) -> None:
        self._near, self._computed_at = near, len(self._se)
        self._core = near[core_of_evaluated(ledger.inputs_of(evaluated[near]), counts=self._counts)]

    def estimate(self, evaluated: np.ndarray, values: np.ndarray, ledger: Ledger, mean: np.ndarray, sd: np.ndarray,
                 warp: Callable[[np.ndarray], np.ndarray]) -> float:
        """The estimate after the configurations `evaluated` (indices in evaluation order, extending those of the
        last call) with objectives `values` (u, 2), given the predictive (mean, sd) of the unevaluated ones on the
        surrogate's scale, to which `warp` maps objectives."""
        new = evaluated[len(self._se):]
        if len(new):
            rows = ledger.inputs_of(new)
            if self._counts is None:
                self._counts = resample_counts(rows.strata, len(rows.clean), self.resamples, rows.seed)
            self._se = np.concatenate([self._se, rows.standard_errors()])
        near = np.flatnonzero(near_front(values, self._se))
        stale = self._near is None or not np.array_equal(near, self._near)
        if stale and len(evaluated) >= self.REFRESH_GROWTH * self._computed_at:
            self._refresh(near, evaluated, ledger)
            stale = False
        raised = values[near] + self.z * self._se[near]
        raised = warp(raised[pareto_mask(raised)])
        estimate = estimated_core_recall(mean, sd, warp(values[self._core]), raised)
        if stale and not self._crossed and estimate >= self.FRESH_ABOVE:
            self._refresh(near, evaluated, ledger)
            stale = False
            estimate = estimated_core_recall(mean, sd, warp(values[self._core]), raised)
        self._crossed |= not stale and estimate >= self.fresh_until
        return estimate
