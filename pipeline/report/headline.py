"""The headline metrics: the few numbers a user compares across experiments (`dvc metrics show`, `dvc exp
show`), read from the stages' tables; everything else stays in the tables and the report. Per benchmark,
the clean score ψ(D) and |P*| per fidelity metric (TestNav Table 3); per (benchmark, metric) pair, the
AUC-Recall and the mean unique evaluations u to full recall of TestNav, Random and the recommended method
(Table 2, §4.2); per paired source, the mean widths W0/W1/W2 of the identified interval of dM_k (paired
evaluations, the bounds stage); per screened source, AUROC and coverage at q = 0.2 of U and S on the mild
conditions (§5)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

HEADLINE_METHODS = ("testnav", "random", "pnd")  # the paper's method, the floor, the recommended search (GP-PND)


def _rounded(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else round(float(value), 6)


def headline_metrics(outputs: Path, benchmarks: Sequence[str], sources: Sequence[str], screening: Sequence[str],
                     methods: Sequence[str] = HEADLINE_METHODS) -> dict[str, Any]:
    """The headline numbers of a run, nested by benchmark, pair and source (values rounded to 6 digits)."""
    table2 = pd.read_csv(outputs / "search_summary" / "table2.csv")
    recovery = pd.read_csv(outputs / "search_summary" / "recovery.csv")
    out: dict[str, Any] = {"benchmarks": {}, "paired": {}, "screening": {}}
    for name in benchmarks:
        summary = json.loads((outputs / "groundtruth" / f"{name}.summary.json").read_text())
        clean = next(v for k, v in summary.items() if k.startswith("clean_"))
        entry: dict[str, Any] = {"clean": _rounded(clean), "pareto_size": {m: p["size"] for m, p in summary["pareto"].items()}}
        for metric in summary["pareto"]:
            rows = {}
            for method in methods:
                auc = table2[(table2.benchmark == name) & (table2.metric == metric) & (table2.method == method)]
                rec = recovery[(recovery.benchmark == name) & (recovery.metric == metric) & (recovery.method == method)]
                if len(auc) or len(rec):
                    rows[method] = {"auc": _rounded(auc["auc_mean"].iloc[0]) if len(auc) else None,
                                    "u_full": _rounded(rec["u_full_mean"].iloc[0]) if len(rec) else None}
            entry[metric] = rows
        out["benchmarks"][name] = entry
    for source in sources:
        widths = json.loads((outputs / "paired" / source / "bounds.json").read_text())["widths"]["dM_k"]
        out["paired"][source] = {level: _rounded(widths[level]) for level in ("W0", "W1", "W2")}
    for source in screening:
        mild = json.loads((outputs / "paired" / source / "screening" / "metrics.json").read_text())["headline"]["mild"]
        out["screening"][source] = {k: _rounded(mild[k]) for k in ("auroc_U", "auroc_S", "coverage_0.2_U", "coverage_0.2_S")}
    return out


def count_values(tree: Any) -> int:
    """How many numbers a nested metrics dict holds (what `dvc metrics show` lists)."""
    if isinstance(tree, dict):
        return sum(count_values(v) for v in tree.values())
    return 1
