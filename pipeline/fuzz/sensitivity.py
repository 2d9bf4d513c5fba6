"""Sensitivity profile by ablation (chapter 9, §9.3): Δ_i = error(θ with θ_i inactive) − error(θ)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, as_evaluator


@dataclass
class SensitivityResult:
    """One ablated dimension; rank 1 is the largest Δ. `harmful` flags Δ < 0 (§9.3.2: removing it helps)."""

    dim: int
    dim_name: str
    mae_with: float
    mae_without: float
    delta_mae: float
    importance_rank: int
    harmful: bool = False


def check_dims(params: np.ndarray, dim_names: Sequence[str]) -> np.ndarray:
    params = np.asarray(params, dtype=float)
    if params.ndim != 1 or params.size == 0:
        raise ValueError(f"params must be a non-empty 1-D vector, got shape {params.shape}")
    if len(dim_names) != params.size:
        raise ValueError(f"dim_names has {len(dim_names)} names for {params.size} parameters: {list(dim_names)}")
    if len(set(dim_names)) != len(dim_names):
        raise ValueError(f"dimension names must be distinct, got {list(dim_names)}")
    return params


def sensitivity_profile(
    params: np.ndarray,
    dim_names: Sequence[str],
    evaluate_fn: EvaluateFn,
    inactive_value: float = 1e6,
    *,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    progress: bool = False,
) -> list[SensitivityResult]:
    """Ablate each dimension in turn (set it to `inactive_value`) and rank by Δ, largest first (§9.3.1).

    d + 1 evaluations. Ties keep dimension order (a stable sort).
    """
    params = check_dims(params, dim_names)
    evaluator = as_evaluator(evaluate_fn, evaluate_batch_fn, progress)
    ablated = np.repeat(params[None, :], params.size + 1, axis=0)
    ablated[np.arange(1, params.size + 1), np.arange(params.size)] = float(inactive_value)
    errors, _ = evaluator.many(ablated, desc="sensitivity")  # row 0 is the base configuration
    base = float(errors[0])
    results = [
        SensitivityResult(i, str(name), base, float(errors[i + 1]), float(errors[i + 1] - base), 0, bool(errors[i + 1] < base))
        for i, name in enumerate(dim_names)
    ]
    results.sort(key=lambda r: r.delta_mae, reverse=True)
    for rank, r in enumerate(results, 1):
        r.importance_rank = rank
    return results
