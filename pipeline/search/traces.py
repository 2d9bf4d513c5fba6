"""Search traces read back, validated, not trusted (`pipeline.search.ledger.Ledger.trace` writes them):
the schema checked and the budget accounting (b, u, is_new, cache hits) replayed from the θ sequence."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.front import columns as col
from pipeline.config.errors import InputError, Text
from pipeline.search.registry import method_class
from pipeline.front.space import Space

Traces = dict[str, dict[str, list[tuple[int, pd.DataFrame]]]]  # {metric: {method: [(seed, trace), …]}}


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
    col.require_columns(trace, ["b"] + names + ["is_new", "u", "delta", "rho"], label)
    n, size = len(trace), levels ** len(names)
    if budget < 1:
        raise InputError(label, budget, "a proposal budget B ≥ 1 (the budget passed in)", column="b")
    if n == 0:
        raise InputError(label, Text("0 rows"), "at least one proposal", column="b")
    b = col.integer_column(trace, "b", label, "a proposal counter")
    bad = b != np.arange(1, n + 1)
    if bad.any():
        row = col.first(bad)
        raise InputError(label, int(b[row]), f"{row + 1}: b counts proposals 1, 2, … in row order", row=row, column="b")
    grid = col.level_grid(trace, names, levels, label)
    is_new = col.bool_column(trace, "is_new", label)
    u = col.integer_column(trace, "u", label, "a count of distinct configurations")
    delta, rho = col.number_column(trace, "delta", label), col.number_column(trace, "rho", label)
    idx = col.lattice_indices(grid, levels)
    _, first_rows, inverse = np.unique(idx, return_index=True, return_inverse=True)
    first = np.zeros(n, dtype=bool)
    first[first_rows] = True
    bad = is_new != first
    if bad.any():
        row = col.first(bad)
        why = "first proposal of" if first[row] else f"a repeat (first proposed in row {int(first_rows[inverse[row]])}) of"
        raise InputError(label, bool(is_new[row]), f"{str(bool(first[row])).lower()}: row {row} is the {why} "
                         f"{col.theta_text(grid, row)}",
                         row=row, column="is_new")
    expected_u = np.cumsum(first)
    bad = u != expected_u
    if bad.any():
        row = col.first(bad)
        raise InputError(label, int(u[row]), f"{int(expected_u[row])}, the number of distinct configurations proposed in rows "
                         f"0..{row}", row=row, column="u")
    origin = first_rows[inverse]
    for column, values in (("delta", delta), ("rho", rho)):
        bad = values != values[origin]
        if bad.any():
            row = col.first(bad)
            raise InputError(label, values[row], f"{float(values[origin[row]])!r}, the value of {col.theta_text(grid, row)} "
                             "when first proposed "
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


def load_traces(folder: Path, space: Space, budget: int) -> Traces:
    """{metric: {method: [(seed, trace), …] sorted by seed}} of every trace under `folder`
    (`<metric>/<method>/seed=<k>.parquet`), each validated against Θ = `space` and the proposal budget
    `budget` by `validate_trace` under its method's own rule."""
    out: Traces = {}
    for path in sorted(Path(folder).glob("*/*/seed=*.parquet")):
        metric, method, seed = path.parent.parent.name, path.parent.name, int(path.stem.removeprefix("seed="))
        trace = validate_trace(pd.read_parquet(path), list(space.names), space.levels, budget, str(path),
                               method=method, single_pass=method_class(method).single_pass)
        out.setdefault(metric, {}).setdefault(method, []).append((seed, trace))
    for methods in out.values():
        for runs in methods.values():
            runs.sort(key=lambda item: item[0])
    return out
