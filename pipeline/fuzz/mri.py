"""The Model Robustness Index (chapter 9, §9.2) and its exercises: CVaR (9.5) and directional MRI (9.1).

Perturbation (§9.2.1): θ_i^pert = θ_i · exp(ε_i), ε_i ~ N(0, σ²), clamped to [0.001, 10⁶].
Deviation: ω = |error(θ^pert) − error(θ)|. Index (§9.2.2): MRI = w0·mean(ω) + w1·P75(ω) + w2·P95(ω).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, as_evaluator

CLAMP = (0.001, 1e6)
DEFAULT_SEED = 42


@dataclass
class ModelRobustnessIndex:
    """MRI with its decomposition (§9.2.2); `perturbation_errors` are the N perturbed errors."""

    mri: float
    mean_omega: float
    p75_omega: float
    p95_omega: float
    n_perturbations: int
    worst_case_mae: float
    perturbation_errors: list[float]
    base_mae: float = float("nan")
    cvar_omega: float = float("nan")
    cvar_alpha: float = 0.05
    scale: float = 0.5
    weights: tuple[float, float, float] = (0.5, 0.3, 0.2)

    @property
    def omegas(self) -> np.ndarray:
        """ω_j = |error_j − error_base|, the empirical perturbation sensitivity distribution."""
        return np.abs(np.asarray(self.perturbation_errors, dtype=float) - self.base_mae)


def check_weights(weights: Sequence[float]) -> tuple[float, float, float]:
    w = tuple(float(x) for x in weights)
    if len(w) != 3 or any(not np.isfinite(x) or x < 0 for x in w):
        raise ValueError(f"MRI weights must be three non-negative numbers (mean, P75, P95), got {tuple(weights)}")
    return w  # type: ignore[return-value]


def mri_value(mean_omega: float, p75_omega: float, p95_omega: float, weights: Sequence[float] = (0.5, 0.3, 0.2)) -> float:
    """MRI = w0·mean(ω) + w1·P75(ω) + w2·P95(ω) (§9.2.2)."""
    w = check_weights(weights)
    return w[0] * float(mean_omega) + w[1] * float(p75_omega) + w[2] * float(p95_omega)


def empirical_cvar(omegas: Sequence[float] | np.ndarray, alpha: float = 0.05) -> float:
    """CVaR_α of the empirical ω distribution: the mean of its worst α-fraction (exercise 9.5).

    Each sample carries mass 1/N; the worst α·N of that mass is averaged, so a sample straddling the
    boundary counts with its fractional mass. Equal to min_c c + E[(ω − c)+]/α (Rockafellar–Uryasev).
    """
    if not 0 < float(alpha) <= 1:
        raise ValueError(f"CVaR level alpha must be in (0, 1], got {alpha}")
    w = np.sort(np.asarray(omegas, dtype=float))[::-1]
    if w.size == 0:
        raise ValueError("CVaR needs at least one ω sample, got none")
    mass = float(alpha) * w.size
    whole = int(np.floor(mass + 1e-12))
    frac = mass - whole
    total = w[:whole].sum() + (frac * w[whole] if whole < w.size and frac > 1e-12 else 0.0)
    return float(total / mass)


def summarise_omegas(
    base_error: float,
    perturbation_errors: np.ndarray,
    weights: Sequence[float] = (0.5, 0.3, 0.2),
    scale: float = 0.5,
    cvar_alpha: float = 0.05,
) -> ModelRobustnessIndex:
    """Package the perturbed errors into a ModelRobustnessIndex (mean, P75, P95, MRI, CVaR, worst case)."""
    errors = np.asarray(perturbation_errors, dtype=float)
    omegas = np.abs(errors - float(base_error))
    mean, p75, p95 = float(np.mean(omegas)), float(np.percentile(omegas, 75)), float(np.percentile(omegas, 95))
    w = check_weights(weights)
    return ModelRobustnessIndex(
        mri=mri_value(mean, p75, p95, w),
        mean_omega=mean,
        p75_omega=p75,
        p95_omega=p95,
        n_perturbations=int(errors.size),
        worst_case_mae=float(np.max(errors)),
        perturbation_errors=[float(e) for e in errors],
        base_mae=float(base_error),
        cvar_omega=empirical_cvar(omegas, cvar_alpha),
        cvar_alpha=float(cvar_alpha),
        scale=float(scale),
        weights=w,
    )


def perturb(params: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """θ · exp(ε), clamped to [0.001, 10⁶] (§9.2.1); broadcasts over rows of `noise`."""
    return np.clip(np.asarray(params, dtype=float) * np.exp(noise), *CLAMP)


def _check(params: np.ndarray, n_perturbations: int, scale: float) -> np.ndarray:
    params = np.asarray(params, dtype=float)
    if params.ndim != 1 or params.size == 0 or not np.isfinite(params).all():
        raise ValueError(f"params must be a non-empty 1-D vector of finite numbers, got {params!r}")
    if int(n_perturbations) < 1:
        raise ValueError(f"n_perturbations must be at least 1, got {n_perturbations}")
    if not float(scale) > 0:
        raise ValueError(f"perturbation scale σ must be positive, got {scale}")
    return params


def compute_mri(
    params: np.ndarray,
    evaluate_fn: EvaluateFn,
    n_perturbations: int = 300,
    scale: float = 0.5,
    weights: tuple[float, float, float] = (0.5, 0.3, 0.2),
    rng: np.random.Generator | None = None,
    *,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    cvar_alpha: float = 0.05,
    progress: bool = False,
) -> ModelRobustnessIndex:
    """Model Robustness Index of `params` under N log-normal perturbations (§9.2, default rng seed 42).

    The noise is drawn as one (N, d) matrix, which is the same stream as the chapter's N draws of d.
    """
    params = _check(params, n_perturbations, scale)
    rng = np.random.default_rng(DEFAULT_SEED) if rng is None else rng
    noise = rng.normal(0.0, scale, size=(int(n_perturbations), params.size))
    return mri_from_noise(params, as_evaluator(evaluate_fn, evaluate_batch_fn, progress), noise, scale, weights, cvar_alpha)


def mri_from_noise(
    params: np.ndarray,
    evaluate_fn: EvaluateFn,
    noise: np.ndarray,
    scale: float = 0.5,
    weights: tuple[float, float, float] = (0.5, 0.3, 0.2),
    cvar_alpha: float = 0.05,
) -> ModelRobustnessIndex:
    """MRI from given log-noise rows ε (N, d); sharing one noise matrix across configurations compares
    them under common random numbers."""
    params = np.asarray(params, dtype=float)
    noise = np.asarray(noise, dtype=float)
    if noise.ndim != 2 or noise.shape[1] != params.size:
        raise ValueError(f"noise must have shape (N, {params.size}), got {noise.shape}")
    weights = check_weights(weights)
    evaluator = as_evaluator(evaluate_fn)
    base_error, _ = evaluator.one(params)
    errors, _ = evaluator.many(perturb(params, noise), desc="MRI perturbations")
    return summarise_omegas(base_error, errors, weights, scale, cvar_alpha)


@dataclass
class DirectionalMRI:
    """Per-dimension MRIs (only θ_i perturbed, exercise 9.1) beside the global MRI."""

    dim_names: list[str]
    per_dim: list[ModelRobustnessIndex]
    global_mri: ModelRobustnessIndex
    sum_directional: float = field(init=False)
    interaction: float = field(init=False)

    def __post_init__(self) -> None:
        self.sum_directional = float(sum(r.mri for r in self.per_dim))
        # > 0: perturbing together hurts more than the parts add up to (interacting dimensions);
        # < 0: the parts overlap (a dimension's damage masks another's, or tail statistics are sub-additive).
        self.interaction = float(self.global_mri.mri - self.sum_directional)

    @property
    def shares(self) -> dict[str, float]:
        """Directional MRI of each dimension as a fraction of the global MRI."""
        g = self.global_mri.mri
        return {n: (r.mri / g if g > 0 else float("nan")) for n, r in zip(self.dim_names, self.per_dim)}


def directional_mri(
    params: np.ndarray,
    dim_names: Sequence[str],
    evaluate_fn: EvaluateFn,
    n_perturbations: int = 300,
    scale: float = 0.5,
    weights: tuple[float, float, float] = (0.5, 0.3, 0.2),
    rng: np.random.Generator | None = None,
    *,
    global_mri: ModelRobustnessIndex | None = None,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    cvar_alpha: float = 0.05,
    progress: bool = False,
) -> DirectionalMRI:
    """MRI with only dimension i perturbed, for each i, compared with the global MRI (exercise 9.1).

    `global_mri` (computed first, from the same rng, when not given) is what the parts are compared with.
    """
    params = _check(params, n_perturbations, scale)
    if len(dim_names) != params.size:
        raise ValueError(f"dim_names has {len(dim_names)} names for {params.size} parameters: {list(dim_names)}")
    rng = np.random.default_rng(DEFAULT_SEED) if rng is None else rng
    evaluator = as_evaluator(evaluate_fn, evaluate_batch_fn, progress)
    if global_mri is None:
        global_mri = compute_mri(params, evaluator, n_perturbations, scale, weights, rng, cvar_alpha=cvar_alpha)
    base_error, _ = evaluator.one(params)
    d, n = params.size, int(n_perturbations)
    noise = rng.normal(0.0, scale, size=(d, n))
    rows = np.repeat(params[None, :], d * n, axis=0)
    for i in range(d):
        rows[i * n : (i + 1) * n, i] = perturb(params[i], noise[i])
    errors, _ = evaluator.many(rows, desc="directional MRI")
    per_dim = [summarise_omegas(base_error, errors[i * n : (i + 1) * n], weights, scale, cvar_alpha) for i in range(d)]
    return DirectionalMRI(list(dim_names), per_dim, global_mri)
