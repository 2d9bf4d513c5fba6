"""Swapped-split confirmation of the screening comparison (paired evaluations App. E, "Check on the other
half of the image pool", Tables 23 and 24).

The development and evaluation images exchange roles: the frozen predictors g, the class baselines and
every other fitted quantity are fitted on the evaluation images, and the scores are evaluated on the
clean-correct development images. `swap_splits` relabels the `split` column of a record table
(dev <-> eval); running the main assembly (`model_scores`, `evaluate_cells`) on both relabelled tables
is exactly the swap, because every split-dependent step reads the split only through that column:
`fit_screening(..., "dev")` fits on the rows labelled dev (the original evaluation images),
`apply_screening(..., "eval")` and `evaluate_cells(..., split="eval")` score and evaluate the rows labelled
eval (the original development images, whose real outcomes the fit never reads), and nothing else of the
records changes. The tiers are not taken from the relabelled table: Table 23 keeps the development-defined
tiers of the main tables (`condition_tiers(real, "dev")` on the original records, as the paper's caption
states, so on this half the tiers were fixed from the images being evaluated); Table 24 regroups the same
cells by tiers from evaluation-set accuracy (`condition_tiers(real, "eval")`: per model the accuracy over
all evaluation images, equal-weight mean across models, cuts 40% / 20%).

Both tables give U - S with model-group intervals and, as the paper's caption adds, with intervals from
resampling the true classes (one class draw shared by every cell of the source, `class_bootstrap` on the
development images).
"""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from pipeline.paired.records.table import SPLITS
from pipeline.paired.records.tiers import condition_tiers
from pipeline.paired.reference import SWAP_MILD, Pair, es_diverse
from pipeline.paired.screening.layout import tier_mean, tier_summary_table
from pipeline.paired.screening.metrics import evaluate_cells
from pipeline.paired.screening.resampling import (
    class_bootstrap,
    group_bootstrap,
    interval_text,
)
from pipeline.paired.screening.tables import BASE_SCORES, model_scores


def swap_splits(records: pd.DataFrame) -> pd.DataFrame:
    """A copy of a record table with the development and evaluation labels of `split` exchanged."""
    bad = sorted(set(records["split"].unique()) - set(SPLITS))
    if bad:
        raise ValueError(f"unknown split labels {bad}; valid splits are {list(SPLITS)}")
    return records.assign(split=records["split"].map({"dev": "eval", "eval": "dev"}))


def swapped_scores(synthetic: pd.DataFrame, real: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every base score (Table 16's scores without the probes) fitted on the evaluation images, for the
    clean-correct development images, and the relabelled real records they are evaluated against."""
    swapped_real = swap_splits(real)
    return model_scores(swap_splits(synthetic), swapped_real), swapped_real


def swapped_cells(synthetic: pd.DataFrame, real: pd.DataFrame, tiers: pd.DataFrame, source: str,
                  budgets: list[float]) -> pd.DataFrame:
    """Cells of the swapped scores (`swapped_scores`) on the clean-correct development images, labelled with `tiers`."""
    scores, swapped_real = swapped_scores(synthetic, real)
    return evaluate_cells(scores, swapped_real, list(BASE_SCORES), tiers, source, budgets)


def _retier(cells: pd.DataFrame, tiers: pd.DataFrame) -> pd.DataFrame:
    return cells.assign(tier=cells["condition"].map(tiers.set_index("condition")["tier"]))


def _swap_table(cells: pd.DataFrame, scores: list[str], q: float, group_draws: int, rng: np.random.Generator,
                paper: dict[str, Pair]) -> pd.DataFrame:
    stat = [("neg_U", "neg_S")]
    auc = group_bootstrap(cells, "auroc", stat, rng, group_draws)
    cov = group_bootstrap(cells, f"coverage_{q:g}", stat, rng, group_draws)

    def conditions(tier: str) -> dict:
        return {"conditions": int(cells.loc[cells["tier"] == tier, "condition"].nunique())}

    def counts(tier: str, summary: pd.DataFrame) -> dict:
        mild = tier == "mild"
        return {"cells": int(tier_mean(summary, tier, "neg_U", "cells")),
                "paper U - S AUROC (ES / Diverse)": es_diverse(paper["auroc"]) if mild else "",
                "paper U - S coverage q=0.2 (ES / Diverse)": es_diverse(paper["coverage"]) if mild else ""}
    intervals = {"U - S AUROC [95%]": (auc, "neg_U-neg_S"), f"U - S coverage q={q:g} [95%]": (cov, "neg_U-neg_S")}
    return tier_summary_table(cells, scores, "auroc", intervals, lead=conditions, extra=counts)


def swapped_tables(synthetic: pd.DataFrame, real: pd.DataFrame, source: str,
                   settings: dict) -> dict[str, pd.DataFrame]:
    """Tables 23 and 24 (module docstring) from a source's Syn-B and real records; `settings` is the
    `paired.screening` node. Intervals resample model groups with a generator of its own
    (seed [settings["seed"], 2]), so the main tables' draws do not move; after the group draws of both
    tables, one draw of classes (`paired.screening.class_draws` resamples) serves both tier groupings."""
    rng = np.random.default_rng([settings["seed"], 2])
    budgets, q, n_group = list(settings["budgets"]), float(settings["primary_budget"]), int(settings["group_draws"])
    scores, swapped_real = swapped_scores(synthetic, real)
    tiers = {"table23": condition_tiers(real, "dev"), "table24": condition_tiers(real, "eval")}
    cells = evaluate_cells(scores, swapped_real, list(BASE_SCORES), tiers["table23"], source, budgets)
    shown = {"table23": list(BASE_SCORES), "table24": ["neg_S", "neg_U"]}
    tables = {name: _swap_table(_retier(cells, t), shown[name], q, n_group, rng, SWAP_MILD[name]) for name, t in tiers.items()}
    for name, table in tables.items():
        classes = class_bootstrap(scores, swapped_real, [("neg_U", "neg_S")], copy.deepcopy(rng), tiers[name], source,
                                  int(settings["class_draws"]), [q])
        at = table.columns.get_loc(f"U - S coverage q={q:g} [95%]") + 1
        table.insert(at, f"U - S coverage q={q:g} class [95%]",
                     [interval_text(classes, "neg_U-neg_S", t, f"coverage_{q:g}") for t in table["tier"]])
        table.insert(at, "U - S AUROC class [95%]", [interval_text(classes, "neg_U-neg_S", t, "auroc") for t in table["tier"]])
    return tables
