"""R, the output of TestNav Algorithm 1 (line 21): every evaluated configuration, ranked by Pareto rank,
then by crowding distance — a prioritised list of severe, high-fidelity configurations to inspect."""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.search.methods.survival import pareto_rank_and_crowding
from pipeline.front.space import Space


def rank_evaluated(trace: pd.DataFrame, space: Space) -> pd.DataFrame:
    """E from a run's trace, one row per unique configuration (θ, δ, ρ, the proposal b that evaluated
    it), with its Pareto `rank` over E (0 = non-dominated) and its `crowding` distance within its front;
    sorted by rank ascending, then crowding descending, then b (earlier first)."""
    evaluated = trace.loc[trace["is_new"].to_numpy(dtype=bool), ["b", *space.names, "delta", "rho"]].reset_index(drop=True)
    rank, crowding = pareto_rank_and_crowding(evaluated[["delta", "rho"]].to_numpy())
    evaluated["rank"] = rank
    evaluated["crowding"] = crowding
    order = np.lexsort((evaluated["b"].to_numpy(), -crowding, rank))
    return evaluated.iloc[order].reset_index(drop=True)
