"""Search metrics of TestNav §4.1: Recall@P*(u), AUC-Recall@P*, and the unique configurations and
budget a run needs to recover the whole ground-truth front P*.

Conventions. Recall after u unique configurations is |E_u ∩ P*| / |P*|, for u = 1..|Θ|; a run that
stops before |Θ| unique configurations keeps its last recall for the remaining u. "Not reached" (a
run that never recovers all of P*) is NaN in `u_full` and `b_full`.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from pipeline.front.space import Space


def _keys(items: Any) -> list:
    """Configurations as hashable keys: ints (indices) stay ints, rows of θ become tuples."""
    arr = np.asarray(items)
    if arr.ndim == 2:
        return [tuple(row) for row in arr.tolist()]
    if arr.ndim == 1:
        return arr.tolist()
    raise ValueError(f"configurations must be a sequence of indices or of θ tuples, got an array of shape {arr.shape}")


def recall_curve(unique_configs_in_order: Sequence[Any] | np.ndarray, pareto_set: Sequence[Any] | np.ndarray, space_size: int) -> np.ndarray:
    """r_1..r_|Θ|, r_u = Recall@P*(u) = |E_u ∩ P*| / |P*| where E_u is the first u configurations given.

    Both arguments name configurations the same way (indices, or θ tuples / rows); after the last
    configuration given the recall stays at its last value (0 if none was given).
    """
    items, front = _keys(unique_configs_in_order), set(_keys(pareto_set))
    if not front:
        raise ValueError("the Pareto set P* is empty; recall needs at least one Pareto-optimal configuration")
    if len(items) > space_size:
        raise ValueError(f"{len(items)} unique configurations given, but |Θ| = {space_size}")
    if len(set(items)) != len(items):
        raise ValueError("the configurations must be unique (E_u is a set); drop repeated proposals first")
    hits = np.fromiter((item in front for item in items), dtype=bool, count=len(items))
    curve = np.zeros(int(space_size))
    if len(items):
        curve[: len(items)] = np.cumsum(hits) / len(front)
        curve[len(items) :] = curve[len(items) - 1]
    return curve


def auc_recall(recall: np.ndarray) -> float:
    """AUC-Recall@P* = (1/|Θ|) Σ_{i=1}^{|Θ|−1} (r_i + r_{i+1}) / 2, with |Θ| = len(recall)."""
    recall = np.asarray(recall, dtype=float)
    if recall.ndim != 1 or len(recall) < 1:
        raise ValueError(f"a recall curve is a 1-D array r_1..r_|Θ|, got shape {recall.shape}")
    return float(np.trapezoid(recall) / len(recall))


def pareto_flags(table: pd.DataFrame, space: Space, metric: str) -> np.ndarray:
    """P* as a boolean mask over configuration indices, from a ground-truth table's `pareto_<metric>`."""
    column = f"pareto_{metric}"
    if column not in table.columns:
        found = [c.removeprefix("pareto_") for c in table.columns if c.startswith("pareto_")]
        raise ValueError(f"the ground-truth table has no column {column!r}; its fidelity metrics are {found}")
    return index_mask(table, space, table[column].to_numpy(dtype=bool))


def index_mask(table: pd.DataFrame, space: Space, flags: np.ndarray) -> np.ndarray:
    """Per-row `flags` of a ground-truth table as a boolean mask over configuration indices."""
    mask = np.zeros(space.size, dtype=bool)
    mask[space.indices(table[list(space.names)].to_numpy())] = flags
    return mask


def _proposed(trace: pd.DataFrame, space: Space) -> np.ndarray:
    return space.indices(trace[list(space.names)].to_numpy())


def unique_in_order(trace: pd.DataFrame, space: Space) -> np.ndarray:
    """Indices of the configurations a run evaluated, in the order it first proposed them (E_u, u = 1, 2, …)."""
    return _proposed(trace, space)[trace["is_new"].to_numpy(dtype=bool)]


def recall_by_unique(trace: pd.DataFrame, pareto: np.ndarray, space: Space) -> np.ndarray:
    """Recall@P*(u) for u = 1..|Θ| (`pareto`: mask over configuration indices)."""
    return recall_curve(unique_in_order(trace, space), np.flatnonzero(pareto), space.size)


def recall_by_budget(trace: pd.DataFrame, pareto: np.ndarray, space: Space) -> np.ndarray:
    """Recall@P* after each proposal b = 1..len(trace), i.e. against the consumed budget."""
    size = int(np.sum(pareto))
    if size == 0:
        raise ValueError("the Pareto set P* is empty; recall needs at least one Pareto-optimal configuration")
    hits = trace["is_new"].to_numpy(dtype=bool) & pareto[_proposed(trace, space)]
    return np.cumsum(hits) / size


def _first_full(trace: pd.DataFrame, target: np.ndarray, space: Space) -> tuple[float, float, float]:
    """(u, b) at which a run has evaluated every configuration of `target` (NaN, NaN if never), and its final
    recall of `target`."""
    by_budget = recall_by_budget(trace, target, space)
    full = np.flatnonzero(by_budget >= 1.0)
    if not len(full):
        return float("nan"), float("nan"), float(by_budget[-1]) if len(by_budget) else 0.0
    at = int(full[0])
    return float(trace["u"].iloc[at]), float(trace["b"].iloc[at]), float(by_budget[-1])


def run_metrics(trace: pd.DataFrame, pareto: np.ndarray, space: Space, core: np.ndarray | None = None) -> dict[str, float]:
    """Per-run summary: AUC-Recall@P*, final recall, unique configurations (u_full) and proposals
    (b_full) needed to reach recall 1 (NaN if never), and the run's final u and b. With `core` (a mask over
    indices: the configurations on the front in ≥ 95% of the bootstrap resamples, `pipeline.front.membership`),
    the same for the core: `auc_core`, `final_recall_core`, `u_core`, `b_core` (NaN where the core is empty)."""
    u_full, b_full, final = _first_full(trace, pareto, space)
    out = {"auc": auc_recall(recall_by_unique(trace, pareto, space)), "final_recall": final, "u_full": u_full, "b_full": b_full,
           "unique": float(trace["u"].iloc[-1]) if len(trace) else 0.0, "proposals": float(len(trace))}
    if core is not None:
        nan = float("nan")
        u_core, b_core, final_core = _first_full(trace, core, space) if core.any() else (nan, nan, nan)
        out.update(auc_core=auc_recall(recall_by_unique(trace, core, space)) if core.any() else nan,
                   final_recall_core=final_core, u_core=u_core, b_core=b_core)
    return out
