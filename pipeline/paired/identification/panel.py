"""Every (model, condition) cell of a record table: identified intervals, policy analysis and summaries.

Thresholds come from each model's clean development records (Appendix F); the intervals and policy
comparisons use evaluation records (Section 3.3).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.paired.identification.bounds import cell_bounds
from pipeline.paired.identification.cell import as_cell
from pipeline.paired.identification.confidence import confidence_decomposition
from pipeline.paired.identification.marginals import (
    overlap_from_accuracies,
    variance_ratio,
)
from pipeline.paired.identification.policies import LAMBDA_GRID, policy_analysis
from pipeline.paired.identification.thresholds import (
    CLEAN_COVERAGE,
    POLICY_COVERAGES,
    clean_threshold,
    policy_thresholds,
)
from pipeline.paired.records.table import cells, clean_dev_scores

CELL_KEYS = ("model", "group", "condition")


def model_thresholds(records: pd.DataFrame, clean_coverage: float = CLEAN_COVERAGE,
                     coverages=POLICY_COVERAGES) -> pd.DataFrame:
    """One row per (model, policy): the clean threshold tau_0 and the policy thresholds tau_j (Appendix D, F)."""
    rows = []
    for model, scores in clean_dev_scores(records).items():
        tau0 = clean_threshold(scores, clean_coverage)
        for j, (q, tau) in enumerate(zip(coverages, policy_thresholds(scores, coverages))):
            rows.append({"model": model, "n_dev": len(scores), "clean_threshold": tau0, "policy": j,
                         "coverage": float(q), "threshold": float(tau)})
    if not rows:
        raise ValueError("records have no clean development records; thresholds need split == 'dev'")
    return pd.DataFrame(rows)


def _clean_thresholds(thresholds: pd.DataFrame) -> dict[str, float]:
    return thresholds.drop_duplicates("model").set_index("model")["clean_threshold"].to_dict()


def _keyed(df: pd.DataFrame, key: tuple[str, str, str]) -> pd.DataFrame:
    return df.assign(**dict(zip(CELL_KEYS, key)))[list(CELL_KEYS) + list(df.columns)]


def bounds_table(records: pd.DataFrame, thresholds: pd.DataFrame, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Identified intervals of H, L, dM_k at I0/Ik/I5 for every cell, and one summary row per cell
    (N, K, accuracy-only K ranges, variance ratios, Eq. 9 decomposition)."""
    tau0 = _clean_thresholds(thresholds)
    intervals, summaries = [], []
    for key, rec in tqdm(list(cells(records, "eval")), desc="bounds", disable=not progress):
        cell = as_cell(rec)
        tab = cell_bounds(cell, tau0[key[0]])
        tab["width"] = tab["upper"] - tab["lower"]
        intervals.append(_keyed(tab, key))
        _, overlap = overlap_from_accuracies(cell)
        ratios = {f"var_ratio_{k}": v for k, v in variance_ratio(cell).items()}
        decomposition = confidence_decomposition(cell)
        summaries.append(dict(zip(CELL_KEYS, key), clean_threshold=tau0[key[0]], **overlap, **ratios,
                              **{f"decomp_{k}": v for k, v in decomposition.items()}))
    return pd.concat(intervals, ignore_index=True), pd.DataFrame(summaries)


def policies_tables(records: pd.DataFrame, thresholds: pd.DataFrame, lams=LAMBDA_GRID, levels=("I0", "Ik", "I5"),
                    progress: bool = False) -> dict[str, pd.DataFrame]:
    """`policy_analysis` for every cell, concatenated (costs, comparisons, selection) with cell keys."""
    out: dict[str, list[pd.DataFrame]] = {"costs": [], "comparisons": [], "selection": []}
    by_model = {m: g.sort_values("policy") for m, g in thresholds.groupby("model")}
    for key, rec in tqdm(list(cells(records, "eval")), desc="policies", disable=not progress):
        pol = by_model[key[0]]
        tables = policy_analysis(rec, float(pol["clean_threshold"].iloc[0]), pol["threshold"].to_numpy(),
                                 pol["coverage"].to_numpy(), lams, levels)
        for name, tab in tables.items():
            out[name].append(_keyed(tab, key))
    return {name: pd.concat(parts, ignore_index=True) for name, parts in out.items()}


def width_summary(bounds: pd.DataFrame) -> pd.DataFrame:
    """Mean identified widths W0, W1, W2 (levels I0, Ik, I5) per target, cells weighted equally (Fig. 1).

    A target's mean uses only the cells where it is defined at every level, so the same cells enter W0,
    W1 and W2; `n_cells` reports how many.
    """
    wide = bounds.pivot_table(index=list(CELL_KEYS) + ["target"], columns="level", values="width", dropna=False)
    wide = wide.dropna()
    out = wide.groupby("target").agg(W0=("I0", "mean"), W1=("Ik", "mean"), W2=("I5", "mean"), n_cells=("I0", "size"))
    return out.reset_index()


def certified_summary(comparisons: pd.DataFrame, cost: str = "transition") -> pd.DataFrame:
    """Per weight: cells with an additional certified ordering (Table 4 / Table 12 / Fig. 5).

    Only mixed-outcome pairs count (the switching records hold both correct and wrong predictions):
    * ``shared``: at I5, certified by the shared-correspondence bound but not by the separate intervals;
    * ``plus_k`` / ``plus_5``: certified at Ik but not at I0 / at I5 but not at Ik.
    Columns give the number of such cells, of such directed comparisons, and the share of cells.
    `cost` is "transition" (J) or "natural" (J' of Corollary 1). Needs all three levels.
    """
    if cost not in ("transition", "natural"):
        raise ValueError(f"unknown cost {cost!r}; valid costs are ['transition', 'natural']")
    missing = {"I0", "Ik", "I5"} - set(comparisons["level"])
    if missing:
        raise ValueError(f"comparisons lack levels {sorted(missing)}; the summary needs I0, Ik and I5")
    prefix = "" if cost == "transition" else "natural_"
    keys = list(CELL_KEYS) + ["lam", "policy", "other"]
    table = comparisons.set_index(keys + ["level"])
    shared = table[f"{prefix}certified_shared"].unstack("level").astype(bool)
    separate_i5 = table[f"{prefix}certified_separate"].xs("I5", level="level").reindex(shared.index).astype(bool)
    mixed = table["mixed"].xs("I5", level="level").reindex(shared.index).astype(bool)
    flags = pd.DataFrame({
        "shared": mixed & shared["I5"] & ~separate_i5,
        "plus_k": mixed & shared["Ik"] & ~shared["I0"],
        "plus_5": mixed & shared["I5"] & ~shared["Ik"],
    })
    per_cell = flags.groupby(level=list(CELL_KEYS) + ["lam"]).agg(["any", "sum"])
    out = pd.DataFrame({"n_cells": per_cell.groupby(level="lam").size()})
    for name in ("shared", "plus_k", "plus_5"):
        out[f"{name}_cells"] = per_cell[(name, "any")].groupby(level="lam").sum().astype(int)
        out[f"{name}_pairs"] = per_cell[(name, "sum")].groupby(level="lam").sum().astype(int)
        out[f"{name}_share"] = out[f"{name}_cells"] / out["n_cells"]
    return out.reset_index().assign(cost=cost)


def selection_summary(selection: pd.DataFrame, level: str = "I5") -> pd.DataFrame:
    """Realised policy selection per weight at `level` (Tables 13-14): mean realised regret of minimax and of
    the feasible-mean rule (and the controls), delta = mean-rule minus minimax regret, and how often
    minimax has lower / higher / equal realised cost than the feasible-mean rule."""
    part = selection[selection["level"] == level]
    if part.empty:
        raise ValueError(f"no selection rows at level {level!r}; levels present: {sorted(selection['level'].unique())}")
    g = part.groupby("lam")
    out = pd.DataFrame({
        "n_cells": g.size(),
        "minimax_regret": g["minimax_regret"].mean(), "mean_regret": g["mean_regret"].mean(),
        "proxy_regret": g["proxy_regret"].mean(), "fixed_regret": g["fixed_regret"].mean(),
        "better": g["outcome"].apply(lambda s: int((s == "lower").sum())),
        "worse": g["outcome"].apply(lambda s: int((s == "higher").sum())),
        "tied": g["outcome"].apply(lambda s: int((s == "equal").sum())),
    }).reset_index()
    out["delta"] = out["mean_regret"] - out["minimax_regret"]
    return out.assign(level=level)


def illustration_case(bounds: pd.DataFrame, comparisons: pd.DataFrame, lam: float = 0.5) -> dict | None:
    """The worked single-cell example of Appendix D.1, chosen by its fixed protocol.

    Among cells with positive retained-correct support (observed K > 0) and, at `lam` and I5, a mixed-outcome
    shared-correspondence certificate that the separate intervals miss, take the cell whose marginal (I0)
    H width is nearest the median marginal H width over all cells (ties by model, then condition), and in
    it the first such policy pair in index order. Returns None when no cell qualifies.
    """
    h0 = bounds[(bounds["target"] == "H") & (bounds["level"] == "I0")].set_index(list(CELL_KEYS))["width"]
    dmk = bounds[(bounds["target"] == "dM_k") & (bounds["level"] == "I5")].set_index(list(CELL_KEYS))["observed"]
    at = comparisons[(comparisons["level"] == "I5") & np.isclose(comparisons["lam"], lam)]
    gains = at[at["mixed"] & at["certified_shared"] & ~at["certified_separate"]]
    candidates = sorted(set(map(tuple, gains[list(CELL_KEYS)].to_numpy())) & set(dmk.dropna().index))
    if not candidates:
        return None
    median = float(h0.median())
    key = min(candidates, key=lambda k: (round(abs(h0.loc[k] - median), 12), k[0], k[2]))
    pairs = gains.set_index(list(CELL_KEYS)).loc[[key]].sort_values(["policy", "other"])
    first = pairs.iloc[0]
    return {**dict(zip(CELL_KEYS, key)), "policy": int(first["policy"]), "other": int(first["other"]),
            "lam": float(lam), "median_h_width": median}
