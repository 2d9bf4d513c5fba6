"""What a user's run found, as tables a person reads: the front of each fidelity metric (`front.csv`), what
breaks the model (each perturbation alone, the worst front members above a fidelity), the summary
(`summary.json`) and the short terminal summary."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.report.run_page import active, worst_at_fidelity
from pipeline.front.space import Space


def front_table(ranked: Mapping[str, pd.DataFrame], values: Mapping[tuple[int, ...], Mapping[str, float]], space: Space,
                metrics: Sequence[str]) -> pd.DataFrame:
    """One row per front member of each metric's search (rank 0 of R): the metric, θ's levels, its order
    (active perturbations), ψ, δ and raw ρ of every metric, sorted by metric then ρ descending."""
    rows = []
    for metric, table in ranked.items():
        for _, r in table[table["rank"] == 0].iterrows():
            theta = tuple(int(r[n]) for n in space.names)
            v = values[theta]
            rows.append({"metric": metric, **dict(zip(space.names, theta)), "order": sum(x > 0 for x in theta),
                         "psi": v["psi"], "delta": v["delta"], **{f"rho_{m}": v[f"rho_{m}"] for m in metrics}})
    columns = ["metric", *space.names, "order", "psi", "delta", *(f"rho_{m}" for m in metrics)]
    front = pd.DataFrame(rows, columns=columns)
    if front.empty:
        return front
    front["_rho"] = [r[f"rho_{m}"] for m, (_, r) in zip(front["metric"], front.iterrows())]
    return front.sort_values(["metric", "_rho"], ascending=[True, False], kind="stable").drop(columns="_rho").reset_index(drop=True)


def effect_alone(values: Mapping[tuple[int, ...], Mapping[str, float]], space: Space, labels: Mapping[str, str]) -> pd.DataFrame:
    """δ of each perturbation (named by `labels`) applied alone at each level: the axis points of Θ that were
    evaluated (a run evaluates all of them before its search, `pipeline.assess.live.singletons`)."""
    rows = []
    for i, name in enumerate(space.names):
        for level in range(space.levels):
            theta = tuple(level if j == i else 0 for j in range(space.n_dims))
            if theta in values:
                rows.append({"perturbation": labels.get(name, name), "level": level, "delta": values[theta]["delta"]})
    return pd.DataFrame(rows, columns=["perturbation", "level", "delta"])


def stop_reason(trace: pd.DataFrame, budget: int, size: int, target: float | None) -> str:
    """Why a live search ended: its estimate (of its recall of the core where it gives one, else of Recall@P*)
    reached the target, Θ was exhausted, or the budget was spent."""
    column, what = ("est_core", "its recall of the core") if "est_core" in trace else ("est_recall", "Recall@P*")
    estimate = float(trace[column].iloc[-1]) if column in trace and len(trace) else float("nan")
    if target is not None and not np.isnan(estimate) and estimate >= target:
        return f"its estimate of {what} reached {estimate:.3f} (target {target})"
    if int(trace["u"].iloc[-1]) >= size:
        return f"every configuration of Θ ({size:,}) was evaluated"
    if len(trace) >= budget:
        return f"the proposal budget B = {budget:,} was spent"
    return "the method had nothing left to propose"


@dataclass
class AssessResult:
    """A user's run: `front` (one row per front member, `front_table`), `summary` (what `summary.json`
    holds), and the tables the page shows. `to_html(path)` writes the run's page."""

    front: pd.DataFrame
    summary: dict[str, Any]
    traces: dict[str, pd.DataFrame] = field(repr=False)
    ranked: dict[str, pd.DataFrame] = field(repr=False)
    alone: pd.DataFrame = field(repr=False)
    gallery: dict[str, Any] = field(repr=False)
    groundtruth: pd.DataFrame | None = field(default=None, repr=False)
    out_dir: Path | None = None

    def to_html(self, path: str | Path) -> Path:
        """Write the run's page (`pipeline.report.run_page`) to `path`; the figures are read from the run's
        folder, where the run wrote them."""
        from pipeline.runtime.io import atomic_path
        from pipeline.report.run_page import render_run_page

        path = Path(path)
        html = render_run_page(self)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(html, encoding="utf-8")
        return path

    def terminal(self, top: int) -> str:
        """The short summary printed at the end of a run."""
        s = self.summary
        lines = [f"run {s['run']}: {s['model']} on {s['data']} ({s['n_inputs']:,} inputs, {s['modality']})",
                 f"clean {s['task_metric']}: {s['clean_score']:.4f}"]
        for metric, m in s["metrics"].items():
            lines.append(f"{metric}: front of {m['front']} configurations from {m['evaluated']:,} evaluated "
                         f"({m['rounds']} rounds); stopped because {m['stopped']}")
            if "front_in_core" in m:
                lines.append(f"  {m['front_in_core']} of them in the core (on the front in ≥ 95% of bootstrap resamples of the inputs)")
            worst, threshold = worst_at_fidelity(self.front, metric, s["min_fidelity"], top)
            if len(worst):
                lines.append(f"  breaks it most at ρ ≥ {threshold:.4g}:")
            for _, r in worst.iterrows():
                theta = active(r, s["perturbations"], s["labels"])
                lines.append(f"    δ {r['delta']:.3f}  ρ {r[f'rho_{metric}']:.4g}  {theta}")
        lines.append(f"cost: {s['configurations_evaluated']:,} of {s['space_size']:,} configurations, "
                     f"{s['model_evaluations']:,} model evaluations ({100 * s['share_of_exhaustive']:.1f}% of exhaustive"
                     + (f"; racing saved {s['saved_by_racing']:,}" if s.get("racing") else "") + f"), {s['wall_seconds']:.0f} s")
        if s.get("exhaustive"):
            for metric, e in s["exhaustive"].items():
                lines.append(f"exhaustive {metric}: |P*| = {e['pareto']}, the search found {e['found']} ({100 * e['recall']:.0f}%)")
        if self.out_dir is not None:
            lines.append(f"page: {self.out_dir / 'index.html'}")
        return "\n".join(lines)
