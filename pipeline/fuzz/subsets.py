"""Subset enumeration and its Pareto frontier (chapter 9, §9.5 stages 1–2).

A configuration makes a subset S of the dimensions active and sets every other dimension to the
inactive value. An active dimension takes one of `candidate_values`; each subset is fitted by trying
every combination of candidates for its active dimensions and keeping the lowest error (a grid search;
one candidate means "no fitting": the active dimensions sit at that value). The frontier is the set of
subsets not dominated in (number of active dimensions, error), both minimised.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, as_evaluator
from pipeline.front.pareto import pareto_mask


@dataclass
class SubsetResult:
    """One configuration: its active dimensions, full parameter vector, error (`mae`) and per-target errors."""

    dims: list[int]
    dim_names: list[str]
    n_dims: int
    param_values: list[float]
    mae: float
    errors: dict[str, float]


def configuration(n_dims: int, active: Sequence[int], values: Sequence[float], inactive_value: float) -> np.ndarray:
    """Parameter vector with `active` dimensions at `values` and the rest at `inactive_value`."""
    params = np.full(int(n_dims), float(inactive_value))
    params[list(active)] = values
    return params


def subset_result(active: Sequence[int], dim_names: Sequence[str], params: np.ndarray, error: float, errors: dict) -> SubsetResult:
    active = sorted(int(i) for i in active)
    return SubsetResult(
        dims=active, dim_names=[str(dim_names[i]) for i in active], n_dims=len(active),
        param_values=[float(v) for v in params], mae=float(error), errors={t: float(v) for t, v in errors.items()},
    )


def check_candidates(candidate_values: Sequence[float]) -> tuple[float, ...]:
    values = tuple(float(v) for v in candidate_values)
    if not values or any(not np.isfinite(v) for v in values):
        raise ValueError(f"candidate_values must be a non-empty list of finite numbers, got {list(candidate_values)}")
    return values


def enumerate_subsets(
    dim_names: Sequence[str],
    evaluate_fn: EvaluateFn,
    max_subset_dims: int | None = 4,
    inactive_value: float = 1e6,
    candidate_values: Sequence[float] = (1.0,),
    *,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    progress: bool = False,
) -> list[SubsetResult]:
    """Every subset of 1..max_subset_dims dimensions, fitted over the candidate grid, best first.

    Σ_k C(d, k)·c^k evaluations for c candidates, all handed to the evaluator in one matrix. Sorted by
    error, then by the number of active dimensions, then by the dimensions themselves.
    """
    d = len(dim_names)
    if d == 0 or len(set(dim_names)) != d:
        raise ValueError(f"dim_names must be a non-empty list of distinct names, got {list(dim_names)}")
    k_max = d if max_subset_dims is None else int(max_subset_dims)
    if k_max < 1:
        raise ValueError(f"max_subset_dims must be at least 1 (or None for all {d}), got {max_subset_dims}")
    k_max = min(k_max, d)
    candidates = check_candidates(candidate_values)
    evaluator = as_evaluator(evaluate_fn, evaluate_batch_fn, progress)

    subsets, rows, owner = [], [], []
    for k in range(1, k_max + 1):
        for active in itertools.combinations(range(d), k):
            for values in itertools.product(candidates, repeat=k):
                rows.append(configuration(d, active, values, inactive_value))
                owner.append(len(subsets))
            subsets.append(active)
    errors, per_target = evaluator.many(np.array(rows), desc="subset enumeration")
    owner = np.array(owner)
    results = []
    for s, active in enumerate(subsets):
        members = np.flatnonzero(owner == s)
        best = int(members[np.argmin(errors[members])])  # first candidate on a tie
        results.append(subset_result(active, dim_names, rows[best], errors[best], {t: v[best] for t, v in per_target.items()}))
    results.sort(key=lambda r: (r.mae, r.n_dims, r.dims))
    return results


def pareto_frontier(results: Sequence[SubsetResult]) -> list[SubsetResult]:
    """Configurations not dominated in (active dimensions, error), both minimised; by size, then error."""
    if not results:
        return []
    points = -np.array([[r.n_dims, r.mae] for r in results], dtype=float)
    keep = pareto_mask(points)
    return sorted((r for r, k in zip(results, keep) if k), key=lambda r: (r.n_dims, r.mae, r.dims))
