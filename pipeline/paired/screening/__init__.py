"""Prospective screening (Paired Evaluations, arXiv 2609.35583, Section 5, Appendix E): which clean-correct images
deserve a real recapture. Risk scores fitted on development images (S, U, δ, ret, class baselines, g),
probe averages and A3Rank (Eq. (12)), AUROC and tie-prorated failure coverage per (model, real condition)
cell, model-group and class resampling intervals, and the App. E tables (16-39) with their titles and notes."""
from pipeline.paired.records.tiers import condition_tiers
from pipeline.paired.screening.controls import (
    CONTROL_LABELS,
    CONTROL_SCORES,
    clean_controls,
)
from pipeline.paired.screening.layout import (
    SCORE_LABELS,
    tier_mean,
    tier_summary_table,
    tiers_present,
)
from pipeline.paired.screening.metrics import (
    BUDGETS,
    Stat,
    auroc,
    budget_size,
    cell_metrics,
    coverage_ceiling,
    coverage_of_ceiling,
    eligible_images,
    evaluate_cells,
    failure_coverage,
    paired_cells,
    real_outcomes,
    summarize_cells,
)
from pipeline.paired.screening.natural import NOT_REPRODUCED
from pipeline.paired.screening.probes import a3rank, modal_class, probe_average
from pipeline.paired.screening.report import TITLES, markdown, table_notes
from pipeline.paired.screening.resampling import (
    class_bootstrap,
    group_bootstrap,
    interval_text,
)
from pipeline.paired.screening.scores import (
    PREDICTORS,
    PRIMARY_SCORES,
    SCORES,
    ScreeningFit,
    apply_screening,
    fit_screening,
    identity_controls,
    image_features,
    image_scores,
)
from pipeline.paired.screening.swap import swap_splits, swapped_cells, swapped_tables
from pipeline.paired.screening.tables import (
    BASE_SCORES,
    PROBE_SCORES,
    model_scores,
    screening_tables,
)
from pipeline.perturb.recapture import TIER_CUTS, TIERS

__all__ = [
    "BASE_SCORES", "BUDGETS", "CONTROL_LABELS", "CONTROL_SCORES", "NOT_REPRODUCED", "PREDICTORS", "PRIMARY_SCORES",
    "PROBE_SCORES", "SCORES", "SCORE_LABELS", "TIERS", "TIER_CUTS", "TITLES", "ScreeningFit", "Stat", "a3rank",
    "apply_screening", "auroc", "budget_size", "cell_metrics", "class_bootstrap", "clean_controls", "condition_tiers",
    "coverage_ceiling", "coverage_of_ceiling", "eligible_images", "evaluate_cells", "failure_coverage",
    "fit_screening", "group_bootstrap", "identity_controls", "image_features", "image_scores", "interval_text",
    "markdown", "modal_class", "model_scores", "paired_cells", "probe_average", "real_outcomes", "screening_tables",
    "summarize_cells", "swap_splits", "swapped_cells", "swapped_tables", "table_notes", "tier_mean",
    "tier_summary_table", "tiers_present",
]
