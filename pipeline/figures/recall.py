"""Recall@P* curves of search runs (TestNav Figures 2 and 3), rendered from traces only; the same against the
core of the front (the configurations on it in ≥ 95% of the paired bootstrap resamples, `pipeline.front.membership`).

One column per benchmark–metric pair; the top row plots recall against unique configurations u, the
bottom row against consumed budget b; each method is its mean over seeds with a ±1 standard deviation
band and an endpoint marker (■) at its highest mean recall. A vertical line marks where the reference
method (TestNav) has recovered all of P* in every seed (the largest u, resp. b, over seeds); it is left
out when some seed never gets there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from pipeline.search.scoring.metrics import recall_by_budget, recall_by_unique
from pipeline.front.space import Space


@dataclass(frozen=True)
class RecallPanel:
    """Recall curves of one benchmark–metric pair: per method, one row per seed."""

    title: str
    by_unique: dict[str, np.ndarray]  # (seeds, |Θ|), a run that stopped early keeps its last recall
    by_budget: dict[str, np.ndarray]  # (seeds, proposals)
    last_unique: dict[str, np.ndarray]  # the u each seed ended at
    u_full: dict[str, np.ndarray]  # per seed, NaN when recall 1 was never reached
    b_full: dict[str, np.ndarray]


def _stack(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Rows of unequal length, each padded with its last value."""
    n = max(len(r) for r in rows)
    return np.stack([np.concatenate([r, np.full(n - len(r), r[-1] if len(r) else 0.0)]) for r in rows])


def _first_full(curve: np.ndarray) -> float:
    hit = np.flatnonzero(curve >= 1.0)
    return float(hit[0] + 1) if len(hit) else float("nan")


def recall_panel(title: str, traces: Mapping[str, Sequence[pd.DataFrame]], pareto: np.ndarray, space: Space) -> RecallPanel:
    """Curves of every method's traces (one per seed) against P* (`pareto`: mask over configuration indices)."""
    by_unique, by_budget, last_unique, u_full, b_full = {}, {}, {}, {}, {}
    for method, runs in traces.items():
        if not runs:
            raise ValueError(f"method {method!r} has no traces for panel {title!r}")
        uniq = [recall_by_unique(t, pareto, space) for t in runs]
        budg = [recall_by_budget(t, pareto, space) for t in runs]
        by_unique[method], by_budget[method] = np.stack(uniq), _stack(budg)
        last_unique[method] = np.array([int(t["u"].iloc[-1]) if len(t) else 0 for t in runs])
        u_full[method] = np.array([_first_full(c) for c in uniq])
        b_full[method] = np.array([_first_full(c) for c in budg])
    return RecallPanel(title, by_unique, by_budget, last_unique, u_full, b_full)


def _draw(ax, curves: np.ndarray, stop: int, color, label: str) -> None:
    x = np.arange(1, stop + 1)
    mean, std = curves[:, :stop].mean(axis=0), curves[:, :stop].std(axis=0)
    ax.plot(x, mean, color=color, lw=1.4, label=label)
    ax.fill_between(x, np.clip(mean - std, 0, 1), np.clip(mean + std, 0, 1), color=color, alpha=0.18, lw=0)
    if stop:
        ax.plot([x[-1]], [mean.max()], marker="s", color=color, ms=5)


def plot_recall(panels: Sequence[RecallPanel], methods: Sequence[str], labels: Mapping[str, str] | None = None,
                reference: str = "testnav", target: str = "P*") -> Figure:
    """Figure 2 (or 3) for `methods`, in that order, over `panels` (one column each); `target` names the set
    the panels' recall counts (P*, or the core when they were made with the core as `pareto`)."""
    if not panels:
        raise ValueError("no panels to plot")
    labels = dict(labels or {})
    colors = {m: f"C{i}" for i, m in enumerate(methods)}
    fig = Figure(figsize=(3.4 * len(panels), 5.6), layout="constrained")
    axes = fig.subplots(2, len(panels), squeeze=False)
    for col, panel in enumerate(panels):
        missing = [m for m in methods if m not in panel.by_unique]
        if missing:
            raise ValueError(f"panel {panel.title!r} has no traces of {missing}")
        top, bottom = axes[0, col], axes[1, col]
        for m in methods:
            _draw(top, panel.by_unique[m], int(panel.last_unique[m].max()), colors[m], labels.get(m, m))
            _draw(bottom, panel.by_budget[m], panel.by_budget[m].shape[1], colors[m], labels.get(m, m))
        if reference in panel.u_full and np.isfinite(panel.u_full[reference]).all():
            top.axvline(panel.u_full[reference].max(), color=colors.get(reference, "k"), ls="--", lw=0.9)
            bottom.axvline(panel.b_full[reference].max(), color=colors.get(reference, "k"), ls="--", lw=0.9)
        top.set_title(panel.title, fontsize=10)
        top.set_xlabel("unique configurations u")
        bottom.set_xlabel("budget b (proposals)")
        for ax in (top, bottom):
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
        if col == 0:
            top.set_ylabel(f"Recall@{target}")
            bottom.set_ylabel(f"Recall@{target}")
    axes[0, 0].legend(fontsize=8, loc="lower right")
    return fig
