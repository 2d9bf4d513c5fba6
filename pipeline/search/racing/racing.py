"""Racing over inputs: evaluate a configuration on slices of the test inputs and stop it as
soon as a completed configuration dominates it with confidence, so that a search pays model evaluations only
where they can change the front.

The unit of cost is a model evaluation: one configuration on one input (a forward pass; for code, a generation
and its tests). Fidelity ρ needs no model: it is computed on all n inputs at a configuration's first slice, so ρ
is exact from the start and only δ, the model's loss, is raced.

The rule, for a configuration θ raced along the fixed input order π (a seeded permutation of the n inputs, the
same for every θ, so every comparison is paired):

* Slices. θ is evaluated on π's first e_1 inputs, then up to e_2, … , e_K = n (`slice_ends`: e_1 = `FIRST`,
  each next end `GROWTH` times the last).
* Rivals. The configurations completed (evaluated on all n inputs) before θ's round, with ρ(θ') ≥ ρ(θ) and
  δ(θ') above the smallest completed δ (a δ clamped at 0 by max(ψ(D) − ψ, 0) cannot be beaten on δ).
* Bound. After each slice S of m < n inputs, for every rival θ' the paired differences d_i = o_θi − o_θ'i
  (i ∈ S; δ(θ') − δ(θ) is their mean over all n) give the lower bound
      L = d̄ − z · s · √((1 − m/n) / m'),
  with d̄ and s² the mean and variance of the m differences plus two pseudo-observations +1 and −1 (m' = m + 2,
  an Agresti–Min-style adjustment: with few discordant inputs the bound stays wide instead of collapsing to
  s = 0), and the finite-population correction 1 − m/n, because the target is the mean over the n inputs of
  the test set, not over an infinite population: at m = n there is nothing left to estimate.
* Decision. If some rival has L > 0, θ is dominated with confidence (ρ(θ') ≥ ρ(θ), δ(θ') > δ(θ)): it stops,
  having cost m evaluations. Otherwise it goes on to the next slice; a configuration that no rival dominates
  with confidence is evaluated on all n inputs, so every configuration the front needs is completed.
* Estimate. A stopped θ reports δ̂ = δ(θ*) − scale·d̄ (θ* the rival of largest L: the paired difference on S
  added to θ*'s exact δ) with variance scale²·s²·(1 − m/n)/m', and its exact ρ; a surrogate sees it with that
  noise (`pipeline.search.methods.pnd`).

Choices: z = `Z` = 1.645 (the one-sided 95% normal point), `FIRST` = 30 and `GROWTH` = 2, the cheapest setting
calibrated on the core of those tried on the development split (the settings and their costs: docs/search.md,
section 'Racing: the settings tried'). z is not the per-test quantile of a stated level: every rival is tested at
every slice and θ stops if any bound clears 0.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

FIRST = 30     # inputs of the first slice
GROWTH = 2.0   # each slice ends at GROWTH times the last one's end (the last at n)
Z = 1.645      # the bound's multiplier (module docstring: chosen on the development split)
_ORDER_STREAM = 30  # the input order's stream in np.random.SeedSequence([seed, _ORDER_STREAM])


def slice_ends(n: int, first: int = FIRST, growth: float = GROWTH) -> np.ndarray:
    """The cumulative input counts e_1 < … < e_K = n at which a raced configuration is checked."""
    if int(n) < 1 or int(first) < 1 or not float(growth) > 1.0:
        raise ValueError(f"racing needs n >= 1 inputs, a first slice >= 1 and growth > 1; got n={n}, first={first}, growth={growth}")
    ends, m = [], min(int(n), int(first))
    while m < n:
        ends.append(m)
        m = min(int(n), int(np.ceil(m * float(growth))))
    return np.array([*ends, int(n)], dtype=np.int64)


def input_order(n: int, seed: int) -> np.ndarray:
    """π: the seeded permutation of the n inputs that every raced configuration follows."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), _ORDER_STREAM])).permutation(int(n))


def paired_bounds(theta: np.ndarray, rivals: np.ndarray, n: int, z: float = Z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(L, d̄, variance of d̄) of each rival (module docstring) from θ's outcomes on the m inputs of a slice (m,) and
    the rivals' on the same inputs (k, m), outcomes in [0, 1]; d̄ is the plain mean of the m differences, L and the
    variance use the two pseudo-observations and the finite-population correction for a population of n."""
    theta, rivals = np.asarray(theta, dtype=float), np.asarray(rivals, dtype=float).reshape(-1, len(theta))
    m = len(theta)
    d = theta[None, :] - rivals
    total, squares = d.sum(axis=1), (d * d).sum(axis=1)
    m2 = m + 2
    mean2 = total / m2
    var = np.maximum((squares + 2.0 - m2 * mean2 ** 2) / (m2 - 1), 0.0)
    var_mean = var * max(0.0, 1.0 - m / n) / m2
    return mean2 - z * np.sqrt(var_mean), total / max(m, 1), var_mean


@dataclass(frozen=True)
class Raced:
    """One configuration's race: the inputs it cost, whether it was completed, the outcomes it has (on π's first
    `inputs` inputs, in π's order), and for a stopped one δ̂ and its variance."""

    inputs: int
    complete: bool
    outcomes: np.ndarray
    delta: float = float("nan")
    variance: float = 0.0


Outcomes = Callable[[list[tuple[int, np.ndarray]]], Sequence[np.ndarray]]  # [(θ index, input positions)] -> outcomes


class Race:
    """The racing rule over one search run (module docstring): the completed configurations (their exact δ and
    ρ and their outcomes on every input, in π's order) are the rivals of every later round."""

    def __init__(self, n: int, scale: float = 1.0, seed: int = 0, first: int = FIRST, growth: float = GROWTH, z: float = Z) -> None:
        if not float(scale) > 0:
            raise ValueError(f"scale must be positive, got {scale}")
        self.n, self.scale, self.z = int(n), float(scale), float(z)
        self.order = input_order(self.n, seed)
        self.ends = slice_ends(self.n, first, growth)
        self._values: list[tuple[float, float]] = []
        self._outcomes: list[np.ndarray] = []

    def complete(self, values: Sequence[float], outcomes: np.ndarray) -> None:
        """Add a completed configuration (exact (δ, ρ), outcomes on all n inputs in π's order) to the rivals."""
        self._values.append((float(values[0]), float(values[1])))
        self._outcomes.append(np.asarray(outcomes, dtype=float))

    def run(self, indices: Sequence[int], rho: Callable[[int], float], outcomes_of: Outcomes) -> list[Raced]:
        """Race the configurations `indices` (one round) slice by slice: every slice asks `outcomes_of` for the next
        inputs of all configurations still running, at once (a parallel evaluator runs them side by side), and
        `rho(index)` gives a configuration's exact fidelity once its first slice is in (live, the first slice
        computes it). Rivals are those completed before the round; the caller adds the completed ones (`complete`)
        once it knows their exact δ."""
        indices = [int(i) for i in indices]
        values = np.array(self._values, dtype=float).reshape(-1, 2)
        rivals_outcomes = np.array(self._outcomes, dtype=float).reshape(-1, self.n)
        usable = values[:, 0] > values[:, 0].min() if len(values) else np.zeros(0, dtype=bool)
        got: list[list[np.ndarray]] = [[] for _ in indices]
        running, done = list(range(len(indices))), [0] * len(indices)
        result: dict[int, Raced] = {}
        for end in self.ends:
            if not running:
                break
            answers = outcomes_of([(indices[j], self.order[done[j]:end]) for j in running])
            for j, answer in zip(running, answers):
                got[j].append(np.asarray(answer, dtype=float))
                done[j] = int(end)
            still = []
            for j in running:
                seen = np.concatenate(got[j])
                if end == self.n:
                    result[j] = Raced(self.n, True, seen)
                    continue
                rivals = np.flatnonzero(usable & (values[:, 1] >= float(rho(indices[j]))))
                if len(rivals):
                    bound, mean, var = paired_bounds(seen, rivals_outcomes[rivals, :end], self.n, self.z)
                    best = int(np.argmax(bound))
                    if bound[best] > 0:
                        r = rivals[best]
                        result[j] = Raced(int(end), False, seen, values[r, 0] - self.scale * mean[best], self.scale ** 2 * var[best])
                        continue
                still.append(j)
            running = still
        return [result[j] for j in range(len(indices))]
