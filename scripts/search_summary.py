"""Stage `search_summary`: per-run metrics of every trace, their summary per method, the
AUC-Recall@P* table in the shape of TestNav Table 2, the recovery statistics of §4.2 and the P*
composition of Table 3 (CSV + Markdown each), plus a metrics JSON for DVC.

    python scripts/search_summary.py        # every benchmark with traces under outputs/search

Writes outputs/search_summary/{runs.csv, summary.csv, table2.*, recovery.*, table3.*, monotonicity.csv, metrics.json}
(monotonicity: the share of lattice edges along which δ does not fall and ρ does not rise, per benchmark,
metric and dimension; `pipeline.search.studies.monotonicity`).
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import pandas as pd

from pipeline.front.composition import confidence_sets, table3, table3_markdown
from pipeline.runtime.io import write_json, write_text
from pipeline.search import METHODS, run_metrics
from pipeline.search.studies.monotonicity import COLUMNS as MONOTONICITY_COLUMNS
from pipeline.search.studies.monotonicity import edge_monotonicity
from pipeline.search.scoring.recovery import recovery_markdown, recovery_table
from pipeline.search.scoring.summary import metrics_tree, summarise_runs, table2, table2_markdown
from pipeline.stages.runner import run_stage
from pipeline.stages.layout import summary_dir
from pipeline.stages.search_inputs import groundtruth, problems


def main(cfg) -> None:
    rows = []
    sizes, fronts, monotone, confidence = {}, {}, [], {}
    for name, metric, problem, methods in problems(cfg):
        sizes[name] = problem.space.size
        monotone.append(edge_monotonicity(problem.oracle.objectives, problem.space).assign(benchmark=name, metric=metric))
        fronts[(name, metric)] = ((problem.space.grid()[problem.pareto] > 0).sum(axis=1), problem.space.n_dims)
        confidence.update(confidence_sets(groundtruth(cfg, name), name, metric, problem.space.names))
        for method, runs in methods.items():
            for seed, trace in runs:
                rows.append({"benchmark": name, "metric": metric, "method": method, "seed": seed,
                             **run_metrics(trace, problem.pareto, problem.space, problem.core)})
    if not rows:
        raise ValueError(f"no search traces found under {summary_dir(cfg).parent / 'search'}; run scripts/search.py first")
    runs = pd.DataFrame(rows)
    runs["space_size"] = runs["benchmark"].map(sizes)
    summary = summarise_runs(runs)
    methods = [m for m in cfg.search.table2_methods if m in set(summary["method"])]
    t2 = table2(summary, methods)
    out = summary_dir(cfg)
    write_text(runs.to_csv(index=False), out / "runs.csv")
    write_text(summary.to_csv(index=False), out / "summary.csv")
    write_text(t2.to_csv(index=False), out / "table2.csv")
    markdown = table2_markdown(t2, {m: METHODS[m].label for m in METHODS})
    write_text("AUC-Recall@P* (mean over seeds); **best**, <u>second best</u> per column.\n\n" + markdown, out / "table2.md")
    labels = {m: METHODS[m].label for m in METHODS}
    recovery = recovery_table(runs, reference="testnav")
    write_text(recovery.to_csv(index=False), out / "recovery.csv")
    write_text("Recovery of all of P* (TestNav §4.2): mean ± sd over the seeds that reach recall 1; speed-up = the method's "
               "mean over TestNav's (> 1: TestNav needs fewer), where both reach recall 1 in every seed. Beside it, the "
               "core (the configurations on the front in ≥ 95% of 1,000 paired bootstrap resamples of the test inputs, "
               "Table 3): the seeds that evaluate all of it and the median u they need, a seed that never does "
               "counted as |Θ| + 1.\n\n"
               + recovery_markdown(recovery, labels), out / "recovery.md")
    count_identity = bool(cfg.report.count_identity)
    t3 = table3(fronts, count_identity, confidence)
    write_text(t3.to_csv(index=False), out / "table3.csv")
    write_text(("P* composition by order, the identity θ = 0 included" if count_identity else
                "P* composition by order, the identity θ = 0 left out (the paper's convention)")
               + "; |core| and |plausible|: the configurations on the front in ≥ 95% and ≥ 5% of 1,000 paired bootstrap "
               "resamples of the test inputs (stability under resampling, not the probability of being on the true front)."
               "\n\n" + table3_markdown(t3),
               out / "table3.md")
    monotonicity = pd.concat(monotone, ignore_index=True)
    write_text(monotonicity[["benchmark", "metric", *MONOTONICITY_COLUMNS]].to_csv(index=False, float_format="%.4g"), out / "monotonicity.csv")
    write_json(metrics_tree(summary), out / "metrics.json")
    print(markdown)


if __name__ == "__main__":
    run_stage(main)
