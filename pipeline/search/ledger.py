"""The budget accounting of TestNav Algorithm 1, shared by every search method.

Every proposal consumes one unit of the proposal budget B (the counter b). A configuration not yet in
E, the set of evaluated configurations, is evaluated by the oracle and added to E; one already in E is
served from the cache: it counts in b but not in u = |E|, the number of unique configurations
evaluated (§4.1, "Search metrics"). The ledger records one trace row per proposal.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.search.oracle import Oracle
from pipeline.space import Space

TRACE_COLUMNS = ("b", "is_new", "u", "delta", "rho")


class Ledger:
    """Proposals, cache and trace of one search run with budget B over Θ.

    Holds two arrays of |Θ| entries (seen flags and cached objectives), so it suits lattices up to
    some 10^7 configurations.
    """

    def __init__(self, oracle: Oracle, space: Space, budget: int) -> None:
        if int(budget) < 1:
            raise ValueError(f"the proposal budget B must be at least 1, got {budget}")
        clash = sorted(set(space.names) & set(TRACE_COLUMNS))
        if clash:
            raise ValueError(f"perturbation names {clash} clash with the trace columns {list(TRACE_COLUMNS)}; rename them")
        self.oracle, self.space, self.budget = oracle, space, int(budget)
        self.b = 0
        self.u = 0
        self._seen = np.zeros(space.size, dtype=bool)
        self._cache = np.zeros((space.size, 2))
        self._thetas = np.zeros((self.budget, space.n_dims), dtype=np.int64)
        self._is_new = np.zeros(self.budget, dtype=bool)
        self._u = np.zeros(self.budget, dtype=np.int64)
        self._values = np.zeros((self.budget, 2))

    @property
    def remaining(self) -> int:
        """B − b: proposals left."""
        return self.budget - self.b

    @property
    def exhausted(self) -> bool:
        return self.b >= self.budget

    def propose(self, thetas: np.ndarray) -> np.ndarray:
        """Propose the rows of `thetas` in order, as far as the budget allows (Algorithm 1, lines 10-16).

        Returns the (k, 2) objectives (δ, ρ) of the k = min(len(thetas), B − b) proposals made; the
        rest are not proposed. Within one call, a configuration repeated after its first occurrence is
        a cache hit like any other.
        """
        thetas = np.asarray(thetas, dtype=np.int64).reshape(-1, self.space.n_dims)[: self.remaining]
        idx = self.space.indices(thetas)
        k = len(idx)
        is_new = ~self._seen[idx]
        if is_new.any():
            _, first = np.unique(idx, return_index=True)
            first_occurrence = np.zeros(k, dtype=bool)
            first_occurrence[first] = True
            is_new &= first_occurrence
            self._cache[idx[is_new]] = self.oracle.evaluate_batch(thetas[is_new])
            self._seen[idx[is_new]] = True
        values = self._cache[idx]
        rows = slice(self.b, self.b + k)
        self._thetas[rows] = thetas
        self._is_new[rows] = is_new
        self._u[rows] = self.u + np.cumsum(is_new)
        self._values[rows] = values
        self.b += k
        self.u += int(is_new.sum())
        return values

    def trace(self) -> pd.DataFrame:
        """One row per proposal made: b (1-based), θ (one column per dimension), is_new, u, δ, ρ."""
        n = self.b
        df = pd.DataFrame(self._thetas[:n], columns=list(self.space.names))
        df.insert(0, "b", np.arange(1, n + 1, dtype=np.int64))
        df["is_new"] = self._is_new[:n]
        df["u"] = self._u[:n]
        df["delta"] = self._values[:n, 0]
        df["rho"] = self._values[:n, 1]
        return df
