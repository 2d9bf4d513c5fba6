"""The proposal budget B of a search run (TestNav §4.1: B = 5 × |Θ|, 6,480 on a 6^4 space): the one rule
the search, live-search and tuning stages and the schema all use."""
from __future__ import annotations


def search_budget(space_size: int, budget: int | None, budget_factor: int) -> int:
    """B: an explicit `budget` when given, else `budget_factor` × |Θ|."""
    if budget is not None:
        return int(budget)
    return int(budget_factor) * int(space_size)
