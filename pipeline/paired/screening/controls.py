"""The comparison tables of Appendix E.2-E.4 (paired evaluations) that contrast U with other scores on the
main screening cells: the A3Rank adaptation (Tables 34, 35), natural TTA18 across tiers (Table 37), the
simple scoring controls (Table 38) and the model-group decomposition (Table 39).

Every table reads the main cell table of `tables.screening_tables` (one row per model x real
condition x score, every score on the cell's common image set), its model-group intervals (one table per
metric, `group_bootstrap`) and its class-resampled intervals (`class_bootstrap`, one shared class draw per
source), so each difference here is the same paired cell difference, with the same draws, as in Tables
16-20.

The simple controls of App. E.4 (`clean_controls`), risk-oriented as every score here:
clean margin (largest minus second-largest clean probability, negated), clean entropy -sum_c p_c log p_c
(0 log 0 = 0) and TTA agreement (share of the 18 natural transforms whose arg-max equals the clean
arg-max, lowest class index on ties, negated).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.paired.screening.resampling import interval_text

CONTROL_SCORES = ("neg_margin", "entropy", "neg_agree")
CONTROL_LABELS = {"neg_margin": "clean margin", "entropy": "clean entropy", "neg_agree": "TTA agreement"}
A3_SCORES = (("neg_A3_corr", "A3 corruptions"), ("neg_A3_nat", "A3 natural"))


def clean_controls(clean_proba, tta_proba) -> dict[str, np.ndarray]:
    """App. E.4's three simple scores per image from clean probabilities (n, C) and the TTA18 probes'
    (A, n, C), each oriented so that larger = riskier (module docstring)."""
    p = np.asarray(clean_proba, dtype=float)
    tta = np.asarray(tta_proba, dtype=float)
    if p.ndim != 2 or tta.ndim != 3 or tta.shape[1:] != p.shape:
        raise ValueError(f"clean_proba (n, C) and tta_proba (A, n, C) disagree: {p.shape}, {tta.shape}")
    top2 = np.sort(p, axis=1)[:, -2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(p > 0, p * np.log(p), 0.0).sum(1)
    agree = (tta.argmax(2) == p.argmax(1)[None, :]).mean(0)
    return {"neg_margin": top2[:, 0] - top2[:, 1], "entropy": entropy, "neg_agree": -agree}


def _means(cells: pd.DataFrame, tier: str) -> pd.DataFrame:
    """Equal-weight cell means of every metric per score in `tier`, undefined cells skipped."""
    part = cells[cells["tier"] == tier]
    return part.groupby("score")[[c for c in part.columns if c.startswith(("auroc", "coverage_"))]].mean()


def a3_table(cells: pd.DataFrame, groups: dict[str, pd.DataFrame], classes: pd.DataFrame, q: float,
             tier: str = "mild") -> pd.DataFrame:
    """Table 34: U against both A3Rank adaptations (corruption and natural probes) in coverage at q and
    AUROC, differences with model-group and class-resampled 95% intervals. `groups` maps a metric
    ("auroc", "coverage_<q>") to its group interval table."""
    means = _means(cells, tier)
    rows = []
    for score, label in A3_SCORES:
        for metric, name in ((f"coverage_{q:g}", f"coverage q={q:g}"), ("auroc", "AUROC")):
            stat = f"neg_U-{score}"
            rows.append({"comparison": f"U - {label}", "metric": name, "U": means.loc["neg_U", metric],
                         "A3": means.loc[score, metric], "U - A3": means.loc["neg_U", metric] - means.loc[score, metric],
                         "group [95%]": interval_text(groups[metric], stat, tier),
                         "class [95%]": interval_text(classes, stat, tier, metric)})
    return pd.DataFrame(rows)


def budget_table(cells: pd.DataFrame, groups: dict[str, pd.DataFrame], budgets: Sequence[float],
                 tier: str = "mild") -> pd.DataFrame:
    """Table 35: failure coverage of U and of the corruption-probe A3Rank adaptation at every budget, with
    U - A3 and its model-group interval."""
    means = _means(cells, tier)
    rows = []
    for q in budgets:
        metric = f"coverage_{q:g}"
        rows.append({"q": q, "U": means.loc["neg_U", metric], "A3 corruptions": means.loc["neg_A3_corr", metric],
                     "U - A3 [95%]": interval_text(groups[metric], "neg_U-neg_A3_corr", tier)})
    return pd.DataFrame(rows)


def tier_table(cells: pd.DataFrame, groups: dict[str, pd.DataFrame], classes: pd.DataFrame, q: float,
               tiers: Sequence[str], paper: str = "") -> pd.DataFrame:
    """Table 37: corruption (U) against natural (TTA18) averages in every tier, coverage at q and AUROC,
    with separate model-group and class-resampled 95% intervals of the paired differences; `paper` is
    shown in the mild row."""
    rows = []
    cov = f"coverage_{q:g}"
    for tier in tiers:
        means = _means(cells, tier)
        rows.append({"tier": tier, "conditions": int(cells.loc[cells["tier"] == tier, "condition"].nunique()),
                     f"U coverage q={q:g}": means.loc["neg_U", cov], f"TTA18 coverage q={q:g}": means.loc["neg_TTA18", cov],
                     "coverage group [95%]": interval_text(groups[cov], "neg_U-neg_TTA18", tier),
                     "coverage class [95%]": interval_text(classes, "neg_U-neg_TTA18", tier, cov),
                     "U AUROC": means.loc["neg_U", "auroc"], "TTA18 AUROC": means.loc["neg_TTA18", "auroc"],
                     "AUROC group [95%]": interval_text(groups["auroc"], "neg_U-neg_TTA18", tier),
                     "AUROC class [95%]": interval_text(classes, "neg_U-neg_TTA18", tier, "auroc"),
                     "paper corruption - natural (ES / Diverse)": paper if tier == "mild" else ""})
    return pd.DataFrame(rows)


def baselines_table(cells: pd.DataFrame, groups: dict[str, pd.DataFrame], classes: pd.DataFrame, q: float,
                    tier: str = "mild") -> pd.DataFrame:
    """Table 38: the simple controls of App. E.4 on `tier` conditions: their coverage at q and AUROC, U's
    coverage, Δ = U - control in coverage with model-group and class-resampled 95% intervals."""
    means = _means(cells, tier)
    cov = f"coverage_{q:g}"
    rows = []
    for score in CONTROL_SCORES:
        stat = f"neg_U-{score}"
        rows.append({"baseline": CONTROL_LABELS[score], f"coverage q={q:g}": means.loc[score, cov],
                     "AUROC": means.loc[score, "auroc"], f"U coverage q={q:g}": means.loc["neg_U", cov],
                     "Δ = U - baseline": means.loc["neg_U", cov] - means.loc[score, cov],
                     "group [95%]": interval_text(groups[cov], stat, tier),
                     "class [95%]": interval_text(classes, stat, tier, cov)})
    return pd.DataFrame(rows)


def _cell_gaps(cells: pd.DataFrame, metric: str, others: Sequence[str]) -> pd.DataFrame:
    """Per (model, group, condition) cell: U minus each of `others` in `metric`, NaN where undefined."""
    wide = cells.set_index(["model", "group", "condition", "score"])[metric].unstack("score")
    return pd.DataFrame({o: wide["neg_U"] - wide[o] for o in others}).reset_index()


def group_table(cells: pd.DataFrame, q: float, others: Mapping[str, str], tier: str = "mild") -> tuple[pd.DataFrame, dict]:
    """Table 39: per model group, mean coverage differences U - other at q over the group's `tier` cells
    (cells weighted equally within the group) and how many of its models have a positive mean difference
    (each model's mean over its own cells); `others` maps each compared score to its label. Returns the
    table (one row per group, then "all models") and {label: [models with a positive difference, models]}."""
    gaps = _cell_gaps(cells[cells["tier"] == tier], f"coverage_{q:g}", list(others))
    per_model = gaps.groupby(["group", "model"])[list(others)].mean()
    positive = {label: [int((per_model[o] > 0).sum()), len(per_model)] for o, label in others.items()}

    def row(name: str, part: pd.DataFrame, models: pd.DataFrame) -> dict:
        out = {"group": name, "models": len(models), "cells": int(part[list(others)].notna().all(axis=1).sum())}
        out.update({f"U - {label}": part[o].mean() for o, label in others.items()})
        out.update({f"models with U - {label} > 0": f"{int((models[o] > 0).sum())}/{len(models)}"
                    for o, label in others.items()})
        return out

    rows = [row(str(group), g, per_model.loc[group]) for group, g in gaps.groupby("group", sort=True)]
    rows.append(row("all models", gaps, per_model))
    return pd.DataFrame(rows), positive
