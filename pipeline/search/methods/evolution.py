"""TestNav (Algorithm 1, §3.3) and the evolutionary baselines that share its loop and operators:
the scalar Genetic Algorithm (§4.2) and the δ-only and ρ-only ablations (§4.3).

The loop, exactly as Algorithm 1: sample μ configurations uniformly without replacement from Θ and
propose them; then, while b < B, let m = min(μ, B − b), draw up to m candidates Q = Variation(P, Θ, m)
(SBX η_c, polynomial mutation η_m, rounding repair, duplicate elimination), propose each (a candidate
already in E is a cache hit that still costs one unit of B), and select the next population P of μ
from P ∪ Q. The subclasses differ only in the objectives selection sees and in the survival rule.

Parent selection (the binary tournament inside Variation) is a setting of TestNav and its ablations,
`selection`, because the paper does not say which NSGA-II comparison it uses (§3.3 names only "Pareto
rank and crowding distance" for survival): "dominance" (the default) is pymoo's NSGA-II default, the
winner dominates its opponent, else the larger crowding distance wins; "rank_crowding" compares Pareto
rank first, then crowding distance. They differ when two contestants come from different fronts but
neither dominates the other (dominance falls through to crowding, rank does not). With one objective
(δ-only, ρ-only) the two rules decide every tournament alike. The scalar GA compares fitness, as
pymoo's GA does.

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

from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.search.methods.survival import fitness_survival, rank_and_crowding
from pipeline.search.methods.variation import TOURNAMENTS, Variation, binary_tournament
from pipeline.front.space import Space


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

    def _tournament(self):
        """The parent-selection rule Variation uses: `keys` rows in, winner indices out."""
        return binary_tournament

    def _tournament_keys(self, keys: np.ndarray, F: np.ndarray) -> np.ndarray:
        """What the tournament compares for each survivor: by default the survival keys."""
        return keys

    @abstractmethod
    def _objectives(self, values: np.ndarray) -> np.ndarray:
        """What selection maximises, from the oracle's (δ, ρ) rows: an (m, k) array."""

    @abstractmethod
    def _survive(self, F: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the n survivors among the rows of F, and their tournament keys."""

    def _initial(self, space: Space, n: int, rng: np.random.Generator) -> np.ndarray:
        """Indices of the n configurations of the initial population: drawn uniformly without replacement."""
        return rng.choice(space.size, size=n, replace=False)

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        if self.mu > space.size:
            raise ValueError(f"mu={self.mu} exceeds |Θ|={space.size}: the initial population is sampled without replacement")
        X = space.grid()[self._initial(space, min(self.mu, ledger.remaining), rng)]
        F = self._objectives(ledger.propose(X))
        keep, keys = self._survive(F, self.mu, rng)
        X, F = X[keep], F[keep]
        keys = self._tournament_keys(keys, F)
        variation = Variation(space, self.eta_c, self.eta_m, self.eliminate_duplicates, tournament=self._tournament())
        while not ledger.exhausted:
            m = min(self.mu, ledger.remaining)
            Q = variation(X, keys, m, rng)
            if len(Q) == 0:
                Q = variation.mate(X, keys, m, rng)[:m]
            FQ = self._objectives(ledger.propose(Q))
            X, F = np.concatenate([X, Q]), np.concatenate([F, FQ])
            keep, keys = self._survive(F, self.mu, rng)
            X, F = X[keep], F[keep]
            keys = self._tournament_keys(keys, F)


class TestNav(Evolutionary):
    """NSGA-II over (δ, ρ): survival by Pareto rank, then crowding distance (Algorithm 1); parents by
    binary tournament under `selection` ("dominance", pymoo's default, or "rank_crowding")."""

    name, label = "testnav", "TestNav"
    __test__ = False  # not a pytest test class despite its name

    def __init__(self, eta_c: float = 1.0, eta_m: float = 5.0, mu: int = 110, eliminate_duplicates: bool = True,
                 selection: str = "dominance") -> None:
        super().__init__(eta_c, eta_m, mu, eliminate_duplicates)
        if selection not in TOURNAMENTS:
            raise ValueError(f"unknown parent selection {selection!r}; valid choices: {', '.join(TOURNAMENTS)}")
        self.selection = str(selection)

    def _tournament(self):
        return TOURNAMENTS[self.selection]

    def _tournament_keys(self, keys: np.ndarray, F: np.ndarray) -> np.ndarray:
        """(rank, crowding) for "rank_crowding"; (rank, crowding, objectives) for "dominance"."""
        return np.column_stack([keys, F]) if self.selection == "dominance" else keys

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
