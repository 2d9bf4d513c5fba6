"""Stage `bounds`: identified intervals of H, L and dM_k at I0 / Ik / I5 for every (model, condition) cell.

    python scripts/bounds.py       # outputs/paired/<paired.source>/{thresholds,bounds,cells}.parquet, widths.csv, bounds.json
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

from pipeline.runtime.io import write_json, write_parquet, write_text
from pipeline.paired import bounds_table, model_thresholds, width_summary
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.paired_inputs import read_validated_records
from pipeline.stages.layout import paired_dir


def main(cfg) -> None:
    spec = plain(cfg.paired)
    records = read_validated_records(cfg)
    thresholds = model_thresholds(records, spec["clean_coverage"], spec["policy_coverages"])
    bounds, cells = bounds_table(records, thresholds, progress=spec["progress"])
    widths = width_summary(bounds)
    out = paired_dir(cfg)
    write_parquet(thresholds, out / "thresholds.parquet")
    write_parquet(bounds, out / "bounds.parquet")
    write_parquet(cells, out / "cells.parquet")
    write_text(widths.to_csv(index=False), out / "widths.csv")
    metrics = {row.target: {"W0": row.W0, "W1": row.W1, "W2": row.W2, "n_cells": int(row.n_cells)}
               for row in widths.itertuples()}
    write_json({"n_cells": int(len(cells)), "widths": metrics}, out / "bounds.json")
    print(widths.to_string(index=False))


if __name__ == "__main__":
    run_stage(main)
