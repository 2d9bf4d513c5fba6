"""Figures 2-4 of paired evaluations §5 from the screening stage's tables only (`cells.parquet`, the
per-cell metrics, and `intervals.csv`, the model-group intervals):

* `plot_auroc_by_score`: Figure 2, mean AUROC of six scores by source and tier, and the U - S gain with its
  95% model-group interval;
* `plot_coverage_budget`: Figure 3, failure coverage against the recapture budget on mild conditions;
* `plot_probe_rules`: Figure 4, probe set (corruptions, natural TTA18) x scoring rule (mean, A3Rank) on
  mild conditions, coverage at the primary budget and AUROC;
* `plot_single_probes`: Figure 6, coverage of every single corruption probe against the averages (Table 36).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from pipeline.paired.screening import SCORE_LABELS, TIERS, summarize_cells

FIG2_SCORES = ("neg_S", "neg_U", "delta", "neg_ret", "class_delta", "g_SU")
FIG3_SCORES = ("neg_S", "neg_U", "delta", "neg_ret", "neg_TTA18", "neg_A3_corr", "random")
COLOURS = {"neg_S": "#4c72b0", "neg_U": "#dd8452", "delta": "#55a868", "neg_ret": "#c44e52", "class_delta": "#8172b3",
           "g_SU": "#937860", "neg_TTA18": "#da8bc3", "neg_A3_corr": "#8c8c8c", "random": "#bbbbbb"}


def _summary(cells: pd.DataFrame) -> pd.DataFrame:
    return summarize_cells(cells, by=("source", "tier", "score"))


def _tiers(cells: pd.DataFrame) -> list[str]:
    return [t for t in TIERS if t in set(cells["tier"])]


def plot_auroc_by_score(cells: pd.DataFrame, intervals: pd.DataFrame) -> Figure:
    """Figure 2: AUROC of the six primary scores per source and tier (bars), and U - S with its interval."""
    summary = _summary(cells)
    sources, tiers = sorted(summary["source"].unique()), _tiers(cells)
    scores = [s for s in FIG2_SCORES if s in set(summary["score"])]
    fig = Figure(figsize=(4.2 + 1.6 * len(tiers) * len(sources), 3.4))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / len(scores)
    labels = []
    for i, (source, tier) in enumerate((s, t) for s in sources for t in tiers):
        labels.append(f"{source}\n{tier}")
        part = summary[(summary["source"] == source) & (summary["tier"] == tier)].set_index("score")
        for j, score in enumerate(scores):
            left.bar(i + (j - (len(scores) - 1) / 2) * width, part.loc[score, "auroc"], width, color=COLOURS[score],
                     label=SCORE_LABELS[score] if i == 0 else None)
    left.axhline(0.5, color="black", lw=0.6, ls=":")
    left.set_xticks(range(len(labels)), labels, fontsize=8)
    left.set_ylim(0.4, 1.0)
    left.set_ylabel("mean AUROC (cells weighted equally)", fontsize=8)
    left.legend(fontsize=7, ncol=3, loc="upper left", frameon=False)
    gain = intervals[(intervals["stat"] == "neg_U-neg_S") & (intervals["metric"] == "auroc")]
    for i, (source, tier) in enumerate((s, t) for s in sources for t in tiers):
        row = gain[(gain["source"] == source) & (gain["tier"] == tier)]
        if len(row):
            est, lo, hi = (float(row[c].iloc[0]) for c in ("estimate", "lo", "hi"))
            right.errorbar(est, i, xerr=[[est - lo], [hi - est]], fmt="o", color=COLOURS["neg_U"], capsize=3)
    right.axvline(0, color="black", lw=0.6)
    right.set_yticks(range(len(labels)), labels, fontsize=8)
    right.invert_yaxis()
    right.set_xlabel("U − S AUROC (95% group interval)", fontsize=8)
    fig.tight_layout()
    return fig


def plot_coverage_budget(cells: pd.DataFrame, budgets: Sequence[float], tier: str = "mild") -> Figure:
    """Figure 3: mean failure coverage against the budget q per score on `tier` conditions, one panel per
    source; the dotted diagonal is random selection's expectation."""
    summary = _summary(cells[cells["tier"] == tier])
    sources = sorted(summary["source"].unique())
    fig = Figure(figsize=(3.6 * max(1, len(sources)), 3.2))
    axes = np.atleast_1d(fig.subplots(1, max(1, len(sources))))
    for ax, source in zip(axes, sources):
        part = summary[summary["source"] == source].set_index("score")
        for score in (s for s in FIG3_SCORES if s in part.index):
            ax.plot(budgets, [part.loc[score, f"coverage_{q:g}"] for q in budgets], marker="o", ms=3,
                    color=COLOURS[score], label=SCORE_LABELS[score], ls="--" if score == "random" else "-")
        ax.plot(budgets, budgets, color="black", lw=0.6, ls=":")
        ax.set_title(f"{source}, {tier} conditions", fontsize=9)
        ax.set_xlabel("recapture budget q", fontsize=8)
        ax.set_ylabel("failure coverage", fontsize=8)
        ax.set_xticks(list(budgets))
    axes[0].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def plot_probe_rules(cells: pd.DataFrame, q: float, tier: str = "mild") -> Figure:
    """Figure 4: coverage at q and AUROC of the corruption (Syn-B) and natural (TTA18) probe sets under
    probability averaging and the A3Rank adaptation, lines joining the point estimates."""
    summary = _summary(cells[cells["tier"] == tier])
    fig = Figure(figsize=(6.4, 3.0))
    axes = fig.subplots(1, 2)
    rules = ("mean", "A3Rank")
    sets = (("corruptions", ("neg_U", "neg_A3_corr"), "#dd8452"), ("natural (TTA18)", ("neg_TTA18", "neg_A3_nat"), "#4c72b0"))
    for ax, metric, label in zip(axes, (f"coverage_{q:g}", "auroc"), (f"failure coverage at q = {q:g}", "AUROC")):
        for source, part in summary.groupby("source", sort=True):
            part = part.set_index("score")
            for name, scores, colour in sets:
                if all(s in part.index for s in scores):
                    ax.plot(rules, [part.loc[s, metric] for s in scores], marker="o", color=colour,
                            label=f"{name} ({source})")
        ax.set_ylabel(label, fontsize=8)
        ax.set_xlabel("scoring rule", fontsize=8)
    axes[0].legend(fontsize=7, frameon=False)
    fig.suptitle(f"probe set × scoring rule, {tier} conditions, 18 inferences each", fontsize=9)
    fig.tight_layout()
    return fig


def plot_single_probes(table36: pd.DataFrame, q: float) -> Figure:
    """Figure 6: failure coverage at q of each single corruption probe on mild conditions (circles: the
    lower severity, squares: the higher), with vertical lines at the 18-corruption average (U), the
    natural TTA18 average and clean confidence S; rows of Table 36."""
    column = f"coverage q={q:g}"
    probes = table36[table36["family"] == "probe"]
    parts = probes["probe set"].str.rsplit("-", n=1, expand=True)
    types = list(dict.fromkeys(parts[0]))
    low = min(parts[1], key=int)
    fig = Figure(figsize=(7.0, 0.3 * len(types) + 1.4))
    ax = fig.subplots()
    labelled = set()
    for (name, sev), value in zip(parts.itertuples(index=False), probes[column]):
        ax.plot(value, types.index(name), "o" if sev == low else "s", color="#dd8452" if sev == low else "#c44e52",
                ms=5, mfc="none" if sev == low else None, ls="none",
                label=None if sev in labelled else f"severity {sev}")
        labelled.add(sev)
    for family, colour, label in (("all", COLOURS["neg_U"], "U (18 corruptions)"),
                                  ("natural", COLOURS["neg_TTA18"], "natural TTA18"), ("clean", COLOURS["neg_S"], "clean S")):
        value = table36.loc[table36["family"] == family, column]
        if len(value):
            ax.axvline(float(value.iloc[0]), color=colour, lw=1.2, ls="--", label=label)
    ax.set_yticks(range(len(types)), types, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"failure coverage at q = {q:g} (one transformed input per probe)", fontsize=8)
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig
