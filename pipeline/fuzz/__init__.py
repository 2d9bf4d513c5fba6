"""Structural fuzzing (chapter 9): MRI, sensitivity profile, adversarial thresholds, the campaign.

Everything here knows one thing about the model: `evaluate_fn(params) -> (error, per_target_errors)`,
optionally with a batched twin `evaluate_batch_fn(params_matrix) -> (errors, per_target_columns)`.
Adapters that build these callbacks for the embedded models live in `pipeline.fuzz.adapters`.
"""
from pipeline.fuzz.campaign import run_campaign
from pipeline.fuzz.composition import (
    CompositionResult,
    backward_elimination,
    compositional_test,
    forward_addition,
)
from pipeline.fuzz.evaluator import Evaluator, batch_from_single, single_from_batch
from pipeline.fuzz.frontier import FrontierPoint, robustness_frontier
from pipeline.fuzz.mri import (
    DirectionalMRI,
    ModelRobustnessIndex,
    compute_mri,
    directional_mri,
    empirical_cvar,
    mri_from_noise,
    mri_value,
)
from pipeline.fuzz.quadratic import isotropic_mri_constant, quadratic_omega_moments
from pipeline.fuzz.report import StructuralFuzzReport
from pipeline.fuzz.sensitivity import SensitivityResult, sensitivity_profile
from pipeline.fuzz.subsets import SubsetResult, enumerate_subsets, pareto_frontier
from pipeline.fuzz.threshold import (
    AdversarialResult,
    find_adversarial_threshold,
    find_adversarial_threshold_two_phase,
    scan_values,
)

__all__ = [
    "AdversarialResult", "CompositionResult", "DirectionalMRI", "Evaluator", "FrontierPoint", "ModelRobustnessIndex",
    "SensitivityResult", "StructuralFuzzReport", "SubsetResult", "backward_elimination", "batch_from_single",
    "compositional_test", "compute_mri", "directional_mri", "empirical_cvar", "enumerate_subsets",
    "find_adversarial_threshold", "find_adversarial_threshold_two_phase", "forward_addition",
    "isotropic_mri_constant", "mri_from_noise", "mri_value", "pareto_frontier", "quadratic_omega_moments",
    "robustness_frontier", "run_campaign", "scan_values", "sensitivity_profile", "single_from_batch",
]
