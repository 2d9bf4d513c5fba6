"""Figures of a comparison of two models (`pipeline.assess.compare`), from its tables only: both models' fronts
overlaid, and Δ against fidelity with each configuration's verdict."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.figures.ground_truth import METRIC_LABELS  # noqa: E402

WHO = {"baseline": ("baseline A", "#1f6f9f"), "model": ("new model B", "#c0392b")}
VERDICT = {"worse": "#c0392b", "tie": "0.7", "better": "#1e8449"}


def plot_compared_fronts(fronts: Mapping[str, pd.DataFrame], metrics: Sequence[str]) -> plt.Figure:
    """One panel per metric: each model's (δ, ρ) front among the configurations the comparison completed."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        frame = fronts[metric]
        for who, (label, colour) in WHO.items():
            rows = frame[frame["model"] == who]
            front = rows[rows["on_front"]].sort_values("rho")
            ax.scatter(rows["rho"], rows["delta"], s=6, c=colour, alpha=0.25)
            ax.plot(front["rho"], front["delta"], "-o", c=colour, ms=4, lw=1.2, label=f"{label}: front ({len(front)})")
        ax.set_xlabel(f"fidelity ρ ({METRIC_LABELS.get(metric, metric)}; higher = closer to the clean input)")
        ax.set_ylabel("degradation δ of each model")
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def plot_regressions(table: pd.DataFrame, metrics: Sequence[str]) -> plt.Figure:
    """One panel per metric: Δ = δ_B − δ_A of every completed configuration against ρ, with its simultaneous band,
    coloured by its verdict (B significantly worse, a tie, B significantly better)."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        ax.axhline(0.0, c="0.4", lw=0.8)
        for verdict, colour in VERDICT.items():
            rows = table[table["verdict"] == verdict]
            if len(rows):
                ax.errorbar(rows[f"rho_{metric}"], rows["Delta"], yerr=[rows["Delta"] - rows["band_lo"], rows["band_hi"] - rows["Delta"]],
                            fmt="o", ms=3, c=colour, elinewidth=0.6, alpha=0.8, label=f"{verdict} ({len(rows)})")
        ax.set_xlabel(f"fidelity ρ ({METRIC_LABELS.get(metric, metric)})")
        ax.set_ylabel("Δ = δ_B − δ_A (> 0: B loses more)")
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig
