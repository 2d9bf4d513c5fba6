"""Ground-truth figures, from tables only: the Pareto-front panels (TestNav Fig. 1) and the gallery of
one test image under every P* configuration grouped by order (Figs. 5-6)."""
from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.front.composition import composition_label, front_composition  # noqa: E402

METRIC_LABELS = {"ssim": "SSIM", "kid": "KID (negated)", "chrf": "chrF", "bert_f1": "BERT-F1"}


def plot_pareto_fronts(table: pd.DataFrame, metrics: Sequence[str], n_dims: int, benchmark: str, count_identity: bool = False) -> plt.Figure:
    """One panel per fidelity metric: every θ in grey, P* highlighted, |P*| and counts by order (Fig. 1),
    under Table 3's convention on the identity (`pipeline.front.composition`); where the table has the
    bootstrap's columns (`pipeline.front.per_input`), each member's 95% interval of δ, and the core filled."""
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.8), squeeze=False)
    for ax, m in zip(axes[0], metrics):
        front = table[table[f"pareto_{m}"]].sort_values(f"rho_{m}_norm")
        ax.scatter(table[f"rho_{m}_norm"], table["delta_norm"], s=6, c="0.75", label="Θ")
        ax.plot(front[f"rho_{m}_norm"], front["delta_norm"], "-", c="teal", lw=1)
        if f"set_{m}" in table:  # δ's 95% interval, the core filled, the rest of P* hollow
            span = table["delta"].max() - table["delta"].min() or 1.0
            low, high = ((front["delta"] - front[c]) / span for c in ("delta_lo", "delta_hi"))
            ax.errorbar(front[f"rho_{m}_norm"], front["delta_norm"], yerr=[low.clip(lower=0), (-high).clip(lower=0)], fmt="none",
                        ecolor="teal", elinewidth=0.6, alpha=0.6)
            core = front[f"set_{m}"] == "core"
            ax.plot(front.loc[core, f"rho_{m}_norm"], front.loc[core, "delta_norm"], "o", c="teal", ms=4,
                    label=f"P*, core (π ≥ 0.95): {int(core.sum())}")
            ax.plot(front.loc[~core, f"rho_{m}_norm"], front.loc[~core, "delta_norm"], "o", mfc="white", c="teal", ms=4,
                    label=f"P*, π < 0.95: {int((~core).sum())}")
        else:
            ax.plot(front[f"rho_{m}_norm"], front["delta_norm"], "o", c="teal", ms=4, label="P*")
        ax.set_xlabel(f"fidelity ρ ({METRIC_LABELS.get(m, m)}, normalised)")
        ax.set_ylabel("degradation δ (normalised)")
        label = composition_label(front_composition(front["order"], n_dims, count_identity), n_dims, count_identity)
        ax.set_title(f"{benchmark} / {METRIC_LABELS.get(m, m)}: {label}", fontsize=9)
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


def plot_text_gallery(thetas: np.ndarray, texts: np.ndarray, clean: str, table: pd.DataFrame, dims: Sequence[str], metric: str,
                      width: int = 110) -> plt.Figure:
    """The text counterpart of `plot_gallery`: the example text under every P* configuration of `metric`,
    grouped by order (highest fidelity first within an order), each line labelled θ, δ, ρ."""
    import textwrap

    front = table[table[f"pareto_{metric}"]]
    by_theta = {tuple(int(v) for v in t): str(x) for t, x in zip(thetas, texts)}
    def wrap(text: str) -> list[str]:  # keeps the text's own line breaks (code prompts), wraps long lines
        return [w for line in text.splitlines() or [""] for w in textwrap.wrap(line, width, drop_whitespace=False) or [""]]

    lines: list[tuple[str, str]] = [("clean", s) for s in wrap(str(clean))]
    for order in sorted(front["order"].unique()):
        lines.append(("order", f"order {order}"))
        for _, row in front[front["order"] == order].sort_values(f"rho_{metric}_norm", ascending=False).iterrows():
            theta = tuple(int(row[d]) for d in dims)
            lines.append(("label", f"θ={theta}  δ={row['delta']:.3f}  ρ={row[f'rho_{metric}']:.3g}"))
            lines += [("text", s) for s in wrap(by_theta[theta])]
    fig = plt.figure(figsize=(8.5, 0.17 * len(lines) + 0.6))
    style = {"clean": dict(color="0.2"), "order": dict(weight="bold"), "label": dict(color="teal"), "text": dict(color="0.1")}
    for i, (kind, s) in enumerate(lines):
        fig.text(0.02, 1 - (i + 2) * 0.17 / fig.get_figheight(), s, fontsize=7, family="monospace", **style[kind])
    fig.suptitle(f"P* configurations under (δ, ρ_{METRIC_LABELS.get(metric, metric)}), grouped by order", fontsize=9)
    return fig
