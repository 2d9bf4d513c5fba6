"""Search methods by name, and `run_search`, the one entry point the stages call."""
from __future__ import annotations

from typing import Any

import pandas as pd

from pipeline.search.base import Method
from pipeline.search.coverage import CoverageSearch
from pipeline.search.evolution import DeltaOnly, GeneticAlgorithm, RhoOnly, TestNav
from pipeline.search.greedy import GreedySearch
from pipeline.search.guided import guided_methods
from pipeline.search.oracle import Oracle
from pipeline.search.pnd import ParetoProbability
from pipeline.search.random_search import RandomSearch
from pipeline.registry import Registry
from pipeline.space import Space

METHODS: Registry[type[Method]] = Registry("search method")
for _cls in (TestNav, GreedySearch, GeneticAlgorithm, RandomSearch, DeltaOnly, RhoOnly, CoverageSearch, ParetoProbability,
             *guided_methods()):
    METHODS.register(_cls.name, _cls)


def method_class(name: str) -> type[Method]:
    """The class registered as `name`; fails with the list of valid names."""
    return METHODS.get(name)


def get_method(name: str, **hyperparameters: Any) -> Method:
    """An instance of method `name`; unknown hyperparameters fail with the ones the method accepts."""
    cls = method_class(name)
    unknown = sorted(set(hyperparameters) - set(cls.hyperparameters()))
    if unknown:
        raise ValueError(f"method {name!r} has no hyperparameters {unknown}; it accepts {list(cls.hyperparameters()) or 'none'}")
    return cls(**hyperparameters)


def run_search(method: str, oracle: Oracle, space: Space, budget: int, seed: int, truth: Oracle | None = None,
               **hyperparameters: Any) -> pd.DataFrame:
    """Run `method` with proposal budget `budget` and RNG seed `seed`; return its trace: one row per
    proposal with columns b, one per dimension (named `space.names`), is_new, u, delta, rho. A method
    guided by another objective (`pipeline.search.guided`) searches `oracle` and records the (δ, ρ) of
    `truth` in its trace."""
    trace = get_method(method, **hyperparameters).run(oracle, space, budget, seed)
    if truth is not None:
        trace[["delta", "rho"]] = truth.evaluate_batch(trace[list(space.names)].to_numpy())
    return trace
