"""Figures of a user's run (`pipeline.assess`), from its tables only: the front of each fidelity metric among
the evaluated configurations, each perturbation's effect alone, and the search's progress."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.figures.ground_truth import METRIC_LABELS  # noqa: E402


def plot_run_fronts(evaluated: Mapping[str, pd.DataFrame], clean_score: float) -> plt.Figure:
    """One panel per metric: every evaluated θ in grey, the front (rank 0 of R) in teal, δ against raw ρ."""
    fig, axes = plt.subplots(1, len(evaluated), figsize=(4.4 * len(evaluated), 3.8), squeeze=False)
    for ax, (metric, ranked) in zip(axes[0], evaluated.items()):
        front = ranked[ranked["rank"] == 0].sort_values("rho")
        ax.scatter(ranked["rho"], ranked["delta"], s=7, c="0.75", label=f"evaluated ({len(ranked):,})")
        ax.plot(front["rho"], front["delta"], "-o", c="teal", ms=4, lw=1, label=f"front ({len(front)})")
        ax.set_xlabel(f"fidelity ρ ({METRIC_LABELS.get(metric, metric)}; higher = closer to the clean input)")
        ax.set_ylabel(f"degradation δ (clean score {clean_score:.3f} minus perturbed)")
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def plot_effect_alone(alone: pd.DataFrame, clean_score: float) -> plt.Figure:
    """δ against the level of each perturbation applied alone (every other at level 0)."""
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    for name, rows in alone.groupby("perturbation", sort=False):
        rows = rows.sort_values("level")
        ax.plot(rows["level"], rows["delta"], "-o", ms=4, label=str(name))
    ax.set_xlabel("level (0 = not applied)")
    ax.set_ylabel(f"degradation δ (clean score {clean_score:.3f})")
    ax.set_xticks(sorted(alone["level"].unique()))
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_progress(traces: Mapping[str, pd.DataFrame]) -> plt.Figure:
    """Per metric, against configurations evaluated: the front size found so far and the method's own
    estimate of Recall@P* (where it gives one)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4))
    for metric, trace in traces.items():
        new = trace[trace["is_new"].to_numpy(dtype=bool)]
        points = new[["delta", "rho"]].to_numpy()
        sizes = _running_front_sizes(points)
        axes[0].plot(new["u"], sizes, label=metric)
        if "est_recall" in trace:
            axes[1].plot(trace["u"], trace["est_recall"], label=metric)
    axes[0].set_xlabel("configurations evaluated")
    axes[0].set_ylabel("front size")
    axes[1].set_xlabel("configurations evaluated")
    axes[1].set_ylabel("estimated Recall@P*")
    axes[1].set_ylim(0, 1.02)
    for ax in axes:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _running_front_sizes(points: np.ndarray) -> Sequence[int]:
    """The size of the non-dominated set of the first k points, for every k (both objectives maximised;
    updated point by point: O(k · front) rather than a new sort each time)."""
    front = np.zeros((0, 2))
    sizes = []
    for p in points:
        if not ((front >= p).all(1) & (front > p).any(1)).any():
            front = np.vstack([front[~((p >= front).all(1) & (p > front).any(1))], p])
        sizes.append(len(front))
    return sizes
