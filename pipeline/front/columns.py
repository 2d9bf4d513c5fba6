"""Columns of an input table read as typed arrays, validated, not trusted.

Each check returns the column (or raises `InputError`, a `ConfigError`): one line naming the file
(`label`, passed in by the caller), the row (0-based position in the table, i.e. in the file as read)
and the column, the bad value and what is allowed. Used by the readers of ground-truth tables
(`pipeline.benchmark.ground_truth.validate_groundtruth`) and search traces (`pipeline.search.traces.validate_trace`).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from pipeline.config.errors import InputError, Text

MAX_LISTED = 10  # configurations named in one message


def require_columns(table: pd.DataFrame, required: Sequence[str], label: str) -> None:
    """Every column of `required` is present."""
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputError(label, Text(f"columns {list(table.columns)}"), f"the columns {list(required)}; missing {missing}")


def first(mask: np.ndarray) -> int:
    """The first row where `mask` holds."""
    return int(np.flatnonzero(mask)[0])


def _no_missing(table: pd.DataFrame, column: str, label: str) -> None:
    na = table[column].isna().to_numpy()
    if na.any():
        row = first(na)
        raise InputError(label, table[column].iloc[row], "a value (not NaN or null)", row=row, column=column)


def integer_column(table: pd.DataFrame, column: str, label: str, what: str) -> np.ndarray:
    """The column as int64, or an error naming the first value that is not an integer."""
    _no_missing(table, column, label)
    series = table[column]
    if ptypes.is_integer_dtype(series.dtype) and not ptypes.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.int64)
    bad = np.array([isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) for v in series.to_numpy(object)])
    row = first(bad) if bad.any() else 0
    raise InputError(label, series.iloc[row], f"{what} in an integer column (the column has dtype {series.dtype})", row=row, column=column)


def number_column(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    """The column as finite float64, or an error naming the first bad value."""
    _no_missing(table, column, label)
    series = table[column]
    if not ptypes.is_numeric_dtype(series.dtype) or ptypes.is_bool_dtype(series.dtype):
        raise InputError(label, series.iloc[0], f"a finite number in a numeric column (the column has dtype {series.dtype})",
                         row=0, column=column)
    values = series.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = first(bad)
        raise InputError(label, values[row], "a finite number", row=row, column=column)
    return values


def bool_column(table: pd.DataFrame, column: str, label: str) -> np.ndarray:
    """The column as bool, or an error: string or numeric flags are not trusted ('False' is truthy)."""
    _no_missing(table, column, label)
    series = table[column]
    if not ptypes.is_bool_dtype(series.dtype):
        bad = np.array([not isinstance(v, (bool, np.bool_)) for v in series.to_numpy(object)])
        row = first(bad) if bad.any() else 0
        raise InputError(label, series.iloc[row], f"true or false in a boolean column (the column has dtype {series.dtype})",
                         row=row, column=column)
    return series.to_numpy(dtype=bool)


def level_grid(table: pd.DataFrame, names: Sequence[str], levels: int, label: str) -> np.ndarray:
    """The (rows, n) level matrix of the dimension columns `names`, each level an integer in 0..levels-1."""
    grid = np.stack([integer_column(table, n, label, f"a level 0..{levels - 1}") for n in names], axis=1)
    for j, name in enumerate(names):
        bad = (grid[:, j] < 0) | (grid[:, j] >= levels)
        if bad.any():
            row = first(bad)
            raise InputError(label, grid[row, j], f"a level in 0..{levels - 1}", row=row, column=name)
    return grid


def lattice_indices(grid: np.ndarray, levels: int) -> np.ndarray:
    """Lexicographic index of each θ (θ_1 most significant), as `pipeline.front.space.Space.indices`."""
    weights = levels ** np.arange(grid.shape[1] - 1, -1, -1, dtype=np.int64)
    return grid @ weights


def theta_text(grid: np.ndarray, row: int) -> str:
    """θ of one row of a level matrix, as `(1,0,2)`."""
    return "(" + ",".join(str(int(v)) for v in grid[row]) + ")"


def theta_text_of(index: int, n: int, levels: int) -> str:
    """θ of a lexicographic index of {0..levels-1}^n, as `(1,0,2)`."""
    digits = [(index // levels**k) % levels for k in range(n - 1, -1, -1)]
    return "(" + ",".join(str(d) for d in digits) + ")"
