"""Ground-truth figures, from tables only: the Pareto-front panels (TestNav Fig. 1) and the gallery of
one test image under every P* configuration grouped by order (Figs. 5-6)."""
from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

METRIC_LABELS = {"ssim": "SSIM", "kid": "KID (negated)", "chrf": "chrF", "bertscore": "BERT-F1"}


def _order_counts(front: pd.DataFrame, n_dims: int) -> str:
    return ",".join(str(int((front["order"] == k).sum())) for k in range(1, n_dims + 1))


def plot_pareto_fronts(table: pd.DataFrame, metrics: Sequence[str], n_dims: int, benchmark: str) -> plt.Figure:
    """One panel per fidelity metric: every θ in grey, P* highlighted, |P*| and counts by order 1..n."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.8), squeeze=False)
    for ax, m in zip(axes[0], metrics):
        front = table[table[f"pareto_{m}"]].sort_values(f"rho_{m}_norm")
        ax.scatter(table[f"rho_{m}_norm"], table["delta_norm"], s=6, c="0.75", label="Θ")
        ax.plot(front[f"rho_{m}_norm"], front["delta_norm"], "-o", c="teal", ms=4, lw=1, label="P*")
        ax.set_xlabel(f"fidelity ρ ({METRIC_LABELS.get(m, m)}, normalised)")
        ax.set_ylabel("degradation δ (normalised)")
        ax.set_title(f"{benchmark} / {METRIC_LABELS.get(m, m)}: |P*| = {len(front)} ({_order_counts(front, n_dims)})", fontsize=9)
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def plot_gallery(thetas: np.ndarray, images: np.ndarray, clean: np.ndarray, table: pd.DataFrame, dims: Sequence[str],
                 metric: str) -> plt.Figure:
    """The example image under every P* configuration of `metric`, one row per order, labelled θ, δ, ρ."""
    front = table[table[f"pareto_{metric}"]]
    by_theta = {tuple(int(v) for v in t): img for t, img in zip(thetas, images)}
    rows = [(k, front[front["order"] == k]) for k in sorted(front["order"].unique())]
    ncols = max([len(r) for _, r in rows] + [1])
    fig, axes = plt.subplots(len(rows) + 1, ncols, figsize=(1.6 * ncols, 1.9 * (len(rows) + 1)), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    axes[0, 0].imshow(clean)
    axes[0, 0].set_title("clean", fontsize=7)
    for r, (order, group) in enumerate(rows, start=1):
        for c, (_, row) in enumerate(group.sort_values(f"rho_{metric}_norm", ascending=False).iterrows()):
            theta = tuple(int(row[d]) for d in dims)
            axes[r, c].imshow(by_theta[theta])
            axes[r, c].set_title(f"θ={theta}\nδ={row['delta']:.3f} ρ={row[f'rho_{metric}']:.3g}", fontsize=6)
        axes[r, 0].text(-0.15, 0.5, f"order {order}", transform=axes[r, 0].transAxes, rotation=90, va="center", ha="right", fontsize=8)
    fig.suptitle(f"P* configurations under (δ, ρ_{METRIC_LABELS.get(metric, metric)}), grouped by order", fontsize=9)
    fig.tight_layout()
    return fig
