"""The report's sections, read from the stages' files under one outputs folder (the layout of
`pipeline.stages.layout`); tables and figures only, never a model.

    groundtruth/<benchmark>.summary.json, .gallery.npz   prepare/<benchmark>.json   figures/groundtruth/<benchmark>/
    search_summary/{table2,table3,recovery}.csv
    paired/<source>/{widths.csv,certified.csv,table4.md}   figures/paired/<source>/
    paired/<source>/screening/metrics.json                 figures/screening/<source>/
    fuzz/<adapter>/{summary.txt,metrics.json}              figures/fuzz/<adapter>/

A section is a plain dict the template renders; a table is {"header": [...], "rows": [[cell, ...]]}, a
cell plain text (escaped by the template) or `Markup`.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from pipeline.report.images import array_uri, figure_uri
from pipeline.report.markup import mark_edits, markdown_tables
from pipeline.search import METHODS


def need(path: Path, maker: str) -> Path:
    """`path`, or a one-line error naming it and `maker`, the stage that writes it."""
    if not path.exists():
        raise ValueError(f"missing input {path}: run `dvc repro {maker}` first")
    return path


def fmt(value: Any) -> str:
    """A table value as the report prints it: 3 decimals (thousands grouped above 1,000), "–" for NaN."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "–"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3f}"
    return str(value)


def frame_table(frame: pd.DataFrame, labels: Mapping[str, str] | None = None) -> dict:
    """A DataFrame as a report table, column names renamed by `labels`."""
    labels = labels or {}
    return {"header": [labels.get(c, c) for c in frame.columns],
            "rows": [[fmt(v) for v in row] for row in frame.itertuples(index=False)]}


def figures(folder: Path, skip: Sequence[str] = ()) -> list[dict]:
    """Every PNG in `folder` (sorted by name, names starting with a prefix of `skip` left out), inlined."""
    if not folder.is_dir():
        return []
    return [{"name": p.name, "uri": figure_uri(p)} for p in sorted(folder.glob("*.png")) if not p.name.startswith(tuple(skip))]


def method_label(method: str) -> str:
    return METHODS[method].label if method in METHODS else method


# ---------------------------------------------------------------------------------------------- benchmarks
def table2_of(table2: pd.DataFrame, benchmark: str) -> dict:
    """Table 2 (AUC-Recall@P*, mean ± sd over seeds) of one benchmark: a row per method, a column per
    fidelity metric; best in bold, second best underlined, as the Markdown table marks them."""
    rows = table2[table2["benchmark"] == benchmark]
    metrics = list(dict.fromkeys(rows["metric"]))
    body = []
    for method, group in rows.groupby("method", sort=False):
        cells = []
        by_metric = group.set_index("metric")
        for m in metrics:
            if m not in by_metric.index:
                cells.append("–")
                continue
            r = by_metric.loc[m]
            std = float(r["auc_std"])
            text = fmt(float(r["auc_mean"])) + ("" if math.isnan(std) else f" ± {fmt(std)}")  # one seed: no spread
            mark = r.get("mark")
            cells.append(Markup("<strong>{}</strong>").format(text) if mark == "best" else
                         Markup("<u>{}</u>").format(text) if mark == "second" else text)
        body.append([method_label(str(method)), *cells])
    return {"header": ["method", *metrics], "rows": body}


RECOVERY = {"metric": "metric", "method": "method", "reached": "seeds at recall 1", "u_full_mean": "u (mean)",
            "u_full_sd": "u (sd)", "u_full_pct": "u (% of Θ)",
            "u_cens_median": "u (median of all seeds, never = |Θ| + 1)", "b_full_mean": "b (mean)", "b_full_sd": "b (sd)",
            "final_recall_mean": "final recall", "speedup_u": "speed-up u", "speedup_b": "speed-up b"}


COUNTS = ("u_full_mean", "u_full_sd", "u_cens_median", "b_full_mean", "b_full_sd")  # configurations and proposals


def count(value: Any) -> str:
    """A count, or a mean or spread of counts, as people read it: whole numbers without decimals, others to one."""
    value = float(value)
    if math.isnan(value):
        return "–"
    return f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}"


def recovery_of(recovery: pd.DataFrame, benchmark: str, methods: Sequence[str]) -> dict:
    """Recovery of all of P* (§4.2) for each metric of one benchmark: the rows of `methods` (Table 2's), counts
    of configurations and proposals without spurious decimals."""
    rows = recovery[(recovery["benchmark"] == benchmark) & recovery["method"].isin(methods)].copy()
    for column in COUNTS:
        rows[column] = rows[column].map(count)
    rows["reached"] = [f"{int(r)}/{int(s)}" for r, s in zip(rows["reached"], rows["seeds"])]
    rows["method"] = rows["method"].map(method_label)
    return frame_table(rows[list(RECOVERY)], RECOVERY)


def gallery(path: Path) -> dict:
    """The P* gallery (`groundtruth`'s .gallery.npz): the example under every P* configuration (the union
    over the fidelity metrics), ordered by order then θ; image thumbnails, or texts with the edits
    against the clean text marked."""
    with np.load(path) as z:
        thetas, items, clean = z["thetas"], z["images"], z["clean"]
    order = sorted(range(len(thetas)), key=lambda i: (int((thetas[i] > 0).sum()), tuple(int(v) for v in thetas[i])))
    text = items.dtype.kind == "U"
    entries = []
    for i in order:
        theta = tuple(int(v) for v in thetas[i])
        entry = {"theta": theta, "order": sum(v > 0 for v in theta)}
        entry.update({"diff": mark_edits(str(clean), str(items[i]))} if text else {"uri": array_uri(items[i])})
        entries.append(entry)
    return {"kind": "text" if text else "image", "clean": None if text else array_uri(clean), "entries": entries}


def benchmark_section(outputs: Path, name: str, model: str | None, search: Mapping[str, pd.DataFrame],
                      methods: Sequence[str]) -> dict:
    """One benchmark: clean score and model, the P* figures, the P* gallery, Tables 2 and 3 and recovery."""
    summary = json.loads(need(outputs / "groundtruth" / f"{name}.summary.json", "groundtruth").read_text())
    prepared = json.loads(need(outputs / "prepare" / f"{name}.json", "prepare").read_text())
    clean = {k: v for k, v in summary.items() if k.startswith("clean_")}
    t2, t3, rec = (search[k] for k in ("table2", "table3", "recovery"))
    t3 = t3[t3["benchmark"] == name].drop(columns="benchmark")
    return {"name": name, "model": model or "–", "clean": {k.removeprefix("clean_"): fmt(float(v)) for k, v in clean.items()},
            "prepare": {k: fmt(v) for k, v in prepared.items()}, "space_size": fmt(summary.get("space_size", float("nan"))),
            "figures": figures(outputs / "figures" / "groundtruth" / name, skip=("gallery_",)),
            "gallery": gallery(need(outputs / "groundtruth" / f"{name}.gallery.npz", "groundtruth")),
            "fronts": {str(r["metric"]): fmt(r["size"]) for _, r in t3.iterrows()},
            "table2": table2_of(t2, name), "table3": frame_table(t3, {"size": "|P*|", "core": "|core| (π ≥ 0.95)", "plausible": "|plausible| (π ≥ 0.05)"}),
            "recovery": recovery_of(rec, name, methods)}


# ------------------------------------------------------------------------------------ paired, screening, fuzz
def paired_section(outputs: Path, source: str) -> dict:
    """Paired bounds (mean widths W0/W1/W2 of H, L, dM_k) and the certified policy orderings of a source."""
    folder = outputs / "paired" / source
    widths = pd.read_csv(need(folder / "widths.csv", "bounds"))
    certified = pd.read_csv(need(folder / "certified.csv", "policies"))
    return {"source": source, "widths": frame_table(widths), "certified": frame_table(certified),
            "table4": markdown_tables(need(folder / "table4.md", "policies").read_text()),
            "figures": figures(outputs / "figures" / "paired" / source)}


def priority_href(source: str, model: str) -> str:
    """Where the page links the priority list of `model` on `source`, relative to the page."""
    return f"priority/{source}/{model}.csv"


def priority_table(source: str, lists: Mapping[str, pd.DataFrame]) -> dict:
    """The priority lists of `source` (`pipeline.report.priority`): a link to each, its number of images
    and its expected failure coverage per budget."""
    header, rows = ["model", "images"], []
    for model, table in sorted(lists.items()):
        budgets = [c for c in table.columns if c.startswith("coverage_")]
        header = ["model", "images", *(f"expected coverage, q = {c.removeprefix('coverage_')}" for c in budgets)]
        link = Markup('<a href="{}">{}</a>').format(priority_href(source, model), model)
        rows.append([link, fmt(len(table)), *(fmt(float(table[c].iloc[0])) if len(table) else "–" for c in budgets)])
    return {"header": header, "rows": rows}


def screening_section(outputs: Path, source: str, lists: Mapping[str, pd.DataFrame]) -> dict:
    """Headline screening numbers by tier (AUROC and coverage of U and S, the U - S interval), the
    figures, and the table of the priority lists `lists` (model -> list)."""
    metrics = json.loads(need(outputs / "paired" / source / "screening" / "metrics.json", "screening").read_text())
    rows = []
    for tier, h in metrics.get("headline", {}).items():
        gap = h.get("auroc_U-S", {})
        budgets = sorted({k.split("_")[1] for k in h if k.startswith("coverage_") and k.endswith("_U")})
        rows.append([tier, fmt(h.get("cells", 0)), fmt(h.get("auroc_U", math.nan)), fmt(h.get("auroc_S", math.nan)),
                     f"{fmt(gap.get('estimate', math.nan))} [{fmt(gap.get('lo', math.nan))}, {fmt(gap.get('hi', math.nan))}]",
                     "; ".join(f"q={q}: {fmt(h[f'coverage_{q}_U'])} vs {fmt(h.get(f'coverage_{q}_S', math.nan))}" for q in budgets)])
    facts = {k: fmt(metrics[k]) for k in ("n_models", "n_conditions", "scored_images") if k in metrics}
    facts.update({f"{tier} conditions": fmt(n) for tier, n in metrics.get("tier_counts", {}).items()})
    return {"source": source, "facts": facts, "figures": figures(outputs / "figures" / "screening" / source),
            "headline": {"header": ["tier", "cells", "AUROC U", "AUROC S", "U − S [95% interval]", "coverage U vs S"], "rows": rows},
            "priority": priority_table(source, lists)}


def fuzz_section(outputs: Path, adapter: str) -> dict:
    """One fuzzing campaign: its headline metrics, the six-stage summary text, its figures and the
    adversarial thresholds table (`figures_fuzz_<adapter>`'s thresholds.md) when present."""
    folder = outputs / "fuzz" / adapter
    summary = need(folder / "summary.txt", f"fuzz_{adapter}").read_text()
    metrics = json.loads((folder / "metrics.json").read_text()) if (folder / "metrics.json").exists() else {}
    thresholds = outputs / "figures" / "fuzz" / adapter / "thresholds.md"
    return {"adapter": adapter, "summary": summary, "metrics": {k: fmt(v) for k, v in metrics.items() if k != "adapter"},
            "thresholds": markdown_tables(thresholds.read_text()) if thresholds.exists() else None,
            "figures": figures(outputs / "figures" / "fuzz" / adapter)}
