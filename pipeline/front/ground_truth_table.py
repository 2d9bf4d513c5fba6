"""The ground-truth table (TestNav §3.2: one row per θ of Θ with its levels, order, ψ, δ and ρ per fidelity
metric): the normalised objectives and the P* flags that make the final table (`finalize`), its P* summary,
and `validate_groundtruth`, the check every reader of a table applies. It knows the table, not how its
values are computed (`pipeline.benchmark.ground_truth`), so the search reads it without the benchmark's code."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from pipeline.front import columns as col
from pipeline.config.errors import InputError, Text
from pipeline.front.pareto import pareto_mask


def minmax(values: np.ndarray) -> np.ndarray:
    """Min-max normalisation over Θ to [0, 1]; a constant column maps to 0."""
    values = np.asarray(values, dtype=float)
    lo, hi = values.min(), values.max()
    return np.zeros_like(values) if hi == lo else (values - lo) / (hi - lo)


def finalize(raw: pd.DataFrame, metrics: Sequence[str], task_metric: str = "accuracy") -> pd.DataFrame:
    """Add normalised objectives and the P* flag per fidelity metric to a complete raw table.

    Columns: levels, order, <task_metric>, delta, delta_norm, rho_<m>, rho_<m>_norm, pareto_<m>."""
    df = raw.rename(columns={"psi": task_metric}).copy()
    df["delta_norm"] = minmax(df["delta"].to_numpy())
    for m in metrics:
        df[f"rho_{m}_norm"] = minmax(df[f"rho_{m}"].to_numpy())
        df[f"pareto_{m}"] = pareto_mask(df[["delta_norm", f"rho_{m}_norm"]].to_numpy())
    return df


def pareto_summary(table: pd.DataFrame, metrics: Sequence[str], n_dims: int) -> dict[str, Any]:
    """|P*| and counts by perturbation order 1..n per fidelity metric (TestNav Table 3)."""
    out: dict[str, Any] = {}
    for m in metrics:
        front = table[table[f"pareto_{m}"]]
        out[m] = {"size": int(len(front)), **{f"order_{k}": int((front["order"] == k).sum()) for k in range(0, n_dims + 1)}}
    return out


def validate_groundtruth(table: pd.DataFrame, space_names: Sequence[str], levels: int, metrics: Sequence[str],
                         label: str) -> pd.DataFrame:
    """Check a ground-truth table of Θ = {0..levels-1}^len(space_names) under `metrics`; return it.

    Raises `InputError` naming the file (`label`), row and column. Columns: the dimension columns (integer
    levels, named after the perturbations, in order, before `order`), `order`, `delta`, `delta_norm`, and
    per metric m `rho_<m>`, `rho_<m>_norm`, `pareto_<m>` (boolean); other columns (task metric, timings)
    are accepted, not required. Exactly one row per configuration; finite values; `order` = number of
    active perturbations; the normalised objectives recomputed (`minmax`) and the Pareto flags recomputed
    with `pipeline.front.pareto.pareto_mask` on (delta_norm, rho_<m>_norm), and compared (the first mismatching
    configuration is the error).
    """
    names, levels, metrics = list(space_names), int(levels), list(metrics)
    objective_columns = ["delta", "delta_norm"] + [c for m in metrics for c in (f"rho_{m}", f"rho_{m}_norm")]
    col.require_columns(table, names + ["order"] + objective_columns + [f"pareto_{m}" for m in metrics], label)
    columns = list(table.columns)
    before = columns[: columns.index("order")]
    if before != names:
        raise InputError(label, Text(f"columns {before} before 'order'"),
                         f"the dimension columns {names}, in this order, then 'order'", column="order")
    size = levels ** len(names)
    if len(table) == 0:
        raise InputError(label, Text("0 rows"), f"one row per configuration of Θ ({size} rows)")
    grid = col.level_grid(table, names, levels, label)
    idx = col.lattice_indices(grid, levels)
    dup = pd.Series(idx).duplicated().to_numpy()
    if dup.any():
        row = col.first(dup)
        raise InputError(label, Text(f"configuration {col.theta_text(grid, row)}"), f"one row per configuration of Θ; "
                         f"{col.theta_text(grid, row)} already appears in row {col.first(idx == idx[row])}", row=row)
    if len(idx) != size:
        missing = np.setdiff1d(np.arange(size), idx)
        listed = ", ".join(col.theta_text_of(int(i), len(names), levels) for i in missing[:col.MAX_LISTED])
        more = f" and {len(missing) - col.MAX_LISTED} more" if len(missing) > col.MAX_LISTED else ""
        raise InputError(label, Text(f"{len(idx)} rows"), f"one row per configuration of Θ ({levels}^{len(names)} = {size} rows); "
                         f"missing {listed}{more}")
    order = col.integer_column(table, "order", label, "a count of active perturbations")
    active = (grid > 0).sum(axis=1)
    bad = order != active
    if bad.any():
        row = col.first(bad)
        raise InputError(label, int(order[row]), f"{int(active[row])}, the number of active perturbations of "
                         f"{col.theta_text(grid, row)}", row=row, column="order")
    values = {c: col.number_column(table, c, label) for c in objective_columns}
    for raw, norm in [("delta", "delta_norm")] + [(f"rho_{m}", f"rho_{m}_norm") for m in metrics]:
        expected = minmax(values[raw])
        bad = ~np.isclose(values[norm], expected, rtol=1e-9, atol=1e-12)
        if bad.any():
            row = col.first(bad)
            raise InputError(label, values[norm][row], f"{float(expected[row])!r}, {raw} min-max normalised over Θ (recomputed), "
                             f"at {col.theta_text(grid, row)}", row=row, column=norm)
    for m in metrics:
        column = f"pareto_{m}"
        stored = col.bool_column(table, column, label)
        recomputed = pareto_mask(np.column_stack([values["delta_norm"], values[f"rho_{m}_norm"]]))
        bad = stored != recomputed
        if bad.any():
            row = col.first(bad)
            status = "Pareto-optimal" if recomputed[row] else "dominated"
            raise InputError(label, bool(stored[row]), f"{str(bool(recomputed[row])).lower()}: configuration "
                             f"{col.theta_text(grid, row)} is {status} on (delta_norm, rho_{m}_norm) (flags recomputed, "
                             f"{int(bad.sum())} differ)", row=row, column=column)
    return table
