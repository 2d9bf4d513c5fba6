"""Input files validated, not trusted: ground-truth tables, search traces and prediction records.

Pure functions over DataFrames. Each returns its table unchanged when it is valid and otherwise raises
`InputError` (a `ConfigError`), one line naming the file (`label`, passed in by the caller), the row
(0-based position in the table, i.e. in the file as read) and the column, the bad value and what is
allowed. Nothing stored in a file is taken at face value when it can be re-derived: the Pareto flags and
normalised objectives of a ground-truth table are recomputed, the budget accounting of a trace (b, u,
is_new, cache hits) is replayed from its θ sequence.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from pipeline.config.errors import InputError, Text
from pipeline.pareto import pareto_mask

_MAX_LISTED = 10


# ---- column checks ----------------------------------------------------------------------------------

def _require_columns(table: pd.DataFrame, required: Sequence[str], label: str) -> None:
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputError(label, Text(f"columns {list(table.columns)}"), f"the columns {list(required)}; missing {missing}")


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _no_missing(table: pd.DataFrame, column: str, label: str) -> None:
    na = table[column].isna().to_numpy()
    if na.any():
        row = _first(na)
        raise InputError(label, table[column].iloc[row], "a value (not NaN or null)", row=row, column=column)


def _integer_column(table: pd.DataFrame, column: str, label: str, what: str) -> np.ndarray:
    """The column as int64, or an error naming the first value that is not an integer."""
    _no_missing(table, column, label)
    series = table[column]
    if ptypes.is_integer_dtype(series.dtype) and not ptypes.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.int64)
    bad = np.array([isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in series.to_numpy(object)])
    row = _first(bad) if bad.any() else 0
    raise InputError(label, series.iloc[row], f"{what} in an integer column (the column has dtype {series.dtype})", row=row, column=column)


def _number_column(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    """The column as finite float64, or an error naming the first bad value."""
    _no_missing(table, column, label)
    series = table[column]
    if not ptypes.is_numeric_dtype(series.dtype) or ptypes.is_bool_dtype(series.dtype):
        raise InputError(label, series.iloc[0], f"a finite number in a numeric column (the column has dtype {series.dtype})",
                         row=0, column=column)
    values = series.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = _first(bad)
        raise InputError(label, values[row], "a finite number", row=row, column=column)
    return values


def _bool_column(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    """The column as bool, or an error: string or numeric flags are not trusted ('False' is truthy)."""
    _no_missing(table, column, label)
    series = table[column]
    if not ptypes.is_bool_dtype(series.dtype):
        bad = np.array([not isinstance(v, (bool, np.bool_)) for v in series.to_numpy(object)])
        row = _first(bad) if bad.any() else 0
        raise InputError(label, series.iloc[row], f"true or false in a boolean column (the column has dtype {series.dtype})",
                         row=row, column=column)
    return series.to_numpy(dtype=bool)


def _levels(table: pd.DataFrame, names: Sequence[str], levels: int, label: str) -> np.ndarray:
    """The (rows, n) level matrix, each level an integer in 0..levels-1."""
    grid = np.stack([_integer_column(table, n, label, f"a level 0..{levels - 1}") for n in names], axis=1)
    for j, name in enumerate(names):
        bad = (grid[:, j] < 0) | (grid[:, j] >= levels)
        if bad.any():
            row = _first(bad)
            raise InputError(label, grid[row, j], f"a level in 0..{levels - 1}", row=row, column=name)
    return grid


def _indices(grid: np.ndarray, levels: int) -> np.ndarray:
    """Lexicographic index of each θ (θ_1 most significant), as `pipeline.space.Space.indices`."""
    weights = levels ** np.arange(grid.shape[1] - 1, -1, -1, dtype=np.int64)
    return grid @ weights


def _theta(grid: np.ndarray, row: int) -> str:
    return "(" + ",".join(str(int(v)) for v in grid[row]) + ")"


def _theta_of(index: int, n: int, levels: int) -> str:
    digits = [(index // levels**k) % levels for k in range(n - 1, -1, -1)]
    return "(" + ",".join(str(d) for d in digits) + ")"


def _minmax(values: np.ndarray) -> np.ndarray:
    """Min-max normalisation over Θ to [0, 1], a constant column mapping to 0 (as `pipeline.groundtruth.minmax`)."""
    lo, hi = values.min(), values.max()
    return np.zeros_like(values) if hi == lo else (values - lo) / (hi - lo)


# ---- ground-truth tables ----------------------------------------------------------------------------

def validate_groundtruth(table: pd.DataFrame, space_names: Sequence[str], levels: int, metrics: Sequence[str],
                         label: str) -> pd.DataFrame:
    """Check a ground-truth table of Θ = {0..levels-1}^len(space_names) under `metrics`; return it.

    Columns: the dimension columns (integer levels, named after the perturbations, in order, before
    `order`), `order`, `delta`, `delta_norm`, and per metric m `rho_<m>`, `rho_<m>_norm`, `pareto_<m>`
    (boolean); other columns (task metric, timings) are accepted, not required. Exactly one row per
    configuration; finite values; `order` = number of active perturbations; the normalised objectives
    recomputed by min-max over Θ and the Pareto flags recomputed with `pipeline.pareto.pareto_mask` on
    (delta_norm, rho_<m>_norm), and compared (the first mismatching configuration is the error).
    """
    names, levels, metrics = list(space_names), int(levels), list(metrics)
    objective_columns = ["delta", "delta_norm"] + [c for m in metrics for c in (f"rho_{m}", f"rho_{m}_norm")]
    _require_columns(table, names + ["order"] + objective_columns + [f"pareto_{m}" for m in metrics], label)
    columns = list(table.columns)
    before = columns[: columns.index("order")]
    if before != names:
        raise InputError(label, Text(f"columns {before} before 'order'"),
                         f"the dimension columns {names}, in this order, then 'order'", column="order")
    size = levels ** len(names)
    if len(table) == 0:
        raise InputError(label, Text("0 rows"), f"one row per configuration of Θ ({size} rows)")
    grid = _levels(table, names, levels, label)
    idx = _indices(grid, levels)
    dup = pd.Series(idx).duplicated().to_numpy()
    if dup.any():
        row = _first(dup)
        first = _first(idx == idx[row])
        raise InputError(label, Text(f"configuration {_theta(grid, row)}"), f"one row per configuration of Θ; "
                         f"{_theta(grid, row)} already appears in row {first}", row=row)
    if len(idx) != size:
        missing = np.setdiff1d(np.arange(size), idx)
        listed = ", ".join(_theta_of(int(i), len(names), levels) for i in missing[:_MAX_LISTED])
        more = f" and {len(missing) - _MAX_LISTED} more" if len(missing) > _MAX_LISTED else ""
        raise InputError(label, Text(f"{len(idx)} rows"), f"one row per configuration of Θ ({levels}^{len(names)} = {size} rows); "
                         f"missing {listed}{more}")
    order = _integer_column(table, "order", label, "a count of active perturbations")
    active = (grid > 0).sum(axis=1)
    bad = order != active
    if bad.any():
        row = _first(bad)
        raise InputError(label, int(order[row]), f"{int(active[row])}, the number of active perturbations of "
                         f"{_theta(grid, row)}", row=row, column="order")
    values = {c: _number_column(table, c, label) for c in objective_columns}
    for raw, norm in [("delta", "delta_norm")] + [(f"rho_{m}", f"rho_{m}_norm") for m in metrics]:
        expected = _minmax(values[raw])
        bad = ~np.isclose(values[norm], expected, rtol=1e-9, atol=1e-12)
        if bad.any():
            row = _first(bad)
            raise InputError(label, values[norm][row], f"{float(expected[row])!r}, {raw} min-max normalised over Θ (recomputed), "
                             f"at {_theta(grid, row)}", row=row, column=norm)
    for m in metrics:
        column = f"pareto_{m}"
        stored = _bool_column(table, column, label)
        recomputed = pareto_mask(np.column_stack([values["delta_norm"], values[f"rho_{m}_norm"]]))
        bad = stored != recomputed
        if bad.any():
            row = _first(bad)
            status = "Pareto-optimal" if recomputed[row] else "dominated"
            raise InputError(label, bool(stored[row]), f"{str(bool(recomputed[row])).lower()}: configuration {_theta(grid, row)} is "
                             f"{status} on (delta_norm, rho_{m}_norm) (flags recomputed, {int(bad.sum())} differ)",
                             row=row, column=column)
    return table


# ---- search traces ----------------------------------------------------------------------------------

def validate_trace(trace: pd.DataFrame, space_names: Sequence[str], levels: int, budget: int, label: str, *,
                   method: str | None = None, single_pass: bool = False) -> pd.DataFrame:
    """Check a search trace (`pipeline.search.ledger.Ledger.trace`) over Θ with proposal budget B; return it.

    Columns b, one per dimension, is_new, u, delta, rho (others are accepted). One row per proposal:
    b = 1..n (1-based, as the ledger writes it), levels in range, finite δ and ρ. Re-derived from the θ
    sequence: is_new (first proposal of its θ), u (distinct θ so far) and the cache (a repeated θ carries
    the δ, ρ of its first proposal). Accounting: n = B, or n < B only when every configuration of Θ was
    evaluated (u = |Θ|: single-pass methods such as Random Search stop there, having nothing left to
    propose). With `method` (the name of the search method that wrote it), its own rule: exactly
    min(B, |Θ|) distinct proposals when it is `single_pass` (its class says so), exactly B otherwise.
    """
    names, levels, budget = list(space_names), int(levels), int(budget)
    _require_columns(trace, ["b"] + names + ["is_new", "u", "delta", "rho"], label)
    n, size = len(trace), levels ** len(names)
    if budget < 1:
        raise InputError(label, budget, "a proposal budget B ≥ 1 (the budget passed in)", column="b")
    if n == 0:
        raise InputError(label, Text("0 rows"), "at least one proposal", column="b")
    b = _integer_column(trace, "b", label, "a proposal counter")
    bad = b != np.arange(1, n + 1)
    if bad.any():
        row = _first(bad)
        raise InputError(label, int(b[row]), f"{row + 1}: b counts proposals 1, 2, … in row order", row=row, column="b")
    grid = _levels(trace, names, levels, label)
    is_new = _bool_column(trace, "is_new", label)
    u = _integer_column(trace, "u", label, "a count of distinct configurations")
    delta, rho = _number_column(trace, "delta", label), _number_column(trace, "rho", label)
    idx = _indices(grid, levels)
    _, first_rows, inverse = np.unique(idx, return_index=True, return_inverse=True)
    first = np.zeros(n, dtype=bool)
    first[first_rows] = True
    bad = is_new != first
    if bad.any():
        row = _first(bad)
        why = "first proposal of" if first[row] else f"a repeat (first proposed in row {int(first_rows[inverse[row]])}) of"
        raise InputError(label, bool(is_new[row]), f"{str(bool(first[row])).lower()}: row {row} is the {why} {_theta(grid, row)}",
                         row=row, column="is_new")
    expected_u = np.cumsum(first)
    bad = u != expected_u
    if bad.any():
        row = _first(bad)
        raise InputError(label, int(u[row]), f"{int(expected_u[row])}, the number of distinct configurations proposed in rows "
                         f"0..{row}", row=row, column="u")
    origin = first_rows[inverse]
    for column, values in (("delta", delta), ("rho", rho)):
        bad = values != values[origin]
        if bad.any():
            row = _first(bad)
            raise InputError(label, values[row], f"{float(values[origin[row]])!r}, the value of {_theta(grid, row)} when first proposed "
                             f"in row {int(origin[row])} (a repeat is a cache hit)", row=row, column=column)
    distinct = int(expected_u[-1])
    if method is not None and single_pass:
        if n != min(budget, size) or distinct != n:
            raise InputError(label, Text(f"{n} proposals, {distinct} distinct"), f"min(B, |Θ|) = {min(budget, size)} proposals, "
                             f"all distinct ({method} proposes each configuration once)", column="b")
    elif method is not None:
        if n != budget:
            raise InputError(label, Text(f"{n} proposals"), f"exactly B = {budget} proposals ({method} spends the whole budget)",
                             column="b")
    elif n > budget or (n < budget and distinct < size):
        raise InputError(label, Text(f"{n} proposals"), f"exactly B = {budget} proposals, or fewer only once all |Θ| = {size} "
                         f"configurations are evaluated (this trace evaluated {distinct})", column="b")
    return trace


# ---- prediction records -----------------------------------------------------------------------------

_RECORD_ROW = re.compile(r"^records row (\d+), column '([^']+)': (.*) \(value .*\)$")


def expected_conditions(corruptions: Sequence[str], severities: Sequence[int]) -> list[str]:
    """Condition names of the records stage, `<corruption>-<severity>` (as scripts/records.py writes them)."""
    return [f"{name}-{int(sev)}" for name in corruptions for sev in severities]


def _records_error(err: ValueError, df: pd.DataFrame, label: str) -> InputError:
    """`validate_records`' message as an InputError naming the file; row positions are those of `df`."""
    text = " ".join(str(err).split())
    match = _RECORD_ROW.match(text)
    if match:
        row, column, what = int(match.group(1)), match.group(2), match.group(3)
        allowed = "a value (not NaN or null)" if what == "missing value" else what
        return InputError(label, df[column].iloc[row], allowed, row=row, column=column)
    return InputError(label, Text("rejected"), text)


def validate_records_cells(records: pd.DataFrame, models: Sequence[str], conditions: Sequence[str], label: str, *,
                           n_classes: int | None = None, allow_extra: bool = False) -> pd.DataFrame:
    """Check a prediction-record table and that every (model, condition) cell of the config is present; return it.

    Row-level checks are `pipeline.paired.records.validate_records` (run on a copy with a fresh 0..n-1
    index, so a reported row is the position in the file). `n_classes` defaults to `records.attrs
    ["n_classes"]`, else one more than the largest label present. Cells of a model or condition the
    config does not name are an error too unless `allow_extra` (a stale file from another config).
    """
    from pipeline.paired.records import LABEL_COLUMNS, validate_records

    df = records.reset_index(drop=True)
    if n_classes is None:
        n_classes = records.attrs.get("n_classes")
    if n_classes is None:
        labels = [df[c].max() for c in LABEL_COLUMNS if c in df.columns and ptypes.is_integer_dtype(df[c].dtype) and len(df)]
        n_classes = int(max(labels)) + 1 if labels else 1
    try:
        validate_records(df, int(n_classes))
    except ValueError as err:
        raise _records_error(err, df, label) from None
    present = set(zip(df["model"].astype(str), df["condition"].astype(str)))
    expected = [(str(m), str(c)) for m in models for c in conditions]
    missing = [cell for cell in expected if cell not in present]
    total = f"{len(models)} models × {len(conditions)} conditions = {len(expected)} cells"
    if missing:
        listed = ", ".join(f"({m}, {c})" for m, c in missing[:_MAX_LISTED])
        more = f" and {len(missing) - _MAX_LISTED} more" if len(missing) > _MAX_LISTED else ""
        raise InputError(label, Text(f"{len(missing)} (model, condition) cells missing: {listed}{more}"),
                         f"every cell of the config present ({total})", column="model, condition")
    extra = sorted(present - set(expected))
    if extra and not allow_extra:
        listed = ", ".join(f"({m}, {c})" for m, c in extra[:_MAX_LISTED])
        more = f" and {len(extra) - _MAX_LISTED} more" if len(extra) > _MAX_LISTED else ""
        raise InputError(label, Text(f"{len(extra)} cells not in the config: {listed}{more}"),
                         f"only the cells of the config ({total}); rerun the records stage", column="model, condition")
    return records

