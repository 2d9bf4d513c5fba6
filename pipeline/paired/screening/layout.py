"""The shape the screening tables of Appendix E share (Paired Evaluations, arXiv 2609.35583, Tables 16, 18, 19,
23, 24, 26): one row per tier present, the equal-weight cell mean of one metric for each score, then the
paired differences as "+estimate [lo, hi]" interval cells; and the labels the scores carry in every table.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from pipeline.paired.screening.controls import CONTROL_LABELS
from pipeline.paired.screening.metrics import summarize_cells
from pipeline.paired.screening.resampling import interval_text
from pipeline.perturb.recapture import TIERS

SCORE_LABELS = {"neg_S": "S", "neg_U": "U", "delta": "δ", "neg_ret": "ret", "class_delta": "class-δ", "g_S": "g(S)",
                "g_SU": "g(S,U)", "g_SU_ret": "g(S,U,ret)", "neg_TTA18": "TTA18", "neg_A3_corr": "A3 corruptions",
                "neg_A3_nat": "A3 natural", "random": "random", "neg_U_derange": "U deranged", "neg_U_loo": "U leave-one-out",
                "delta_derange": "δ deranged", "delta_loo": "δ leave-one-out",
                "neg_class_U_cc": "class U (cc. dev)", "neg_class_U_all": "class U (all dev)", **CONTROL_LABELS}


def tiers_present(cells: pd.DataFrame) -> list[str]:
    """The tiers of `cells`, in the order mild, severe, extreme (§3.3)."""
    return [t for t in TIERS if t in set(cells["tier"])]


def tier_mean(summary: pd.DataFrame, tier: str, score: str, column: str) -> float:
    """One value of a `summarize_cells` table (cells weighted equally); NaN when the (tier, score) is absent."""
    row = summary[(summary["tier"] == tier) & (summary["score"] == score)]
    return float(row[column].iloc[0]) if len(row) else float("nan")


def tier_summary_table(cells: pd.DataFrame, scores: Sequence[str], metric: str,
                       intervals: Mapping[str, tuple[pd.DataFrame, str]] | None = None,
                       lead: Callable[[str], dict] | None = None,
                       extra: Callable[[str, pd.DataFrame], dict] | None = None) -> pd.DataFrame:
    """One row per tier present: "tier", the columns `lead(tier)` adds, the mean `metric` of each of `scores`
    (column: its label), each interval column (label -> (interval table, stat), `interval_text` in the tier),
    then the columns `extra(tier, summary)` adds, `summary` being `summarize_cells(cells)`."""
    summary = summarize_cells(cells)
    rows = []
    for tier in tiers_present(cells):
        row = {"tier": tier, **(lead(tier) if lead is not None else {}),
               **{SCORE_LABELS[s]: tier_mean(summary, tier, s, metric) for s in scores}}
        row.update({label: interval_text(table, stat, tier) for label, (table, stat) in (intervals or {}).items()})
        if extra is not None:
            row.update(extra(tier, summary))
        rows.append(row)
    return pd.DataFrame(rows)
