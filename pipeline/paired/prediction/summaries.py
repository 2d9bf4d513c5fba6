"""Model-level summaries of paired records (paired evaluations §6, Appendices H.2-H.3, I.1): the features
that predict a model's real performance and the real targets they predict.

Per (model, condition) cell of records (Tables 1-2 of §3.1; S = maximum probability, M = true-class
probability, C = correctness, Z = 1[S >= tau], primes for the perturbed side):

* unpaired quantities: clean and perturbed accuracy, mean S and S', mean M among correct clean records and
  M' among correct perturbed ones, clipped log losses -E[log max(M, 1e-6)], and the protocol quantities of
  each target: R_q (error rate among the highest-S' share q of perturbed records), E_tau = P(C' = 0, Z' = 1)
  and the perturbed correct-and-rejected mass P(C' = 1, Z' = 0) (App. H.3);
* paired summaries: F (label-change rate), A = E|S - S'|, Q = Corr(S, S'), k (correct on both sides),
  dM_k, ds_s, ds_w (Table 2) and L_k = P(T = k, Z = 1, Z' = 0);
* their class-conditional independent counterparts (App. H.2): every clean record of class y combined
  with every perturbed record of class y with weight 1 / n_y, so rates keep the total image weight and
  conditional means are ratios of weighted sums (Eq. (14) for dM_k).

Features average the per-condition values with equal weight over the synthetic conditions; real targets
pool counts over the real conditions of a tier (App. H.4).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.paired.identification.thresholds import clean_threshold
from pipeline.paired.screening.metrics import failure_coverage

PAIRED = ("F", "A", "Q", "k", "dM_k", "ds_s", "ds_w", "L_k")
UNPAIRED = ("clean_acc", "clean_S", "clean_M_cc", "clean_logloss", "pert_acc", "pert_S", "pert_M_cc", "pert_logloss",
            "R", "E_tau", "rejected_correct")
_EPS = 1e-6


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else float("nan")


def selected_error_rate(pert_max: np.ndarray, pert_wrong: np.ndarray, q: float) -> tuple[float, float]:
    """(expected errors, selected count) among the k = max(1, round(q n)) records of highest S', a tie
    group cut by k prorated (its expectation under random tie-breaking)."""
    n_wrong = int(pert_wrong.sum())
    k = float(max(1, np.floor(q * len(pert_max) + 0.5)))
    if n_wrong == 0:
        return 0.0, k
    return failure_coverage(pert_max, pert_wrong, q) * n_wrong, k


def cell_quantities(cell: pd.DataFrame, tau: float, q: float) -> dict[str, float]:
    """Every per-cell quantity of the module docstring, paired and independent, on `cell`'s records."""
    y = cell["y"].to_numpy()
    c0, c1 = cell["clean_pred"].to_numpy() == y, cell["pert_pred"].to_numpy() == y
    s0, s1 = cell["clean_maxprob"].to_numpy(float), cell["pert_maxprob"].to_numpy(float)
    m0, m1 = cell["clean_trueprob"].to_numpy(float), cell["pert_trueprob"].to_numpy(float)
    p0, p1 = cell["clean_pred"].to_numpy(), cell["pert_pred"].to_numpy()
    z0, z1 = s0 >= tau, s1 >= tau
    errors, selected = selected_error_rate(s1, ~c1, q)
    out = {"clean_acc": c0.mean(), "clean_S": s0.mean(), "clean_M_cc": _ratio(m0[c0].sum(), c0.sum()),
           "clean_logloss": -np.log(np.maximum(m0, _EPS)).mean(), "pert_acc": c1.mean(), "pert_S": s1.mean(),
           "pert_M_cc": _ratio(m1[c1].sum(), c1.sum()), "pert_logloss": -np.log(np.maximum(m1, _EPS)).mean(),
           "R": errors / selected, "E_tau": (~c1 & z1).mean(), "rejected_correct": (c1 & ~z1).mean(),
           "n": float(len(y)), "errors_selected": errors, "selected": selected}
    both = c0 & c1
    wrong = ~c0 & ~c1
    out.update({"F": (p0 != p1).mean(), "A": np.abs(s0 - s1).mean(),
                "Q": float(np.corrcoef(s0, s1)[0, 1]) if s0.std() > 0 and s1.std() > 0 else float("nan"),
                "k": both.mean(), "dM_k": _ratio((m0 - m1)[both].sum(), both.sum()),
                "ds_s": _ratio((s0 - s1)[wrong & (p0 == p1)].sum(), (wrong & (p0 == p1)).sum()),
                "ds_w": _ratio((s0 - s1)[wrong & (p0 != p1)].sum(), (wrong & (p0 != p1)).sum()),
                "L_k": (both & z0 & ~z1).mean()})
    out.update({f"{k}_ind": v for k, v in independent_quantities(y, c0, c1, s0, s1, m0, m1, p0, p1, z0, z1).items()})
    return {k: float(v) for k, v in out.items()}


def independent_quantities(y, c0, c1, s0, s1, m0, m1, p0, p1, z0, z1) -> dict[str, float]:
    """App. H.2: the paired summaries under class-conditional independent combination (every clean record
    of class y with every perturbed record of class y, weight 1 / n_y)."""
    sums = dict.fromkeys(("F", "A", "k", "dM_num", "dM_den", "s_num", "s_den", "w_num", "w_den", "L_k", "SS"), 0.0)
    for label in np.unique(y):
        i = np.flatnonzero(y == label)
        w = 1.0 / len(i)
        both = np.outer(c0[i], c1[i])
        wrong = np.outer(~c0[i], ~c1[i])
        same = p0[i][:, None] == p1[i][None, :]
        ds = s0[i][:, None] - s1[i][None, :]
        sums["F"] += w * (~same).sum()
        sums["A"] += w * np.abs(ds).sum()
        sums["k"] += w * both.sum()
        sums["dM_num"] += w * ((m0[i][:, None] - m1[i][None, :]) * both).sum()
        sums["dM_den"] += w * both.sum()
        sums["s_num"] += w * (ds * (wrong & same)).sum()
        sums["s_den"] += w * (wrong & same).sum()
        sums["w_num"] += w * (ds * (wrong & ~same)).sum()
        sums["w_den"] += w * (wrong & ~same).sum()
        sums["L_k"] += w * (both & np.outer(z0[i], ~z1[i])).sum()
        sums["SS"] += w * s0[i].sum() * s1[i].sum()
    n = len(y)
    cov = sums["SS"] / n - s0.mean() * s1.mean()
    sd = s0.std() * s1.std()
    return {"F": sums["F"] / n, "A": sums["A"] / n, "Q": cov / sd if sd > 0 else float("nan"), "k": sums["k"] / n,
            "dM_k": _ratio(sums["dM_num"], sums["dM_den"]), "ds_s": _ratio(sums["s_num"], sums["s_den"]),
            "ds_w": _ratio(sums["w_num"], sums["w_den"]), "L_k": sums["L_k"] / n}


def model_thresholds_tau(records: pd.DataFrame, coverage: float) -> dict[str, float]:
    """Per model the clean acceptance threshold tau at `coverage` of its clean development records (App. F),
    applied to both sides."""
    dev = records[records["split"] == "dev"].drop_duplicates(["model", "image_id"])
    return {str(m): clean_threshold(g["clean_maxprob"].to_numpy(float), coverage) for m, g in dev.groupby("model")}


def per_cell(records: pd.DataFrame, split: str, tau: dict[str, float], q: float) -> pd.DataFrame:
    """`cell_quantities` of every (model, condition) cell of `split` records."""
    part = records[records["split"] == split]
    rows = [{"model": m, "group": g, "condition": c, **cell_quantities(cell, tau[m], q)}
            for (m, g, c), cell in part.groupby(["model", "group", "condition"], sort=True)]
    return pd.DataFrame(rows)


def model_features(synthetic: pd.DataFrame, real: pd.DataFrame, real_conditions: Sequence[str], coverage: float,
                   q: float) -> pd.DataFrame:
    """Per model: synthetic features on development images (equal-weight means over the synthetic
    conditions), with the real development accuracy pooled over `real_conditions` ("real_dev_acc")."""
    tau = model_thresholds_tau(synthetic, coverage)
    cells = per_cell(synthetic, "dev", tau, q)
    cols = [*UNPAIRED, *PAIRED, *[f"{p}_ind" for p in PAIRED]]
    features = cells.groupby(["model", "group"], sort=True)[cols].mean()
    dev = real[(real["split"] == "dev") & real["condition"].isin(list(real_conditions))]
    acc = (dev["pert_pred"] == dev["y"]).groupby(dev["model"]).mean()
    features["real_dev_acc"] = acc.reindex(features.index.get_level_values("model")).to_numpy()
    return features.reset_index()


def model_targets(real: pd.DataFrame, conditions: Sequence[str], coverage: float, q: float) -> pd.DataFrame:
    """Per model the real targets on evaluation images, counts pooled over `conditions`: accuracy, R_q,
    E_tau and L_k (rates in [0, 1])."""
    tau = model_thresholds_tau(real, coverage)
    cells = per_cell(real[real["condition"].isin(list(conditions))], "eval", tau, q)
    if cells.empty:
        raise ValueError("no real evaluation records in the target conditions")
    cells = cells.assign(correct=cells["pert_acc"] * cells["n"], accepted_errors=cells["E_tau"] * cells["n"],
                         lost=cells["L_k"] * cells["n"])
    g = cells.groupby(["model", "group"], sort=True)[["n", "correct", "errors_selected", "selected", "accepted_errors", "lost"]].sum()
    out = pd.DataFrame({"accuracy": g["correct"] / g["n"], "R": g["errors_selected"] / g["selected"],
                        "E_tau": g["accepted_errors"] / g["n"], "L_k": g["lost"] / g["n"]})
    return out.reset_index()
