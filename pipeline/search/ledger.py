"""The budget accounting of TestNav Algorithm 1, shared by every search method.

Every proposal consumes one unit of the proposal budget B (the counter b). A configuration not yet in
E, the set of evaluated configurations, is evaluated by the oracle and added to E; one already in E is
served from the cache: it counts in b but not in u = |E|, the number of unique configurations
evaluated (§4.1, "Search metrics"). The ledger records one trace row per proposal.

Rounds (beyond the paper: parallel evaluation). With q workers (`batch_size`), the new configurations
of one `propose` call are evaluated in rounds of at most q, one oracle batch each; every call starts a
new round, because a method that calls again has waited for the answers. A proposal's `round` is the
round its value became known (a cache hit: the round in progress, or the last one). Rounds to full
recall measure wall-clock time in units of one parallel evaluation.

Cost in model evaluations. Where the oracle knows n, the test inputs of a full evaluation, each
proposal's row records `inputs`, the model evaluations it cost (its inputs through the model: n, fewer for a
configuration a racing oracle stopped early, 0 for a cache hit), and `evaluations`, their running sum: the cost a
user pays, against the exhaustive |Θ|·n; from a live benchmark also `seconds_perturb`, `seconds_infer` and
`seconds_fidelity`, the time the proposal's evaluation took (0 for a cache hit). The ledger also keeps which configurations were completed (evaluated on
every input) and the variance of each answer as an estimate, for a method that models its observations' noise.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.front.pareto import pareto_mask
from pipeline.search.oracle import SECONDS, Oracle
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

TRACE_COLUMNS = ("b", "round", "is_new", "u", "delta", "rho", "est_recall", "est_core", "inputs", "evaluations", *SECONDS)
Progress = Callable[[dict], None]  # called once per finished round: {round, b, u, front, est_recall, est_core}


class Ledger:
    """Proposals, cache and trace of one search run with budget B over Θ.

    Holds two arrays of |Θ| entries (seen flags and cached objectives), so it suits lattices up to
    some 10^7 configurations.
    """

    def __init__(self, oracle: Oracle, space: Space, budget: int, batch_size: int = 1, progress: Progress | None = None) -> None:
        if int(budget) < 1:
            raise ValueError(f"the proposal budget B must be at least 1, got {budget}")
        if int(batch_size) < 1:
            raise ValueError(f"the batch size q (configurations evaluated per round) must be at least 1, got {batch_size}")
        clash = sorted(set(space.names) & set(TRACE_COLUMNS))
        if clash:
            raise ValueError(f"perturbation names {clash} clash with the trace columns {list(TRACE_COLUMNS)}; rename them")
        self.oracle, self.space, self.budget, self.batch_size = oracle, space, int(budget), int(batch_size)
        self.b = 0
        self.u = 0
        self.round = 0
        self._seen = np.zeros(space.size, dtype=bool)
        self._cache = np.zeros((space.size, 2))
        self._cost = np.full(space.size, np.nan)  # model evaluations each evaluated configuration cost
        self._complete = np.zeros(space.size, dtype=bool)
        self._variance = np.zeros((space.size, 2))
        self._timing = np.full((space.size, 3), np.nan)  # live: the SECONDS each evaluated configuration took
        self._thetas = np.zeros((self.budget, space.n_dims), dtype=np.int64)
        self._is_new = np.zeros(self.budget, dtype=bool)
        self._u = np.zeros(self.budget, dtype=np.int64)
        self._inputs = np.zeros(self.budget)
        self._seconds = np.zeros((self.budget, 3))
        self._values = np.zeros((self.budget, 2))
        self._round = np.zeros(self.budget, dtype=np.int64)
        self._estimate = np.full(self.budget, np.nan)
        self._core_estimate = np.full(self.budget, np.nan)
        self.progress = progress
        self._reported = 0  # the last round `progress` was told of

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
        a cache hit like any other. The new configurations are evaluated in rounds of at most q (module
        docstring), one `oracle.evaluate_batch` each.
        """
        self._report()
        thetas = np.asarray(thetas, dtype=np.int64).reshape(-1, self.space.n_dims)[: self.remaining]
        idx = self.space.indices(thetas)
        k = len(idx)
        is_new = ~self._seen[idx]
        if is_new.any():
            _, first = np.unique(idx, return_index=True)
            first_occurrence = np.zeros(k, dtype=bool)
            first_occurrence[first] = True
            is_new &= first_occurrence
        new_rows = np.flatnonzero(is_new)
        for start in range(0, len(new_rows), self.batch_size):
            batch = new_rows[start : start + self.batch_size]
            answers = self.oracle.evaluate_counted(thetas[batch])
            where = idx[batch]
            self._cache[where], self._cost[where] = answers.values, answers.inputs
            self._complete[where], self._variance[where] = answers.complete, answers.variance
            if answers.seconds is not None:
                self._timing[where] = answers.seconds
            self._seen[where] = True
        rounds = self.round + -(-np.cumsum(is_new) // self.batch_size)  # ⌈new so far / q⌉ rounds into this call
        values = self._cache[idx]
        rows = slice(self.b, self.b + k)
        self._round[rows] = rounds
        self._thetas[rows] = thetas
        self._is_new[rows] = is_new
        self._u[rows] = self.u + np.cumsum(is_new)
        self._inputs[rows] = np.where(is_new, self._cost[idx], 0.0)
        self._seconds[rows] = np.where(is_new[:, None], self._timing[idx], 0.0)
        self._values[rows] = values
        self.b += k
        self.u += int(is_new.sum())
        if len(new_rows):
            self.round = int(rounds[-1])
        return values

    def estimate(self, recall: float, core: float | None = None) -> None:
        """Record the method's own estimate of Recall@P* after its latest proposal (the trace's
        `est_recall`; NaN where a method gives none) and, where it gives one, of its recall of the core
        (`est_core`, `pipeline.search.stopping.core_recall`)."""
        if self.b == 0:
            raise ValueError("no proposal has been made yet, so there is nothing to estimate the recall of")
        self._estimate[self.b - 1] = float(recall)
        if core is not None:
            self._core_estimate[self.b - 1] = float(core)
        self._report()

    def complete(self, indices: np.ndarray) -> np.ndarray:
        """Whether each evaluated configuration of `indices` was evaluated on every input (not stopped by racing)."""
        return self._complete[np.asarray(indices, dtype=np.int64)]

    def variance(self, indices: np.ndarray) -> np.ndarray:
        """(k, 2): the variance of each evaluated configuration's answer as an estimate of its (δ, ρ) (0 if complete)."""
        return self._variance[np.asarray(indices, dtype=np.int64)]

    @property
    def has_inputs(self) -> bool:
        """Whether the oracle holds per-unit outcomes (`pipeline.search.racing.unit_outcomes`)."""
        return getattr(self.oracle, "inputs", None) is not None

    def inputs_of(self, indices: np.ndarray) -> UnitOutcomes:
        """The per-unit outcomes of the configurations `indices`, which must all have been evaluated: a method
        sees the outcomes of what it paid for and nothing else."""
        if not self.has_inputs:
            raise ValueError("the oracle holds no per-unit outcomes (give TableOracle its `inputs`)")
        indices = np.asarray(indices, dtype=np.int64)
        unseen = indices[~self._seen[indices]]
        if len(unseen):
            raise ValueError(f"configuration {self.space.theta(int(unseen[0]))} has not been evaluated; "
                             "its per-unit outcomes are not known to the search")
        partial = indices[~self._complete[indices]]
        if len(partial):
            raise ValueError(f"configuration {self.space.theta(int(partial[0]))} was stopped by racing before its last "
                             "input; the search knows its outcomes on some inputs only")
        return self.oracle.inputs.rows(indices)

    def _report(self) -> None:
        """Tell `progress` of the last finished round, once: when the method estimates its recall after it,
        when it proposes again, or when the trace is read (the run's end)."""
        if self.progress is None or self.round == self._reported:
            return
        self._reported = self.round
        front = int(pareto_mask(self._cache[self._seen]).sum())
        self.progress({"round": self.round, "b": self.b, "u": self.u, "front": front, "est_recall": self.last_estimate,
                       "est_core": self._last(self._core_estimate)})

    def _last(self, estimates: np.ndarray) -> float:
        done = estimates[: self.b]
        known = done[~np.isnan(done)]
        return float(known[-1]) if len(known) else float("nan")

    @property
    def last_estimate(self) -> float:
        """The latest recorded estimate of Recall@P*, NaN if none."""
        return self._last(self._estimate)

    def trace(self) -> pd.DataFrame:
        """One row per proposal made: b (1-based), θ (one column per dimension), round, is_new, u, δ, ρ,
        est_recall (est_core) where the method recorded estimates (carried forward from its last one), inputs
        and evaluations where the oracle knows n, and the seconds of each evaluation where it times them (module
        docstring)."""
        self._report()
        n = self.b
        df = pd.DataFrame(self._thetas[:n], columns=list(self.space.names))
        df.insert(0, "b", np.arange(1, n + 1, dtype=np.int64))
        df["round"] = self._round[:n]
        df["is_new"] = self._is_new[:n]
        df["u"] = self._u[:n]
        df["delta"] = self._values[:n, 0]
        df["rho"] = self._values[:n, 1]
        for column, estimates in (("est_recall", self._estimate[:n]), ("est_core", self._core_estimate[:n])):
            if not np.isnan(estimates).all():
                df[column] = pd.Series(estimates).ffill().to_numpy()
        if n and not np.isnan(self._inputs[:n]).any():
            df["inputs"] = self._inputs[:n].astype(np.int64)
            df["evaluations"] = np.cumsum(df["inputs"].to_numpy())
        if n and not np.isnan(self._seconds[:n]).any():
            for k, column in enumerate(SECONDS):
                df[column] = self._seconds[:n, k]
        return df
