"""Anchor method: Pareto front identification from stochastic bandit feedback (Auer, Chiang, Ortner & Drugan,
AISTATS 2016, Algorithm 1), with configurations as arms and one pull = one test input evaluated for one arm.

The reward of arm θ on input i is the vector (c_i − o_θi, f_θi), both maximised; its mean over the n inputs is
(δ(θ), ρ(θ)). Arms are pulled WITHOUT replacement along one fixed input order, the same for every arm, so the
comparisons are paired and an arm pulled on all n inputs has its exact mean. A round pulls the next `block` inputs of
the order for every active arm, so every active arm has the same count t and one radius β_d(t) per objective.
Writing U_i = μ̂_i + β and L_i = μ̂_i − β, and "a ≻ b" for Pareto dominance (≥ on every objective, > on one):

* Discard (the paper's A_1): arm i leaves if some active j has L_j ≻ U_i.
* Pareto-optimal (the paper's P_1): i ∈ A_1 is ε-accurate if no other j ∈ A_1 has U_j ≻ L_i + ε.
* Accept (the paper's P_2): i ∈ P_1 is declared, and leaves the active set, if it is no longer needed to discard
  others: no j ∈ A_1 ∖ P_1 has L_j + ε ≺ U_i.
* Stop when no arm is active. With probability ≥ 1 − δ the declared set S satisfies P* ⊆ S ⊆ P_ε, where P_ε holds
  the arms i that no arm j ε-dominates (μ_j ≻ μ_i + ε); with ε = 0, S = P*.

From the paper: the sample-all-active-arms rounds, the three sets A_1, P_1, P_2, the accuracy parameter ε, the
stopping rule and the union bound of the radius over arms, objectives and pull counts (failure δ/(2KDt²) per
arm, objective, count and side, so Σ_t 1/t² keeps the total below δ). The paper writes the conditions with the gaps
m(i, j) = min_d (μ_j^d − μ_i^d) and M_ε(i, j) = max_d (μ_i^d + ε − μ_j^d) against β_i + β_j, strict on every
objective; here they are dominance tests of the interval corners (the same tests up to the case of equality,
where weak dominance is what `pipeline.front.pareto.pareto_mask` calls dominated, so exact means give its P* exactly).
The paper's β(t, δ) = sqrt(2·log(4KDt²/δ)/t) is a sub-Gaussian radius for an infinite population (as restated by
Korkmaz et al.'s reimplementation of its Algorithm 1, github.com/Bilkent-CYBORG/R-PSI); our choices:

* Radius: Hoeffding for rewards in a range of width `span_d`, with Bardenet & Maillard's (Bernoulli 2015)
  finite-population factor ρ_t = min(1 − (t−1)/N, (1 − t/N)(1 + 1/t)) of Serfling's inequality:
  β_d(t) = span_d·sqrt(ρ_t·log(4KDt²/δ)/(2t)), so β = 0 at t = N = n (the mean is exact); ρ_t = 1 for an i.i.d.
  sampler (`finite=False`). An objective known exactly (a set-level fidelity) has β_d = 0, and D counts only the
  estimated objectives.
* Blocks: the paper pulls one sample per active arm a round (`block=1`, the default: n ≤ 400 rounds of sorts over
  ≤ |Θ| arms is fast); a larger block checks the rules at fewer counts, which the union bound allows.
* Horizon: n pulls per arm at most; an i.i.d. run that reaches it leaves its still-active arms undeclared.
* Span on a table (`units_span`): c_i − o_θi lies in [min c − 1, max c] (o ∈ [0, 1]), width 1 + ptp(c); the
  per-input fidelity's width is read off the layer, where a live run would take it from the metric's range.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.front.pareto import dominated_by
from pipeline.search.racing.unit_outcomes import UnitOutcomes

Sampler = Callable[[np.ndarray, int, int], np.ndarray]
"""`sample(arms, start, stop)` -> (len(arms), stop − start, 2): the reward vectors of `arms` on inputs start..stop−1
of the run's input order."""


@dataclass(frozen=True)
class Identification:
    """What a set-identification run (bandit, successive halving) spent and declared.

    `declared`: one row per declared configuration, columns `evaluations` (cumulative model evaluations when it was
    declared, non-decreasing) and `index` (its row in Θ); a declaration is never withdrawn. `evaluations`: the total
    spent (one configuration on one input = 1). `answer`: the declared indices, ascending. `pulls`: the inputs
    evaluated per configuration (|Θ|,), summing to `evaluations`."""

    declared: pd.DataFrame
    evaluations: int
    answer: np.ndarray
    pulls: np.ndarray


def declarations(rows: Sequence[tuple[int, int]], pulls: np.ndarray) -> Identification:
    """The `Identification` of (evaluations, index) declaration rows, in declaration order, and per-arm pulls."""
    declared = pd.DataFrame(rows, columns=["evaluations", "index"], dtype=np.int64)
    return Identification(declared, int(pulls.sum()), np.sort(declared["index"].to_numpy()), pulls)


def evaluations_to_recover(declared: pd.DataFrame, members: Sequence[int] | np.ndarray) -> float:
    """The evaluations at which every configuration of `members` had been declared (0 for an empty set), NaN if
    some member never was."""
    members = np.unique(np.asarray(members, dtype=np.int64))
    if not len(members):
        return 0.0
    first = declared.groupby("index")["evaluations"].min()
    if not np.isin(members, first.index.to_numpy()).all():
        return float("nan")
    return float(first.loc[members].max())


def hoeffding_serfling_radius(t: int, population: int | None, arms: int, objectives: int, delta: float,
                              span: float) -> float:
    """β(t): the half-width of a mean of t rewards of range width `span`, drawn without replacement from a
    population of `population` (None: with replacement / i.i.d.), union-bounded over `arms` × `objectives` × every
    count t at total failure probability below `delta`. 0 once t reaches the population."""
    if t < 1:
        raise ValueError(f"the radius needs at least one pull, got t={t}")
    factor = 1.0 if population is None else max(0.0, min(1 - (t - 1) / population, (1 - t / population) * (1 + 1 / t)))
    return span * float(np.sqrt(factor * np.log(4 * arms * max(objectives, 1) * t**2 / delta) / (2 * t)))


def pareto_bandit(sample: Sampler, n_arms: int, n: int, *, span: Sequence[float] = (1.0, 1.0),
                  exact: Sequence[bool] = (False, False), delta: float = 0.1, eps: float = 0.0, block: int = 1,
                  finite: bool = True) -> Identification:
    """Auer et al.'s Pareto front identification (module docstring) over `n_arms` arms of 2-D rewards from
    `sample`, at most n pulls per arm (the population size when `finite`, else an i.i.d. horizon), confidence
    1 − `delta`, accuracy `eps` (added to every objective), `block` pulls per active arm a round."""
    if not 0 < delta < 1 or eps < 0 or block < 1 or n < 1 or n_arms < 1:
        raise ValueError(f"need 0 < delta < 1, eps ≥ 0, block ≥ 1, n ≥ 1, n_arms ≥ 1; got {delta}, {eps}, {block}, {n}, {n_arms}")
    span, exact = np.asarray(span, dtype=float), np.asarray(exact, dtype=bool)
    estimated = int((~exact).sum())
    sums, pulls = np.zeros((n_arms, 2)), np.zeros(n_arms, dtype=np.int64)
    active, rows, t, spent = np.arange(n_arms), [], 0, 0
    while len(active) and t < n:
        stop = min(t + block, n)
        rewards = np.asarray(sample(active, t, stop), dtype=float)
        if rewards.shape != (len(active), stop - t, 2):
            raise ValueError(f"the sampler must return ({len(active)}, {stop - t}, 2) rewards, got {rewards.shape}")
        sums[active] += rewards.sum(axis=1)
        pulls[active] += stop - t
        spent += len(active) * (stop - t)
        t = stop
        beta = np.array([0.0 if known else hoeffding_serfling_radius(t, n if finite else None, n_arms, estimated,
                                                                      delta, width) for width, known in zip(span, exact)])
        mean = sums[active] / t
        kept = ~dominated_by(mean - beta, mean + beta)  # A_1
        a1, m1 = active[kept], mean[kept]
        optimal = ~dominated_by(m1 + beta, m1 - beta + eps, own=np.arange(len(a1)))  # P_1
        needed = dominated_by(-(m1[~optimal] - beta + eps), -(m1[optimal] + beta))  # a P_1 arm that may discard one
        accepted = a1[optimal][~needed]  # P_2
        rows.extend((spent, int(i)) for i in np.sort(accepted))
        active = np.setdiff1d(a1, accepted)
    return declarations(rows, pulls)


def units_sampler(units: UnitOutcomes, order: np.ndarray) -> Sampler:
    """The sampler of a per-input layer: rewards (c_i − o_θi, f_θi) of inputs `order[start:stop]`; a set-level
    fidelity (|Θ|,) is the same exact value on every input."""
    order = np.asarray(order)

    def sample(arms: np.ndarray, start: int, stop: int) -> np.ndarray:
        inputs = order[start:stop]
        loss = units.clean[inputs][None, :] - units.outcomes[np.ix_(arms, inputs)]
        if units.fidelity.ndim == 2:
            fidelity = units.fidelity[np.ix_(arms, inputs)]
        else:
            fidelity = np.repeat(units.fidelity[arms][:, None], len(inputs), axis=1)
        return np.stack([loss, fidelity], axis=2)

    return sample


def units_span(units: UnitOutcomes) -> tuple[float, float]:
    """The width of each objective's per-input reward range on a layer (module docstring); 0 for a set-level fidelity."""
    fidelity = float(np.ptp(units.fidelity)) if units.fidelity.ndim == 2 else 0.0
    return 1.0 + float(np.ptp(units.clean)), fidelity


def units_pareto_bandit(units: UnitOutcomes, order: np.ndarray, *, delta: float = 0.1, eps: float = 0.0,
                        block: int = 1) -> Identification:
    """`pareto_bandit` on a per-input layer along the input order `order` (a permutation of its n inputs)."""
    n = len(units.clean)
    if sorted(np.asarray(order).tolist()) != list(range(n)):
        raise ValueError(f"order must be a permutation of the {n} inputs")
    return pareto_bandit(units_sampler(units, order), len(units.outcomes), n, span=units_span(units),
                         exact=(False, units.fidelity.ndim == 1), delta=delta, eps=eps, block=block)
