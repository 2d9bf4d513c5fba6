"""TestNav (Algorithm 1, §3.3) and the evolutionary baselines that share its loop and operators:
the scalar Genetic Algorithm (§4.2) and the δ-only and ρ-only ablations (§4.3).

The loop, exactly as Algorithm 1: sample μ configurations uniformly without replacement from Θ and
propose them; then, while b < B, let m = min(μ, B − b), draw up to m candidates Q = Variation(P, Θ, m)
(SBX η_c, polynomial mutation η_m, rounding repair, duplicate elimination), propose each (a candidate
already in E is a cache hit that still costs one unit of B), and select the next population P of μ
from P ∪ Q. The subclasses differ only in the objectives selection sees and in the survival rule.

When Variation yields fewer than m candidates. With duplicate elimination on (the default), an
offspring equal to a member of P or to an earlier offspring of the same generation is discarded and
mating repeats, at most 100 rounds (pymoo's `n_max_iterations`). If that still leaves fewer than m,
Q is the shorter set and only its candidates are proposed (Algorithm 1: Variation produces "up to m"
candidates; b grows by |Q|). If it leaves none (P has converged so that every offspring is a copy of
a member of P), the generation proposes m offspring without duplicate elimination instead; they are
cache hits that consume budget, so b grows by m every generation and a run always ends with exactly B
proposals (unless B < μ, when the initial sample itself is cut to B).
"""
from __future__ import annotations

from abc import abstractmethod

import numpy as np

from pipeline.search.base import Method
from pipeline.search.ledger import Ledger
from pipeline.search.survival import fitness_survival, rank_and_crowding
from pipeline.search.variation import Variation
from pipeline.space import Space


class Evolutionary(Method):
    """Algorithm 1's loop; subclasses choose the objectives and the survival rule."""

    def __init__(self, eta_c: float = 1.0, eta_m: float = 5.0, mu: int = 110, eliminate_duplicates: bool = True) -> None:
        for key, value in (("eta_c", eta_c), ("eta_m", eta_m)):
            if not float(value) > 0:
                raise ValueError(f"{key} (the SBX / polynomial mutation distribution index) must be > 0, got {value}")
        if int(mu) != mu or int(mu) < 2:
            raise ValueError(f"the population size mu must be an integer >= 2, got {mu}")
        self.eta_c, self.eta_m, self.mu = float(eta_c), float(eta_m), int(mu)
        self.eliminate_duplicates = bool(eliminate_duplicates)

    @abstractmethod
    def _objectives(self, values: np.ndarray) -> np.ndarray:
        """What selection maximises, from the oracle's (δ, ρ) rows: an (m, k) array."""

    @abstractmethod
    def _survive(self, F: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the n survivors among the rows of F, and their tournament keys."""

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        if self.mu > space.size:
            raise ValueError(f"mu={self.mu} exceeds |Θ|={space.size}: the initial population is sampled without replacement")
        X = space.grid()[rng.choice(space.size, size=min(self.mu, ledger.remaining), replace=False)]
        F = self._objectives(ledger.propose(X))
        keep, keys = self._survive(F, self.mu, rng)
        X, F = X[keep], F[keep]
        variation = Variation(space, self.eta_c, self.eta_m, self.eliminate_duplicates)
        while not ledger.exhausted:
            m = min(self.mu, ledger.remaining)
            Q = variation(X, keys, m, rng)
            if len(Q) == 0:
                Q = variation.mate(X, keys, m, rng)[:m]
            FQ = self._objectives(ledger.propose(Q))
            X, F = np.concatenate([X, Q]), np.concatenate([F, FQ])
            keep, keys = self._survive(F, self.mu, rng)
            X, F = X[keep], F[keep]


class TestNav(Evolutionary):
    """NSGA-II over (δ, ρ): selection by Pareto rank, then crowding distance (Algorithm 1)."""

    name, label = "testnav", "TestNav"
    __test__ = False  # not a pytest test class despite its name

    def _objectives(self, values: np.ndarray) -> np.ndarray:
        return values

    def _survive(self, F, n, rng):
        return rank_and_crowding(F, n, rng)


class DeltaOnly(TestNav):
    """Ablation of §4.3: TestNav's operators and selection with δ as the only objective."""

    name, label = "delta_only", "δ-only"

    def _objectives(self, values: np.ndarray) -> np.ndarray:
        return values[:, :1]


class RhoOnly(TestNav):
    """Ablation of §4.3: TestNav's operators and selection with ρ as the only objective."""

    name, label = "rho_only", "ρ-only"

    def _objectives(self, values: np.ndarray) -> np.ndarray:
        return values[:, 1:]


class GeneticAlgorithm(Evolutionary):
    """Scalar baseline of §4.2: TestNav's population, SBX, mutation and duplicate elimination, with
    single-objective fitness survival and tournaments on s(θ) = min(δ(θ), ρ(θ))."""

    name, label = "ga", "Genetic Algorithm"

    def _objectives(self, values: np.ndarray) -> np.ndarray:
        return np.minimum(values[:, :1], values[:, 1:])

    def _survive(self, F, n, rng):
        return fitness_survival(F[:, 0], n)
