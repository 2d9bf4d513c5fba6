"""Robustness of the Pareto frontier (chapter 9, §9.5.3 and exercise 9.6).

Each configuration gets its MRI under one shared noise matrix (common random numbers, so the MRIs
differ because the configurations do, not because their draws do). The three-objective frontier is the
set not dominated in (active dimensions, error, MRI), all minimised. It contains the two-objective
frontier of the same configurations and adds those that buy robustness with error or size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, as_evaluator
from pipeline.fuzz.mri import ModelRobustnessIndex, mri_from_noise
from pipeline.fuzz.subsets import SubsetResult
from pipeline.front.pareto import pareto_mask


@dataclass
class FrontierPoint:
    """A configuration with its MRI and its membership of the 2- and 3-objective frontiers."""

    dims: list[int]
    dim_names: list[str]
    n_dims: int
    param_values: list[float]
    mae: float
    mri: float
    p95_omega: float
    cvar_omega: float
    two_objective: bool
    three_objective: bool


def robustness_frontier(
    configs: Sequence[SubsetResult],
    evaluate_fn: EvaluateFn,
    n_perturbations: int = 300,
    scale: float = 0.5,
    weights: tuple[float, float, float] = (0.5, 0.3, 0.2),
    rng: np.random.Generator | None = None,
    *,
    cvar_alpha: float = 0.05,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    progress: bool = False,
) -> list[FrontierPoint]:
    """MRI of each configuration and the (size, error) and (size, error, MRI) non-dominated flags."""
    if not configs:
        return []
    if int(n_perturbations) < 1:
        raise ValueError(f"n_perturbations must be at least 1, got {n_perturbations}")
    rng = np.random.default_rng(42) if rng is None else rng
    evaluator = as_evaluator(evaluate_fn, evaluate_batch_fn, progress)
    d = len(configs[0].param_values)
    noise = rng.normal(0.0, scale, size=(int(n_perturbations), d))
    indices: list[ModelRobustnessIndex] = [
        mri_from_noise(np.array(c.param_values), evaluator, noise, scale, weights, cvar_alpha) for c in configs
    ]
    two = pareto_mask(-np.array([[c.n_dims, c.mae] for c in configs], dtype=float))
    three = pareto_mask(-np.array([[c.n_dims, c.mae, m.mri] for c, m in zip(configs, indices)], dtype=float))
    return [
        FrontierPoint(
            dims=list(c.dims), dim_names=list(c.dim_names), n_dims=c.n_dims, param_values=list(c.param_values),
            mae=c.mae, mri=m.mri, p95_omega=m.p95_omega, cvar_omega=m.cvar_omega,
            two_objective=bool(t2), three_objective=bool(t3),
        )
        for c, m, t2, t3 in zip(configs, indices, two, three)
    ]
