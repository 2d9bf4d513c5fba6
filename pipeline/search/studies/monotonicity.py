"""How close δ and ρ are to monotone on the lattice Θ (TestNav §3.1-3.2).

Raising one severity level should not make a model better nor its inputs more faithful: along every
lattice edge θ → θ + e_i (one level up in dimension i, all other levels equal) δ should not decrease
(Eq. 1) and ρ should not increase (Eq. 2). `edge_monotonicity` measures, from a full table, the share
of edges along which that holds, per dimension and overall, and how large the violations are. A
violation smaller than `tol` counts as monotone (a table's noise floor, e.g. 1/|D| for accuracy).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.search.ground_truth import GroundTruth
from pipeline.front.space import Space

COLUMNS = ("dimension", "edges", "delta_monotone", "rho_monotone", "both_monotone", "delta_violation_max",
           "rho_violation_max", "delta_violation_mean", "rho_violation_mean")


def lattice_edges(space: Space, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (lower, upper) of every edge θ → θ + e_dim of Θ: ℓ^(n−1)·(ℓ−1) of them."""
    if not 0 <= dim < space.n_dims:
        raise ValueError(f"dimension {dim} is outside 0..{space.n_dims - 1}")
    grid = space.grid()
    lower = np.flatnonzero(grid[:, dim] < space.levels - 1)
    return lower, lower + space.levels ** (space.n_dims - 1 - dim)


def _row(name: str, d_step: np.ndarray, r_step: np.ndarray, tol: float) -> dict[str, float | str | int]:
    """Shares of monotone edges and violation sizes from the per-edge steps δ(θ+e_i) − δ(θ), ρ(θ+e_i) − ρ(θ)."""
    d_bad, r_bad = np.clip(-d_step, 0, None), np.clip(r_step, 0, None)  # δ fell / ρ rose
    d_ok, r_ok = d_bad <= tol, r_bad <= tol
    return {
        "dimension": name, "edges": int(len(d_step)),
        "delta_monotone": float(d_ok.mean()), "rho_monotone": float(r_ok.mean()), "both_monotone": float((d_ok & r_ok).mean()),
        "delta_violation_max": float(d_bad.max(initial=0.0)), "rho_violation_max": float(r_bad.max(initial=0.0)),
        "delta_violation_mean": float(d_bad[~d_ok].mean()) if (~d_ok).any() else 0.0,
        "rho_violation_mean": float(r_bad[~r_ok].mean()) if (~r_ok).any() else 0.0,
    }


def edge_monotonicity(objectives: np.ndarray, space: Space, tol: float = 0.0) -> pd.DataFrame:
    """Per dimension (one row each, named by `space.names`) and overall (last row, "all"): the number of
    lattice edges, the share along which δ does not decrease, ρ does not increase, and both, and the
    largest and mean violation (the mean over violating edges only; 0 if none).

    `objectives` is the full (|Θ|, 2) table of (δ, ρ) indexed by `space.indices` (`TableOracle.objectives`).
    """
    objectives = np.asarray(objectives, dtype=float)
    if objectives.shape != (space.size, 2):
        raise ValueError(f"objectives must have shape ({space.size}, 2), one (δ, ρ) row per configuration of Θ; got {objectives.shape}")
    if float(tol) < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    rows, d_all, r_all = [], [], []
    for dim, name in enumerate(space.names):
        lo, hi = lattice_edges(space, dim)
        d_step, r_step = objectives[hi, 0] - objectives[lo, 0], objectives[hi, 1] - objectives[lo, 1]
        rows.append(_row(name, d_step, r_step, tol))
        d_all.append(d_step)
        r_all.append(r_step)
    rows.append(_row("all", np.concatenate(d_all), np.concatenate(r_all), tol))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def table_monotonicity(table: pd.DataFrame, benchmark: str, metric: str, tol: float = 0.0) -> pd.DataFrame:
    """`edge_monotonicity` of a ground-truth table's normalised (δ, ρ_metric), with `benchmark` and `metric` columns."""
    problem = GroundTruth.from_table(table, benchmark, metric)
    out = edge_monotonicity(problem.oracle.objectives, problem.space, tol)
    out.insert(0, "metric", metric)
    out.insert(0, "benchmark", benchmark)
    return out
