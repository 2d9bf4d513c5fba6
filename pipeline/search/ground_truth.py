"""A benchmark–metric pair of a ground-truth table (TestNav §4.1): the lattice Θ, a table oracle over
the normalised objectives (δ, ρ) and the exhaustive Pareto set P*, the target every search is scored on.

The table is the `groundtruth` stage's: one row per θ, the dimension columns (integer levels) first,
then `order`, then `delta_norm`, `rho_<metric>_norm` and `pareto_<metric>` among others.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.search.scoring.metrics import index_mask, pareto_flags
from pipeline.search.oracle import TableOracle
from pipeline.front.space import Space


def table_space(table: pd.DataFrame) -> Space:
    """Θ of a ground-truth table: its dimension columns are those before `order`, levels 0..max."""
    if "order" not in table.columns:
        raise ValueError(f"a ground-truth table has the dimension columns, then 'order'; got columns {list(table.columns)}")
    names = tuple(table.columns[: list(table.columns).index("order")])
    if not names:
        raise ValueError("the ground-truth table has no dimension columns before 'order'")
    return Space(names, int(table[list(names)].to_numpy().max()) + 1)


def table_metrics(table: pd.DataFrame) -> list[str]:
    """The fidelity metrics m with a `pareto_<m>` column, in table order."""
    return [c.removeprefix("pareto_") for c in table.columns if c.startswith("pareto_")]


@dataclass(frozen=True)
class GroundTruth:
    """One benchmark–metric pair: Θ, the oracle on (delta_norm, rho_<metric>_norm), P* as a mask over indices,
    and the core (θ on the front in ≥ 95% of the paired bootstrap resamples of the inputs: `set_<metric>` of a
    table written with per-input outcomes, `pipeline.front.per_input`) as a mask, None for a table without."""

    benchmark: str
    metric: str
    space: Space
    oracle: TableOracle
    pareto: np.ndarray
    core: np.ndarray | None = None

    @classmethod
    def from_table(cls, table: pd.DataFrame, benchmark: str, metric: str, space: Space | None = None) -> "GroundTruth":
        space = space or table_space(table)
        if len(table) != space.size:
            raise ValueError(f"the ground-truth table of {benchmark!r} has {len(table)} rows; Θ has {space.size} configurations")
        pareto = pareto_flags(table, space, metric)
        if not pareto.any():
            raise ValueError(f"P* of {benchmark!r} under {metric!r} is empty")
        oracle = TableOracle.from_table(table, space, delta="delta_norm", rho=f"rho_{metric}_norm")
        column = f"set_{metric}"
        core = index_mask(table, space, (table[column] == "core").to_numpy()) if column in table.columns else None
        return cls(benchmark, metric, space, oracle, pareto, core)
