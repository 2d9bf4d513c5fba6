"""Stage `report`: one offline HTML page over every stage's tables and figures (issue 21), and the
screening priority lists (paired evaluations §5: clean-correct evaluation images ranked by -U, with the
budget flags and expected failure coverage at each `paired.screening.budgets`).

    python scripts/report.py   # outputs/report/index.html, outputs/report/priority/<source>/<model>.csv

Reports params.yaml's benchmark and every benchmark of `suite`, params.yaml's paired source and
`paired_suite`, the screening of `paired.source` (unless `paired.screening: null`) and every fuzzing adapter.
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import os

from pipeline.runtime.io import write_json, write_text
from pipeline.paired import read_records
from pipeline.report import priority_lists, render_report
from pipeline.report.headline import headline_metrics
from pipeline.report.provenance import collect_provenance, run_script
from pipeline.stages.runner import compose_conf, plain, run_stage
from pipeline.stages.paired_inputs import read_validated_records
from pipeline.stages.layout import ROOT, headline_path, outputs, recapture_path, report_dir, report_provenance, sibling


def models(cfg) -> dict[str, str]:
    """The model under test of params.yaml's benchmark and of each benchmark of `suite` (conf/'s composition)."""
    names = {str(cfg.benchmark.name): str(cfg.model.name)}
    for name in cfg.suite:
        names.setdefault(str(name), str(compose_conf([f"benchmark={name}"]).model.name))
    return names


def main(cfg) -> None:
    spec, out = plain(cfg.paired), report_dir(cfg)
    priority = {}
    if spec["screening"] is not None:
        synthetic = (read_validated_records(cfg) if spec["recapture"]["source"] == "embedded"
                     else read_records(sibling(recapture_path(cfg), ".synb.parquet")))
        priority[spec["source"]] = priority_lists(synthetic, read_records(recapture_path(cfg)), spec["screening"]["budgets"])
    benchmarks, provenance = models(cfg), collect_provenance(ROOT)
    html = render_report(outputs(cfg), out, benchmarks=list(benchmarks), models=benchmarks,
                         sources=list(dict.fromkeys([spec["source"], *cfg.paired_suite])), screening=list(priority),
                         adapters=list(cfg.fuzz.adapters), methods=list(cfg.search.table2_methods), priority=priority,
                         provenance=provenance, run_script=os.path.relpath(report_provenance(cfg), out))
    for source, lists in priority.items():   # written once the page renders: a missing input writes nothing
        for stale in (out / "priority" / source).glob("*.csv"):
            stale.unlink()
        for model, table in lists.items():
            write_text(table.to_csv(index=False), out / "priority" / source / f"{model}.csv")
        print(f"wrote {len(lists)} priority lists under {out / 'priority' / source}")
    headline = headline_metrics(outputs(cfg), list(benchmarks), list(dict.fromkeys([spec["source"], *cfg.paired_suite])),
                                list(priority))
    write_json(headline, headline_path(cfg))
    write_text(run_script(provenance["run"]), report_provenance(cfg))  # beside the timings: it changes every run
    write_text(html, out / "index.html")
    print(f"wrote {out / 'index.html'} ({len(html.encode()) / 1e6:.2f} MB)")


if __name__ == "__main__":
    run_stage(main)
