"""Search methods by name, and `run_search`, the one entry point the stages call."""
from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline.plugins.catalog import SEARCH_METHODS as METHODS
from pipeline.search.methods.base import Method
from pipeline.search.ledger import Progress
from pipeline.search.oracle import Oracle
from pipeline.front.space import Space


def method_class(name: str) -> type[Method]:
    """The class registered as `name` (or a plug-in's import path `module:Class`, a `Method` subclass);
    fails with the list of valid names."""
    cls = METHODS.get(name)
    if not (isinstance(cls, type) and issubclass(cls, Method)):
        raise ValueError(f"search method {name!r} is {cls!r}, not a subclass of pipeline.search.methods.base.Method")
    return cls


def get_method(name: str, **hyperparameters: Any) -> Method:
    """An instance of method `name`; unknown hyperparameters fail with the ones the method accepts."""
    cls = method_class(name)
    unknown = sorted(set(hyperparameters) - set(cls.hyperparameters()))
    if unknown:
        raise ValueError(f"method {name!r} has no hyperparameters {unknown}; it accepts {list(cls.hyperparameters()) or 'none'}")
    return cls(**hyperparameters)


def run_search(method: str, oracle: Oracle, space: Space, budget: int, seed: int, truth: Oracle | None = None,
               batch_size: int = 1, progress: Progress | None = None, **hyperparameters: Any) -> pd.DataFrame:
    """Run `method` with proposal budget `budget` and RNG seed `seed`, evaluating at most `batch_size`
    configurations per round; return its trace: one row per proposal with columns b, one per dimension
    (named `space.names`), round, is_new, u, delta, rho (and est_recall for a method that estimates its
    own recall). A method guided by another objective (`pipeline.search.methods.guided`) searches `oracle` and
    records the (δ, ρ) of `truth` in its trace. `progress` hears of every finished round (`Ledger`)."""
    trace = get_method(method, **hyperparameters).run(oracle, space, budget, seed, batch_size, progress)
    if truth is not None:
        trace[["delta", "rho"]] = truth.evaluate_batch(trace[list(space.names)].to_numpy())
    return trace
