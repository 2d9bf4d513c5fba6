"""Figures of the `fuzz` stage, from outputs/fuzz/<adapter>/report.json only, into
outputs/figures/fuzz/<adapter>/: omega.png, sensitivity.png, frontier.png (when the campaign computed
the frontier's MRIs) and thresholds.md.

    python scripts/plot_fuzz.py fuzz.adapter=geometric
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import json

from pipeline.figures.fuzz import render_fuzz_figures
from pipeline.fuzz.adapters import chosen_adapter
from pipeline.fuzz.report import StructuralFuzzReport
from pipeline.runtime.io import write_text
from pipeline.stages.runner import run_stage
from pipeline.stages.layout import fuzz_dir, fuzz_figures


def main(cfg) -> None:
    name = chosen_adapter(cfg)
    source = fuzz_dir(cfg, name) / "report.json"
    if not source.exists():
        raise ValueError(f"no fuzz report at {source}; run `python scripts/fuzz.py fuzz.adapter={name}` first")
    text = source.read_text()
    if json.loads(text).get("applicable", True) is False:  # the fuzz stage's statement that the adapter does not apply
        write_text(json.loads(text)["reason"] + "\n", fuzz_figures(cfg, name) / "not_applicable.md")
        print(json.loads(text)["reason"])
        return
    report = StructuralFuzzReport.from_json(text)
    for path in render_fuzz_figures(report, fuzz_figures(cfg, name)):
        print(path)


if __name__ == "__main__":
    run_stage(main)
