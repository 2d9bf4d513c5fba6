"""Budgeted search over the configuration lattice Θ (TestNav §3.3, §4): oracles, the proposal ledger
of Algorithm 1, TestNav and its baselines, Recall@P* metrics, the final ranking R and tuning."""
from pipeline.search.ledger import Ledger
from pipeline.search.scoring.metrics import (
    auc_recall,
    pareto_flags,
    recall_by_budget,
    recall_by_unique,
    recall_curve,
    run_metrics,
)
from pipeline.search.oracle import LiveOracle, Oracle, RacingOracle, TableOracle
from pipeline.search.methods.ranking import rank_evaluated
from pipeline.search.registry import METHODS, get_method, method_class, run_search

__all__ = [
    "Ledger", "LiveOracle", "METHODS", "Oracle", "RacingOracle", "TableOracle", "auc_recall", "get_method", "method_class", "pareto_flags",
    "rank_evaluated", "recall_by_budget", "recall_by_unique", "recall_curve", "run_metrics", "run_search",
]
