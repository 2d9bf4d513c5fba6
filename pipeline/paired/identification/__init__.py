"""Identification under one shared correspondence (Paired Evaluations, arXiv 2609.35583, Sections 3-4, Appendices
A-D, F, H.2): the record arrays of one cell, the five-state counts (Table 1), the marginal overlap, the
identified intervals (Eq. 1) of H, L and dM_k (Table 2) at the information levels I0 / Ik / I5 of
Definition 1, the clean acceptance thresholds (App. F), the rejection-policy comparisons of Section 4 and
their summaries over every (model, condition) cell of a record table."""
from pipeline.paired.identification.bounds import TARGETS, cell_bounds, event_bounds
from pipeline.paired.identification.cell import Cell, as_cell
from pipeline.paired.identification.confidence import (
    confidence_decomposition,
    dmk_independent,
    dmk_observed,
)
from pipeline.paired.identification.levels import LEVELS
from pipeline.paired.identification.marginals import (
    overlap_from_accuracies,
    variance_ratio,
)
from pipeline.paired.identification.panel import (
    CELL_KEYS,
    bounds_table,
    certified_summary,
    illustration_case,
    model_thresholds,
    policies_tables,
    selection_summary,
    width_summary,
)
from pipeline.paired.identification.policies import (
    LAMBDA_GRID,
    difference_bound,
    feasible_mean_rule,
    lemma1_upper,
    minimax_regret_rule,
    natural_cost_bounds,
    natural_difference_bound,
    policy_analysis,
    policy_cost_bounds,
    select_policies,
    select_policy,
)
from pipeline.paired.identification.states import (
    STATES,
    class_counts,
    five_state_counts,
)
from pipeline.paired.identification.thresholds import (
    CLEAN_COVERAGE,
    POLICY_COVERAGES,
    clean_threshold,
    coverage_rank,
    coverage_threshold,
    policy_thresholds,
)
from pipeline.paired.identification.wrongblock import hblock_probabilities, mark_range

__all__ = [
    "CELL_KEYS", "CLEAN_COVERAGE", "Cell", "LAMBDA_GRID", "LEVELS", "POLICY_COVERAGES", "STATES", "TARGETS", "as_cell",
    "bounds_table", "cell_bounds", "certified_summary", "class_counts", "clean_threshold", "confidence_decomposition",
    "coverage_rank", "coverage_threshold", "difference_bound", "dmk_independent", "dmk_observed", "event_bounds",
    "feasible_mean_rule", "five_state_counts", "hblock_probabilities", "illustration_case", "lemma1_upper",
    "mark_range", "minimax_regret_rule", "model_thresholds", "natural_cost_bounds", "natural_difference_bound",
    "overlap_from_accuracies", "policies_tables", "policy_analysis", "policy_cost_bounds", "policy_thresholds",
    "select_policies", "select_policy", "selection_summary", "variance_ratio", "width_summary",
]
