"""Stage `figures_screening`: Figures 2-4 of paired evaluations §5 and Fig. 6 of App. E.3 from the screening stage's tables, and
one test image under a sample of the embedded recapture conditions (the analogue of App. F's Fig. 7, row 4).

    python scripts/plot_screening.py   # outputs/figures/screening/<source>/{auroc,coverage,probes,single_probes,recapture}.png
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import pandas as pd

from pipeline.figures.recapture import plot_recapture_grid
from pipeline.figures.save import save_png
from pipeline.figures.screening import plot_auroc_by_score, plot_coverage_budget, plot_probe_rules, plot_single_probes
from pipeline.paired.records.pools import POOLS
from pipeline.perturb.recapture import make_condition
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.layout import screening_dir, screening_figures

GALLERY = ((lighting, p) for lighting in ("l1", "l5") for p in (1, 5, 14, 19, 23, 27))


def _save(fig, path) -> None:
    print(f"wrote {save_png(fig, path)}")


def main(cfg) -> None:
    spec = plain(cfg.paired)
    settings = spec["screening"]
    if settings is None:
        raise ValueError("paired.screening: null — the figures need the screening settings (budgets)")
    cells = pd.read_parquet(screening_dir(cfg) / "cells.parquet")
    intervals = pd.read_csv(screening_dir(cfg) / "intervals.csv")
    out = screening_figures(cfg)
    _save(plot_auroc_by_score(cells, intervals), out / "auroc.png")
    _save(plot_coverage_budget(cells, settings["budgets"]), out / "coverage.png")
    if "neg_TTA18" in set(cells["score"]):
        _save(plot_probe_rules(cells, settings["primary_budget"]), out / "probes.png")
    table36 = screening_dir(cfg) / "table36.csv"
    if table36.stat().st_size > 1:          # an empty table (no mild condition) is written as one empty line
        _save(plot_single_probes(pd.read_csv(table36), settings["primary_budget"]), out / "single_probes.png")
    rec = spec["records"]
    _, (test_x, _) = POOLS.get(rec["pool"])(rec["seed"], rec["image_size"])
    conditions = [make_condition(lighting, p) for lighting, p in GALLERY]
    _save(plot_recapture_grid(test_x[0], conditions, spec["recapture"]["seed"], index=0, columns=7), out / "recapture.png")


if __name__ == "__main__":
    run_stage(main)
