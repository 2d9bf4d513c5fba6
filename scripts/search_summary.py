"""Stage `search_summary`: per-run metrics of every trace, their summary per method, and the
AUC-Recall@P* table in the shape of TestNav Table 2 (CSV + Markdown) plus a metrics JSON for DVC.

    python scripts/search_summary.py        # every benchmark with traces under outputs/search

Writes outputs/search_summary/{runs.csv, summary.csv, table2.csv, table2.md, metrics.json}.
"""
from __future__ import annotations

import pandas as pd
from _entry import run_stage
from search_paths import problems_with_traces, summary_dir

from pipeline.io import write_json, write_text
from pipeline.search import METHODS, run_metrics
from pipeline.search.summary import metrics_tree, summarise_runs, table2, table2_markdown


def main(cfg) -> None:
    rows = []
    for name, metric, problem, methods in problems_with_traces(cfg):
        for method, runs in methods.items():
            for seed, trace in runs:
                rows.append({"benchmark": name, "metric": metric, "method": method, "seed": seed,
                             **run_metrics(trace, problem.pareto, problem.space)})
    if not rows:
        raise ValueError(f"no search traces found under {summary_dir(cfg).parent / 'search'}; run scripts/search.py first")
    runs = pd.DataFrame(rows)
    summary = summarise_runs(runs)
    methods = [m for m in cfg.search.table2_methods if m in set(summary["method"])]
    t2 = table2(summary, methods)
    out = summary_dir(cfg)
    write_text(runs.to_csv(index=False), out / "runs.csv")
    write_text(summary.to_csv(index=False), out / "summary.csv")
    write_text(t2.to_csv(index=False), out / "table2.csv")
    markdown = table2_markdown(t2, {m: METHODS[m].label for m in METHODS})
    write_text("AUC-Recall@P* (mean over seeds); **best**, <u>second best</u> per column.\n\n" + markdown, out / "table2.md")
    write_json(metrics_tree(summary), out / "metrics.json")
    print(markdown)


if __name__ == "__main__":
    run_stage(main)
