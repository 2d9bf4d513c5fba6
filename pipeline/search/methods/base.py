"""The base of every search method: `run` sets up Algorithm 1's ledger and RNG, `_do` proposes."""
from __future__ import annotations

import inspect
from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from pipeline.search.ledger import Ledger, Progress
from pipeline.search.oracle import Oracle
from pipeline.front.space import Space


class Method(ABC):
    """A budgeted search over Θ. A run depends only on (method, hyperparameters, seed, oracle)."""

    name: str = ""
    label: str = ""
    single_pass: bool = False  # True: proposes each configuration at most once, so a run stops at |Θ| proposals
    guide: str = ""            # a ground-truth column the method searches instead of δ (`pipeline.search.methods.guided`)

    def __init__(self) -> None:
        """Methods without hyperparameters (Random, Greedy, Coverage) take no arguments."""

    @classmethod
    def hyperparameters(cls) -> tuple[str, ...]:
        """The keyword arguments the constructor accepts."""
        params = inspect.signature(cls.__init__).parameters
        return tuple(p for p in params if p != "self")

    def run(self, oracle: Oracle, space: Space, budget: int, seed: int, batch_size: int = 1,
            progress: Progress | None = None) -> pd.DataFrame:
        """Search with proposal budget `budget` and RNG seed `seed`, evaluating at most `batch_size`
        configurations per round; return the trace (see `Ledger.trace`). `progress` hears of every
        finished round (`Ledger`)."""
        ledger = Ledger(oracle, space, budget, batch_size, progress)
        self._do(ledger, space, np.random.default_rng(int(seed)))
        return ledger.trace()

    @abstractmethod
    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        """Make proposals through `ledger.propose` until the budget is spent or nothing is left. A
        method that chooses its next proposal from the last answers proposes `ledger.batch_size`
        configurations per call to use q parallel workers (each call is at least one round)."""
