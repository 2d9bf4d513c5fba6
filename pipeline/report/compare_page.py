"""The page of a comparison of two models (`pipeline.assess.compare`): one offline HTML file built from the
comparison's tables and figures, as the page of a user's run (`pipeline.report.run_page`).

What it shows, top to bottom: the verdict; both models and their clean accuracy; each perturbation alone (Δ per
level); the regressions (the configurations where B is significantly worse, then the rest by Δ); both fronts
overlaid and the regression front with π; the gallery of inputs that A gets right and B wrong under the same
perturbation; the cost of each model; the provenance."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pipeline.report.images import array_uri, figure_uri
from pipeline.report.markup import mark_edits
from pipeline.report.provenance import collect_provenance
from pipeline.report.run_page import TEMPLATES, number, table

SHOWN = 40  # rows of the regression table on the page (regressions.csv holds all)


def gallery_entries(gallery: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each gallery input as the template shows it: a thumbnail pair, or the text with its edits marked."""
    out = []
    for e in gallery:
        text = isinstance(e["clean"], str)
        out.append({**{k: e[k] for k in ("theta", "input", "label", "baseline_answer", "model_answer", "verdict")},
                    "Delta": number(e["Delta"]),
                    **({"diff": mark_edits(str(e["clean"]), str(e["item"]))} if text else
                       {"clean_uri": array_uri(e["clean"]), "uri": array_uri(e["item"])})})
    return out


def render_comparison_page(result: Any, repo: Path | None = None) -> str:
    """The HTML of the page of `result` (a `pipeline.assess.compare.ComparisonResult` whose figures are in its folder)."""
    s = result.summary
    shown = ["theta", "order", *(f"rho_{m}" for m in s["metrics"]), "delta_a", "delta_b", "Delta", "Delta_lo", "Delta_hi",
             "band_lo", "band_hi", "verdict", "a_only", "b_only"]
    regressions = result.regressions
    alone = regressions[regressions["order"] == 1]
    alone_rows = []
    for p in s["perturbations"]:
        rows = alone[alone[p] > 0].sort_values(p)
        alone_rows.append([s["labels"][p], *[f"{number(r['Delta'])} ({r['verdict']})" for _, r in rows.iterrows()]])
    levels = range(1, s["levels"])
    fronts = []
    for metric, m in s["metrics"].items():
        rows = result.front[result.front["metric"] == metric] if len(result.front) else result.front
        columns = ["theta", "order", f"rho_{metric}", "Delta", "Delta_lo", "Delta_hi", "verdict", "pi", "set"]
        fronts.append({"metric": metric, **m, "table": table(rows[columns] if len(rows) else rows)})
    figures = {p.stem: figure_uri(p) for p in sorted((result.out_dir / "figures").glob("*.png"))}
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template("compare.html.j2").render(
        css=(TEMPLATES / "report.css").read_text(), s=s, number=number, figures=figures, fronts=fronts, shown=SHOWN,
        alone={"header": ["perturbation", *(f"level {k}" for k in levels)], "rows": alone_rows},
        regressions=table(regressions[shown].head(SHOWN)), gallery=gallery_entries(result.gallery),
        provenance=collect_provenance(repo or Path(__file__).resolve().parents[2]))
