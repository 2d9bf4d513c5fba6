"""Paired evaluations: prediction records, five-state counts, sharp identified intervals under the
information levels I0 / Ik / I5, and rejection-policy comparisons under one shared correspondence
(Paired Evaluations, arXiv 2609.35583, Sections 3-4 and Appendices A-D, F, H.2).

Subpackages, lowest first: `records` (record tables and their sources), `identification` (intervals and
policies), `screening` (Section 5, App. E) and `prediction` (Section 6, App. I); `reference` holds the
paper's published numbers that the screening tables show beside the embedded ones."""
from pipeline.paired.identification import (
    LAMBDA_GRID,
    LEVELS,
    POLICY_COVERAGES,
    STATES,
    TARGETS,
    bounds_table,
    cell_bounds,
    certified_summary,
    clean_threshold,
    confidence_decomposition,
    difference_bound,
    feasible_mean_rule,
    five_state_counts,
    lemma1_upper,
    minimax_regret_rule,
    model_thresholds,
    natural_cost_bounds,
    natural_difference_bound,
    overlap_from_accuracies,
    policies_tables,
    policy_analysis,
    policy_cost_bounds,
    policy_thresholds,
    select_policy,
    selection_summary,
    variance_ratio,
    width_summary,
)
from pipeline.paired.records import cells, read_records, validate_records, write_records

__all__ = [
    "LAMBDA_GRID", "LEVELS", "POLICY_COVERAGES", "STATES", "TARGETS", "bounds_table", "cell_bounds", "cells",
    "certified_summary", "clean_threshold", "confidence_decomposition", "difference_bound", "feasible_mean_rule",
    "five_state_counts", "lemma1_upper", "minimax_regret_rule", "model_thresholds", "natural_cost_bounds",
    "natural_difference_bound", "overlap_from_accuracies", "policies_tables", "policy_analysis",
    "policy_cost_bounds", "policy_thresholds", "read_records", "select_policy", "selection_summary",
    "validate_records", "variance_ratio", "width_summary", "write_records",
]
