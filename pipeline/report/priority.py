"""Screening priority lists (Paired Evaluations, arXiv 2609.35583, Section 5): per model, its clean-correct
evaluation images in the order a real recapture should take them.

The ranking score is the paper's U, the mean true-class probability over the synthetic (Syn-B)
conditions, computed from each image's own synthetic records (`pipeline.paired.screening.image_features`);
the paper ranks by the risk -U, so rank 1 is the image with the *lowest* U (ties: smaller image id
first). S, the clean maximum probability (the clean-confidence baseline, risk -S), stands beside it.

Budgets: q selects the first k = max(1, round(q n)) ranks of a model's n images, halves rounded *up*
(`pipeline.paired.screening.budget_size`, Appendix E.1 / Table 21), the rounding the paper's coverage
uses: not ceil(q n), which would take one image more whenever q n is not whole.

Coverage: the expected failure coverage of the -U ranking at each budget, computed by the screening
tables' own code: per (model, real condition) cell, the share of the cell's real-condition failures
among the k highest-risk images, a tie group cut by the budget prorated to its expectation under random
tie-breaking (`evaluate_cells`), then the mean over the model's cells, weighted equally and skipping
cells without failures (`summarize_cells`), over every real condition of the source (all tiers).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.paired.screening import budget_size, evaluate_cells, image_features, summarize_cells

COLUMNS = ("image_id", "true_label", "U", "S", "rank")


def ranked_images(synthetic: pd.DataFrame, budgets: Sequence[float]) -> pd.DataFrame:
    """Per model, its clean-correct evaluation images ranked by -U (rank 1 = lowest U = first to
    recapture), with S and a flag `in_budget_<q>` per budget q (rank <= max(1, round(q n)))."""
    parts = []
    for _, syn in synthetic.groupby("model", sort=True):
        f = image_features(syn)
        f = f[(f["split"] == "eval") & f["clean_correct"]].sort_values(["U", "image_id"], kind="stable")
        f = f.reset_index(drop=True).assign(rank=np.arange(1, len(f) + 1))
        for q in budgets:
            f[f"in_budget_{q:g}"] = f["rank"] <= int(budget_size(len(f), q))
        parts.append(f)
    if not parts:
        raise ValueError("the synthetic records hold no model")
    return pd.concat(parts, ignore_index=True)


def priority_lists(synthetic: pd.DataFrame, real: pd.DataFrame, budgets: Sequence[float]) -> dict[str, pd.DataFrame]:
    """One priority list per model of the synthetic records (`synthetic`: Syn-B records; `real`: the
    recapture records of the same models): image_id, true_label, U, S, rank, `in_budget_<q>` and
    `coverage_<q>` (module docstring) for every budget q."""
    ranked = ranked_images(synthetic, budgets)
    scores = ranked.assign(neg_U=-ranked["U"])[["model", "image_id", "split", "neg_U"]]
    cells = evaluate_cells(scores, real, ["neg_U"], budgets=budgets)
    coverage = summarize_cells(cells, by=("model",)).set_index("model")
    out = {}
    for model, rows in ranked.groupby("model", sort=True):
        table = rows.rename(columns={"y": "true_label"})[[*COLUMNS, *(f"in_budget_{q:g}" for q in budgets)]].reset_index(drop=True)
        for q in budgets:
            table[f"coverage_{q:g}"] = coverage.loc[model, f"coverage_{q:g}"] if model in coverage.index else np.nan
        out[str(model)] = table
    return out
