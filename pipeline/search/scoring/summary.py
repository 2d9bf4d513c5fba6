"""Summaries of search runs: per method and benchmark–metric pair, and the AUC-Recall@P* table in the
shape of TestNav Table 2 (methods × pairs, best and second-best marked per column)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

KEYS = ["benchmark", "metric", "method"]


def summarise_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds of each run metric, per benchmark, metric and method;
    `full_rate` is the fraction of seeds that recovered all of P*. u_full / b_full means are over the
    seeds that did (NaN if none)."""
    missing = [c for c in (*KEYS, "seed", "auc", "final_recall", "u_full", "b_full") if c not in runs.columns]
    if missing:
        raise ValueError(f"run table lacks columns {missing}")
    g = runs.groupby(KEYS, sort=False)
    out = g.agg(seeds=("seed", "nunique"), auc_mean=("auc", "mean"), auc_std=("auc", "std"),
                final_recall_mean=("final_recall", "mean"), final_recall_min=("final_recall", "min"),
                u_full_mean=("u_full", "mean"), b_full_mean=("b_full", "mean"))
    out["full_rate"] = g["u_full"].apply(lambda s: float(s.notna().mean()))
    return out.reset_index()


def table2(summary: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """Long form of Table 2 for `methods` (in that order): mean AUC per pair, `mark` = 'best' /
    'second' within each benchmark–metric column (ties share a mark), '' otherwise."""
    unknown = sorted(set(methods) - set(summary["method"]))
    if unknown:
        raise ValueError(f"no runs of methods {unknown}; the summary has {sorted(summary['method'].unique())}")
    t = summary[summary["method"].isin(methods)][[*KEYS, "auc_mean", "auc_std"]].copy()
    pairs = list(dict.fromkeys(zip(t["benchmark"], t["metric"])))  # columns in order of appearance
    t["_pair"] = [pairs.index(p) for p in zip(t["benchmark"], t["metric"])]
    t["_method"] = [list(methods).index(m) for m in t["method"]]
    t = t.sort_values(["_pair", "_method"], kind="stable").drop(columns=["_pair", "_method"]).reset_index(drop=True)
    marks = []
    for _, col in t.groupby(["benchmark", "metric"], sort=False):
        levels = np.unique(np.round(col["auc_mean"].to_numpy(), 12))[::-1]
        rank = {v: i for i, v in enumerate(levels)}
        marks.append(col["auc_mean"].round(12).map(lambda v: ("best", "second")[rank[v]] if rank[v] < 2 else ""))
    t["mark"] = pd.concat(marks) if marks else []
    return t


def table2_markdown(t: pd.DataFrame, labels: Mapping[str, str] | None = None, digits: int = 3) -> str:
    """Table 2 as Markdown: one row per method, one column per benchmark–metric pair; the best score
    in bold, the second best underlined."""
    labels = dict(labels or {})
    pairs = list(dict.fromkeys(zip(t["benchmark"], t["metric"])))
    methods = list(dict.fromkeys(t["method"]))
    cell = {(r.method, r.benchmark, r.metric): (r.auc_mean, r.mark) for r in t.itertuples()}

    def fmt(key: tuple[str, str, str]) -> str:
        if key not in cell:
            return "–"
        value, mark = cell[key]
        text = f"{value:.{digits}f}"
        return f"**{text}**" if mark == "best" else f"<u>{text}</u>" if mark == "second" else text

    lines = ["| Method | " + " | ".join(f"{b} {m}" for b, m in pairs) + " |", "|---|" + "---:|" * len(pairs)]
    lines += ["| " + labels.get(meth, meth) + " | " + " | ".join(fmt((meth, b, m)) for b, m in pairs) + " |" for meth in methods]
    return "\n".join(lines) + "\n"


def metrics_tree(summary: pd.DataFrame) -> dict[str, Any]:
    """{benchmark: {metric: {method: {statistic: value}}}} for `dvc metrics show` (NaN → None)."""
    tree: dict[str, Any] = {}
    for row in summary.to_dict("records"):
        stats = {k: (None if isinstance(v, float) and np.isnan(v) else (v.item() if hasattr(v, "item") else v))
                 for k, v in row.items() if k not in KEYS}
        tree.setdefault(row["benchmark"], {}).setdefault(row["metric"], {})[row["method"]] = stats
    return tree
