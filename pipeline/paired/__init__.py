"""Paired evaluations: prediction records, five-state counts, sharp identified intervals under the
information levels I0 / Ik / I5, and rejection-policy comparisons under one shared correspondence
(papers/paired-evaluations.md, Sections 3-4 and Appendices A-D, F, H.2)."""
from pipeline.paired.bounds import TARGETS, cell_bounds
from pipeline.paired.confidence import confidence_decomposition
from pipeline.paired.levels import LEVELS
from pipeline.paired.marginals import overlap_from_accuracies, variance_ratio
from pipeline.paired.panel import (
    bounds_table, certified_summary, model_thresholds, policies_tables, selection_summary, width_summary,
)
from pipeline.paired.policies import (
    LAMBDA_GRID, difference_bound, feasible_mean_rule, lemma1_upper, minimax_regret_rule, natural_cost_bounds,
    natural_difference_bound, policy_analysis, policy_cost_bounds, select_policy,
)
from pipeline.paired.records import cells, read_records, validate_records, write_records
from pipeline.paired.states import STATES, five_state_counts
from pipeline.paired.thresholds import POLICY_COVERAGES, clean_threshold, policy_thresholds

__all__ = [
    "LAMBDA_GRID", "LEVELS", "POLICY_COVERAGES", "STATES", "TARGETS", "bounds_table", "cell_bounds", "cells",
    "certified_summary", "clean_threshold", "confidence_decomposition", "difference_bound", "feasible_mean_rule",
    "five_state_counts", "lemma1_upper", "minimax_regret_rule", "model_thresholds", "natural_cost_bounds",
    "natural_difference_bound", "overlap_from_accuracies", "policies_tables", "policy_analysis",
    "policy_cost_bounds", "policy_thresholds", "read_records", "select_policy", "selection_summary",
    "validate_records", "variance_ratio", "width_summary", "write_records",
]
