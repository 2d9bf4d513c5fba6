"""Variation(P, Θ, m) of TestNav Algorithm 1 (line 8, §3.3): binary tournament parent selection (by
rank then crowding, or pymoo's NSGA-II default, by dominance then crowding), SBX
crossover (index η_c), polynomial mutation (index η_m) and rounding repair to valid levels, with
pymoo's operators and pymoo's default duplicate elimination.

pymoo's `Mating` does exactly this on `Population` objects; its per-individual bookkeeping costs some
0.3-0.5 ms per offspring, more than the whole search may spend (the tuning grid makes millions of
proposals), so the same steps are applied here to plain arrays by calling the operators' own
array-level `_do` methods, in pymoo's order: crossover with probability `SBX.prob` per mating,
rounding, mutation with probability `PM.prob` per offspring, rounding, then duplicate elimination,
repeating mating (at most `n_max_iterations` times, pymoo's default 100) until m offspring are found.

One departure, for speed only: pymoo's later rounds mate just enough parents for the offspring still
missing; here every round mates for `oversample` × m offspring and keeps the first distinct ones it
needs. Offspring of different matings are exchangeable, so the candidates have the same distribution;
but a converged population, where most offspring are copies, needs far fewer rounds (each round's cost
is almost all fixed per-call overhead).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from pymoo.core.duplicate import DuplicateElimination
from pymoo.core.problem import Problem
from pymoo.core.variable import get
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.util.misc import random_permutations

from pipeline.front.space import Space


def binary_tournament(keys: np.ndarray, n_select: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `n_select` tournament winners among the rows of `keys` (k, 2).

    Contestants are paired as in pymoo's `TournamentSelection` (concatenated random permutations); the
    winner has the lower `keys[:, 0]` (Pareto rank, or negated fitness), then the higher `keys[:, 1]`
    (crowding distance), and a fair coin decides exact ties: pymoo's `binary_tournament` with
    `comp_by_rank_and_crowding` and its `comp_by_cv_and_fitness`, vectorised (pymoo loops in Python).
    """
    n = len(keys)
    pairs = random_permutations(math.ceil(2 * n_select / n), n, random_state=rng)[: 2 * n_select].reshape(n_select, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    ka, kb = keys[a], keys[b]
    a_wins = (ka[:, 0] < kb[:, 0]) | ((ka[:, 0] == kb[:, 0]) & (ka[:, 1] > kb[:, 1]))
    b_wins = (kb[:, 0] < ka[:, 0]) | ((ka[:, 0] == kb[:, 0]) & (kb[:, 1] > ka[:, 1]))
    coin = rng.random(n_select) < 0.5
    return np.where(a_wins, a, np.where(b_wins, b, np.where(coin, a, b)))


def dominance_tournament(keys: np.ndarray, n_select: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `n_select` tournament winners by Pareto dominance, then crowding distance: pymoo's
    NSGA-II default (`binary_tournament` with `tournament_type="comp_by_dom_and_crowding"`).

    `keys` is (k, 2 + n_obj): (Pareto rank, crowding distance, objectives maximised). Contestants are
    paired as in `binary_tournament` (same RNG draws); the winner is the one whose objectives dominate
    the other's (≥ on every objective, > on one); if neither dominates, the larger crowding distance
    wins, and a fair coin decides exact ties. The rank column is not read: two members of the same
    front never dominate each other, and a member of a better front need not dominate its opponent.
    """
    n = len(keys)
    pairs = random_permutations(math.ceil(2 * n_select / n), n, random_state=rng)[: 2 * n_select].reshape(n_select, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    fa, fb = keys[a, 2:], keys[b, 2:]
    a_dom = (fa >= fb).all(axis=1) & (fa > fb).any(axis=1)
    b_dom = (fb >= fa).all(axis=1) & (fb > fa).any(axis=1)
    ca, cb = keys[a, 1], keys[b, 1]
    a_wins = a_dom | (~b_dom & (ca > cb))
    b_wins = b_dom | (~a_dom & (cb > ca))
    coin = rng.random(n_select) < 0.5
    return np.where(a_wins, a, np.where(b_wins, b, np.where(coin, a, b)))


TOURNAMENTS = {"dominance": dominance_tournament, "rank_crowding": binary_tournament}


class LatticeDuplicateElimination(DuplicateElimination):
    """pymoo duplicate elimination for integer configurations: a row is a duplicate if it equals an
    earlier row of the same set or any row of another set. For integer rows this is exactly what pymoo's
    `DefaultDuplicateElimination` decides (Euclidean distance <= 1e-16), but it compares lattice
    indices in O(k log k) instead of building O(k²) distance matrices."""

    def __init__(self, space: Space) -> None:
        super().__init__(func=space.indices)
        self.size = space.size

    def _do(self, pop: np.ndarray, other: np.ndarray | None, is_duplicate: np.ndarray) -> np.ndarray:
        idx = self.func(pop)
        if other is None:
            _, first = np.unique(idx, return_index=True)
            repeated = np.ones(len(idx), dtype=bool)
            repeated[first] = False
            return is_duplicate | repeated
        present = np.zeros(self.size, dtype=bool)
        present[self.func(other)] = True
        return is_duplicate | present[idx]


class Variation:
    """Offspring of a population over Θ with levels 0..ℓ−1 (pymoo bounds xl = 0, xu = ℓ−1)."""

    def __init__(self, space: Space, eta_c: float, eta_m: float, eliminate_duplicates: bool = True, n_max_iterations: int = 100,
                 oversample: int = 4, tournament: Callable[[np.ndarray, int, np.random.Generator], np.ndarray] = binary_tournament) -> None:
        self.n_dims = space.n_dims
        self.tournament = tournament
        self.problem = Problem(n_var=space.n_dims, n_obj=1, xl=0.0, xu=float(space.levels - 1))
        self.crossover = SBX(eta=float(eta_c))
        self.mutation = PM(eta=float(eta_m))
        self.rounding = RoundingRepair()
        self.duplicates = LatticeDuplicateElimination(space) if eliminate_duplicates else None
        self.n_max_iterations = int(n_max_iterations)
        self.oversample = int(oversample)

    def mate(self, X: np.ndarray, keys: np.ndarray, n_offsprings: int, rng: np.random.Generator) -> np.ndarray:
        """One round of selection, crossover, mutation and repair: ceil(n/2) matings, two offspring each
        (children of the first parents first, as pymoo lays them out)."""
        n_matings = math.ceil(n_offsprings / 2)
        parents = self.tournament(keys, 2 * n_matings, rng).reshape(n_matings, 2)
        Xp = np.swapaxes(X[parents], 0, 1).astype(float)  # (2 parents, n_matings, n_dims), pymoo's layout
        cross = rng.random(n_matings) < get(self.crossover.prob, size=n_matings)
        if cross.any():
            Xp[:, cross] = self.crossover._do(self.problem, Xp, random_state=rng)[:, cross]
        Y = self.rounding._do(self.problem, Xp.reshape(-1, self.n_dims))
        mutated = self.mutation._do(self.problem, Y.astype(float), random_state=rng)
        mut = rng.random(len(Y)) <= get(self.mutation.prob, size=len(Y))
        Y[mut] = self.rounding._do(self.problem, mutated[mut])
        return Y.astype(np.int64)

    def __call__(self, X: np.ndarray, keys: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """Up to m offspring of the population X (μ, n_dims); `keys` rank its members for the tournament.

        With duplicate elimination, an offspring equal to a member of X or to an earlier offspring is
        dropped and mating repeats; after `n_max_iterations` rounds the offspring found so far are
        returned, possibly fewer than m, possibly none (the caller decides what to do then).
        """
        if self.duplicates is None:
            return self.mate(X, keys, m, rng)[:m]
        off = np.zeros((0, self.n_dims), dtype=np.int64)
        for _ in range(self.n_max_iterations):
            new = self.duplicates.do(self.mate(X, keys, self.oversample * m, rng), X, off)
            off = np.concatenate([off, new[: m - len(off)]])
            if len(off) >= m:
                break
        return off
