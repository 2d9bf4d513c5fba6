"""Identified intervals (Eq. 1) of the reliability targets H, L and dM_k (Table 2) for one cell at the
information levels I0, Ik, I5 of Definition 1.

H = P(C=1, Z=1, C'=0, Z'=1) and L = P(T=k, Z=1, Z'=0) divide by N. Closed forms: Eq. (4) at I0, Eq. (7)
for H and Eq. (5) for L at Ik; H at I5 is exact through the wrong–wrong block (`wrongblock`), and L and dM_k
at I5 equal their Ik intervals (Theorem 1). dM_k divides by K and is NaN when no feasible correspondence
has K > 0; at I0 it ranges over all correspondences with K > 0 (Appendix A.10).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.paired.identification.cell import Cell, as_cell
from pipeline.paired.identification.confidence import (
    dmk_bounds_fixed,
    dmk_bounds_marginal,
    dmk_independent,
    dmk_observed,
)
from pipeline.paired.identification.levels import (
    LEVELS,
    band,
    check_level,
    context,
    extremes,
)
from pipeline.paired.identification.states import class_counts

TARGETS = ("H", "L", "dM_k")


def check_threshold(value: float, name: str) -> float:
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return value


def event_bounds(cell: Cell, clean_threshold: float, perturbed_threshold: float, levels=LEVELS) -> dict[str, dict]:
    """H and L intervals (rates), observed values and Eq. (4) independent values at every level."""
    ctx = context(cell, clean_threshold)
    n = cell.n_records
    accept_p = cell.pert_max >= perturbed_threshold
    accepted, rejected = accept_p, ~accept_p
    nowhere = np.zeros(n, dtype=bool)
    cc, pc, z = cell.clean_correct, cell.pert_correct, ctx.clean_accept
    sizes = ctx.counts.n
    out: dict[str, dict] = {"H": {}, "L": {}}
    t = cell.per_class(~pc & accepted)
    v = cell.per_class(pc & rejected)
    out["H"]["observed"] = float((cc & z & ~pc & accepted).sum() / n)
    out["L"]["observed"] = float((cc & z & pc & rejected).sum() / n)
    out["H"]["independent"] = float((ctx.u * t / sizes).sum() / n)
    out["L"]["independent"] = float((ctx.u * v / sizes).sum() / n)
    for level in levels:
        lo, hi = extremes(ctx, band(ctx, accepted, nowhere, level), level, 1.0, 0.0)
        out["H"][level] = (lo.sum() / n, hi.sum() / n)
        lo, hi = extremes(ctx, band(ctx, nowhere, rejected, level), level, 0.0, 1.0)
        out["L"][level] = (lo.sum() / n, hi.sum() / n)
    return out


def cell_bounds(records: pd.DataFrame | Cell, threshold: float, perturbed_threshold: float | None = None,
                levels=LEVELS) -> pd.DataFrame:
    """Identified intervals of H, L and dM_k at I0, Ik and I5 for one cell.

    Acceptance is ``maxprob >= threshold`` (the perturbed side uses `perturbed_threshold` when given).
    Returns one row per (target, level) with columns target, level, lower, upper, observed, independent;
    `independent` is the class-conditional independent value (Eq. 4 for H and L, Eq. 14 for dM_k), the
    same on every level since it needs only the marginal records. `levels` restricts the rows (for
    example to the closed-form levels I0 and Ik).
    """
    cell = as_cell(records)
    threshold = check_threshold(threshold, "threshold")
    tau_p = threshold if perturbed_threshold is None else check_threshold(perturbed_threshold, "perturbed_threshold")
    levels = [check_level(level) for level in levels]
    events = event_bounds(cell, threshold, tau_p, levels)
    fixed = dmk_bounds_fixed(cell, class_counts(cell).k) if {"Ik", "I5"} & set(levels) else None
    dmk = {"Ik": fixed, "I5": fixed, "observed": dmk_observed(cell), "independent": dmk_independent(cell)}
    if "I0" in levels:
        dmk["I0"] = dmk_bounds_marginal(cell)
    rows = []
    for target, values in (("H", events["H"]), ("L", events["L"]), ("dM_k", dmk)):
        for level in levels:
            lower, upper = values[level]
            rows.append({"target": target, "level": level, "lower": float(lower), "upper": float(upper),
                         "observed": values["observed"], "independent": values["independent"]})
    return pd.DataFrame(rows)
