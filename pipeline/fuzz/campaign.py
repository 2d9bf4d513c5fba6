"""The structural fuzzing campaign (chapter 9, §9.5): six stages composed into one report.

1. subset enumeration, 2. its Pareto frontier, 3. sensitivity profile, 4. MRI, 5. adversarial
thresholds for every dimension, 6. compositional testing. Stages 3–5 analyse the operating point: the
best enumerated configuration (the chapter's choice), or one given by the caller (a model whose
"best" configuration is not the one deployed, such as corruption severities, where the best is no
corruption). The exercises ride along: directional MRI (9.1), two-phase thresholds (9.2), CVaR (9.5),
and the MRI of the frontier (9.6).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from tqdm.auto import tqdm

from pipeline.plugins.catalog import FRONTIER_SCOPES
from pipeline.fuzz.composition import compositional_test
from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, Evaluator
from pipeline.fuzz.frontier import robustness_frontier
from pipeline.fuzz.mri import DEFAULT_SEED, check_weights, compute_mri, directional_mri
from pipeline.fuzz.report import StructuralFuzzReport
from pipeline.fuzz.sensitivity import sensitivity_profile
from pipeline.fuzz.subsets import SubsetResult, enumerate_subsets, pareto_frontier
from pipeline.fuzz.threshold import (
    find_adversarial_threshold,
    find_adversarial_threshold_two_phase,
)


def reference_values(operating_point: np.ndarray, subset_results: Sequence[SubsetResult], inactive_value: float) -> np.ndarray:
    """Each dimension's active value for compositional testing: its operating value, or, where the
    operating point leaves it inactive, its value in the best enumerated configuration that uses it."""
    ref = np.array(operating_point, dtype=float)
    for i in np.flatnonzero(ref == float(inactive_value)):
        holder = next((r for r in subset_results if i in r.dims), None)
        if holder is not None:
            ref[i] = holder.param_values[i]
    return ref


def run_campaign(
    dim_names: Sequence[str],
    evaluate_fn: EvaluateFn,
    max_subset_dims: int | None = 4,
    n_mri_perturbations: int = 300,
    mri_scale: float = 0.5,
    mri_weights: tuple[float, float, float] = (0.5, 0.3, 0.2),
    inactive_value: float = 1e6,
    adversarial_tolerance: float = 0.5,
    n_adversarial_steps: int = 50,
    *,
    candidate_values: Sequence[float] = (1.0,),
    operating_point: Sequence[float] | None = None,
    two_phase: bool = False,
    n_coarse: int = 10,
    directional: bool = True,
    frontier: str = "pareto",
    n_frontier_perturbations: int | None = None,
    cvar_alpha: float = 0.05,
    rng: np.random.Generator | None = None,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    batch_size: int = 256,
    progress: bool = False,
    error_name: str = "error",
) -> StructuralFuzzReport:
    """Run the six stages of §9.5 and return the StructuralFuzzReport (default rng seeded with 42)."""
    names = [str(n) for n in dim_names]
    d = len(names)
    if frontier not in FRONTIER_SCOPES:
        raise ValueError(f"unknown frontier scope {frontier!r}; valid choices: {', '.join(FRONTIER_SCOPES)}")
    mri_weights = check_weights(mri_weights)
    if operating_point is not None and np.shape(operating_point) != (d,):
        raise ValueError(f"operating_point has {np.size(operating_point)} values for {d} dimensions {names}")
    rng = np.random.default_rng(DEFAULT_SEED) if rng is None else rng
    evaluator = Evaluator(evaluate_fn, evaluate_batch_fn, batch_size=batch_size, memoize=True, progress=progress)
    stages = tqdm(total=6 + (frontier != "none"), desc="fuzz campaign", disable=not progress)

    def stage(name: str) -> None:
        stages.set_postfix_str(name)

    stage("subset enumeration")
    subsets = enumerate_subsets(names, evaluator, max_subset_dims, inactive_value, candidate_values)
    stages.update()
    stage("pareto frontier")
    pareto = pareto_frontier(subsets)
    stages.update()

    if operating_point is not None:
        point = np.asarray(operating_point, dtype=float)
    else:
        point = np.array(subsets[0].param_values) if subsets else np.ones(d)

    stage("sensitivity")
    sensitivity = sensitivity_profile(point, names, evaluator, inactive_value)
    stages.update()
    stage("MRI")
    mri = compute_mri(point, evaluator, n_mri_perturbations, mri_scale, mri_weights, rng, cvar_alpha=cvar_alpha)
    directional_result = (
        directional_mri(point, names, evaluator, n_mri_perturbations, mri_scale, mri_weights, rng, global_mri=mri, cvar_alpha=cvar_alpha)
        if directional else None
    )
    stages.update()

    stage("adversarial thresholds")
    search = find_adversarial_threshold_two_phase if two_phase else find_adversarial_threshold
    extra = {"n_coarse": n_coarse} if two_phase else {}
    adversarial, skipped = [], []
    for i in range(d):
        stage(f"adversarial thresholds: {names[i]}")
        if not point[i] > 0:
            skipped.append(names[i])
            continue
        adversarial.extend(search(point, i, names, evaluator, adversarial_tolerance, n_adversarial_steps, **extra))
    stages.update()

    stage("composition")
    composition, forward, backward = compositional_test(reference_values(point, subsets, inactive_value), names, evaluator, inactive_value)
    stages.update()

    frontier_points = []
    if frontier != "none":
        stage("MRI of the frontier")
        configs = pareto if frontier == "pareto" else subsets
        frontier_points = robustness_frontier(
            configs, evaluator, n_frontier_perturbations or n_mri_perturbations, mri_scale, mri_weights, rng, cvar_alpha=cvar_alpha
        )
        stages.update()
    stages.close()

    settings = {
        "max_subset_dims": max_subset_dims, "n_mri_perturbations": int(n_mri_perturbations), "mri_scale": float(mri_scale),
        "mri_weights": list(mri_weights), "inactive_value": float(inactive_value),
        "adversarial_tolerance": float(adversarial_tolerance), "n_adversarial_steps": int(n_adversarial_steps),
        "candidate_values": [float(v) for v in candidate_values], "two_phase": bool(two_phase), "n_coarse": int(n_coarse),
        "frontier": frontier, "n_frontier_perturbations": int(n_frontier_perturbations or n_mri_perturbations),
        "cvar_alpha": float(cvar_alpha), "operating_point_given": operating_point is not None,
    }
    return StructuralFuzzReport(
        dim_names=names, subset_results=subsets, pareto_results=pareto, sensitivity_results=sensitivity,
        mri_result=mri, adversarial_results=adversarial, composition_result=composition,
        forward_results=forward, backward_results=backward, operating_point=[float(v) for v in point],
        directional=directional_result, frontier=frontier_points, skipped_threshold_dims=skipped,
        settings=settings, n_evaluations=evaluator.n_evaluations, error_name=error_name,
    )
