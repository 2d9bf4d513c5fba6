"""The page of a user's run (`pipeline.assess`): one offline HTML file (CSS inline, figures and gallery
thumbnails as PNG data URIs, no request to any other host) built from the run's tables and figures.

What it shows, top to bottom: the model and its clean score; what breaks it (each perturbation's effect
alone, the front members that break it most above a fidelity the user can set); the front of each metric
(figure and table); the gallery of front members (image thumbnails; texts with the edits marked); the
search's progress and why it stopped; the cost; the provenance."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pipeline.report.images import array_uri, figure_uri
from pipeline.report.markup import mark_edits
from pipeline.report.provenance import collect_provenance

TEMPLATES = Path(__file__).with_name("templates")


def number(value: Any, digits: int = 3) -> str:
    """A value as people read it: counts as grouped integers, other numbers to `digits` decimals."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer() and abs(value) >= 1000):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return "–" if np.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def table(frame: pd.DataFrame, labels: dict[str, str] | None = None, digits: int = 3) -> dict:
    """A DataFrame as the template's table: header (renamed by `labels`) and formatted rows."""
    labels = labels or {}
    return {"header": [labels.get(c, c) for c in frame.columns],
            "rows": [[number(v, digits) for v in row] for row in frame.itertuples(index=False)]}


def active(row: pd.Series, names: list[str], labels: dict[str, str]) -> str:
    """θ written as its active perturbations by their labels: `typo=3, punctuation=1`, or `none` for the identity."""
    return ", ".join(f"{labels.get(n, n)}={int(row[n])}" for n in names if int(row[n]) > 0) or "none"


def worst_at_fidelity(front: pd.DataFrame, metric: str, min_fidelity: float | None, top: int) -> tuple[pd.DataFrame, float]:
    """The `top` front members of `metric` that break the model most (largest δ) among those whose ρ is at
    least `min_fidelity` (None: the median ρ of the metric's front), and the threshold used."""
    rows = front[front["metric"] == metric]
    column = f"rho_{metric}"
    if isinstance(min_fidelity, Mapping):  # one floor per metric (as a comparison's fidelity floor may be given)
        min_fidelity = min_fidelity.get(metric)
    threshold = float(np.median(rows[column])) if min_fidelity is None and len(rows) else float(min_fidelity or 0.0)
    kept = rows[rows[column] >= threshold].sort_values(["delta", column], ascending=[False, False], kind="stable")
    return kept.head(top).reset_index(drop=True), threshold


def gallery_entries(gallery: dict[str, Any]) -> dict[str, Any]:
    """The gallery for the template: image thumbnails, or texts with their edits against the clean text marked."""
    items, clean = gallery["items"], gallery["clean"]
    text = isinstance(clean, str)
    entries = [{"theta": t, "order": sum(v > 0 for v in t),
                **({"diff": mark_edits(str(clean), str(item))} if text else {"uri": array_uri(item)})}
               for t, item in zip(gallery["thetas"], items)]
    return {"kind": "text" if text else "image", "clean": clean if text else array_uri(clean), "entries": entries,
            "label": gallery["label"]}


def render_run_page(result: Any, repo: Path | None = None) -> str:
    """The HTML of the page of `result` (a `pipeline.assess.AssessResult` whose files are in `result.out_dir`)."""
    s = result.summary
    names = list(s["perturbations"])
    fronts, worst = [], []
    for metric, m in s["metrics"].items():
        rows = result.front[result.front["metric"] == metric].copy()
        rows.insert(1, "θ (active perturbations)", [active(r, names, s["labels"]) for _, r in rows.iterrows()])
        fronts.append({"metric": metric, **m, "table": table(rows.drop(columns=["metric", *names]))})
        top, threshold = worst_at_fidelity(result.front, metric, s["min_fidelity"], 10)
        top.insert(0, "θ (active perturbations)", [active(r, names, s["labels"]) for _, r in top.iterrows()])
        worst.append({"metric": metric, "threshold": number(threshold, 4),
                      "table": table(top[["θ (active perturbations)", "order", "delta", f"rho_{metric}"]])})
    alone = None
    if len(result.alone):  # a row per perturbation in Θ's order, a column per level
        alone = result.alone.pivot(index="perturbation", columns="level", values="delta")
        alone = alone.reindex(list(dict.fromkeys(result.alone["perturbation"]))).reset_index()
    figures = {p.stem: figure_uri(p) for p in sorted((result.out_dir / "figures").glob("*.png"))}
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template("run.html.j2").render(
        css=(TEMPLATES / "report.css").read_text(), s=s, number=number, fronts=fronts, worst=worst,
        alone=table(alone.rename(columns=lambda c: c if c == "perturbation" else f"level {c}")) if alone is not None else None, figures=figures,
        gallery=gallery_entries(result.gallery), provenance=collect_provenance(repo or Path(__file__).resolve().parents[2]))
