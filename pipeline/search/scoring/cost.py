"""A search's cost in model evaluations, read from its trace's `inputs` and `evaluations` columns
(`pipeline.search.ledger`): one configuration on one test input is one evaluation, the exhaustive ground truth
costs |Θ|·n.

A set of configurations (the core, P*) is recovered when every member has been evaluated on all n inputs: a
configuration that racing stopped early (`pipeline.search.racing.racing`) has only an estimate of δ, so it does not
count as found, even if it is a member.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.front.space import Space


def completed(trace: pd.DataFrame, space: Space, n: int) -> np.ndarray:
    """Per proposal, the index in Θ of the configuration it completed (evaluated on all n inputs), −1 where it
    completed none (a cache hit, or a configuration stopped early)."""
    if "inputs" not in trace:
        raise ValueError("the trace has no `inputs` column: its oracle did not know n (give TableOracle its `inputs`)")
    idx = space.indices(trace[list(space.names)].to_numpy())
    return np.where(trace["inputs"].to_numpy() == int(n), idx, -1)


def evaluations_to_complete(trace: pd.DataFrame, members: np.ndarray, space: Space, n: int) -> float:
    """Model evaluations spent when the last member of `members` (a mask over Θ's indices) was completed; NaN if
    the run never completed them all (0 for an empty set)."""
    wanted = np.flatnonzero(members)
    if len(wanted) == 0:
        return 0.0
    done = completed(trace, space, n)
    hit = np.isin(done, wanted)
    if len(np.unique(done[hit])) < len(wanted):
        return float("nan")
    last = max(int(np.flatnonzero(done == w)[0]) for w in wanted)
    return float(trace["evaluations"].iloc[last])


def completed_share(trace: pd.DataFrame, members: np.ndarray, space: Space, n: int) -> float:
    """The share of `members` (a mask over Θ's indices) the trace completed (NaN for an empty set)."""
    wanted = np.flatnonzero(members)
    if len(wanted) == 0:
        return float("nan")
    return float(np.isin(wanted, completed(trace, space, n)).mean())
