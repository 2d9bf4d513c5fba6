"""Image-level separation within clean-confidence terciles (paired evaluations §5.4, Table 27): does U
still rank failures once clean confidence is held nearly fixed?

Per model, its scored images (clean-correct evaluation images) that have an identity control (classes with
at least two such images, the non-singleton subset of Table 25) are cut into terciles of S by rank, ties
broken by image order; every statistic is then computed inside one tercile, over all real conditions of
the source (cells weighted equally):

* AUROC of S, of U and of U's within-class derangement control (the mean over the seeded derangements of
  Table 25, drawn here on the whole non-singleton subset before stratifying), and the gap U - control
  with a 95% model-group interval;
* retention gap: per cell, the share of images still correct under the real condition among images with
  U above the cell's stratum median, minus that share among images below it (images at the median are
  in neither), averaged over the cells where both halves are non-empty.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.paired.screening.metrics import eligible_images, evaluate_cells
from pipeline.paired.screening.resampling import group_bootstrap, interval_text
from pipeline.paired.screening.scores import average_draws, identity_controls

STRATA = ("low S", "middle S", "high S")


def confidence_terciles(scores: pd.DataFrame, eligible: pd.Series) -> pd.Series:
    """Per model, the S tercile (`STRATA`) of each row where `eligible` holds (ranks by S, ties in row
    order); NaN elsewhere."""
    out = pd.Series(np.nan, index=scores.index, dtype=object)
    for _, part in scores[eligible].groupby("model", sort=True):
        ranks = (-part["neg_S"]).rank(method="first")
        out.loc[part.index] = pd.qcut(ranks, 3, labels=list(STRATA)).astype(str)
    return out


def retention_gap(merged: pd.DataFrame) -> float:
    """Mean over cells of retention(U above the cell median) - retention(U below it); `merged` holds one
    stratum's eligible cell images with neg_U and failed."""
    gaps = []
    for _, cell in merged.groupby(["model", "condition"], sort=True):
        u = -cell["neg_U"].to_numpy(float)
        retained = ~cell["failed"].to_numpy(bool)
        median = np.median(u)
        above, below = u > median, u < median
        if above.any() and below.any():
            gaps.append(retained[above].mean() - retained[below].mean())
    return float(np.mean(gaps)) if gaps else float("nan")


def strata_table(scores: pd.DataFrame, real: pd.DataFrame, source: str, draws: int, group_draws: int,
                 rng: np.random.Generator) -> pd.DataFrame:
    """Table 27 (module docstring) over every real condition of the source: one row per S tercile."""
    ctrl = identity_controls(scores, rng, "neg_U", draws)
    derange = [f"neg_U_derange{d}" for d in range(draws)]
    stratum = confidence_terciles(ctrl, ctrl[derange[0]].notna())
    names = ["neg_S", "neg_U", *derange]
    rows = []
    for label in STRATA:
        part = ctrl.copy()
        part.loc[stratum != label, names] = np.nan           # evaluate_cells keeps the rows finite in every score
        cells = average_draws(evaluate_cells(part, real, names, None, source), "neg_U_derange")
        gap = group_bootstrap(cells, "auroc", [("neg_U", "neg_U_derange")], rng, group_draws)
        means = cells.groupby("score")["auroc"].mean()
        merged = eligible_images(part, real, ["neg_U"])
        rows.append({"stratum": label, "cells": int(cells.loc[cells["score"] == "neg_U", "auroc"].notna().sum()),
                     "images per model": float((stratum == label).groupby(ctrl["model"]).sum().mean()),
                     "S AUROC": means["neg_S"], "U AUROC": means["neg_U"], "deranged AUROC": means["neg_U_derange"],
                     "U - deranged [95%]": interval_text(gap, "neg_U-neg_U_derange", "all"),
                     "retention above - below median U": retention_gap(merged[merged["neg_U"].notna()])})
    return pd.DataFrame(rows)
