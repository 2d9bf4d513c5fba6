"""Model-level prediction (Paired Evaluations, arXiv 2609.35583, Section 6, Appendices H.2-H.4, I): per-model
unpaired and paired summaries of the synthetic records (Tables 1-2 quantities, their class-conditional
independent counterparts) predict each model's real targets under mild conditions by nested
leave-one-group-out ridge regression (Tables 43 and 46)."""
from pipeline.paired.prediction.regression import (
    ALPHAS,
    COMPARISONS,
    PROTOCOL,
    comparison_table,
    feature_sets,
    group_interval,
    nested_logo,
    oof_errors,
    prediction_tables,
    source_prediction,
)
from pipeline.paired.prediction.summaries import (
    PAIRED,
    UNPAIRED,
    cell_quantities,
    model_features,
    model_targets,
)

__all__ = [
    "ALPHAS", "COMPARISONS", "PAIRED", "PROTOCOL", "UNPAIRED", "cell_quantities", "comparison_table", "feature_sets",
    "group_interval", "model_features", "model_targets", "nested_logo", "oof_errors", "prediction_tables",
    "source_prediction",
]
