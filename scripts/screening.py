"""Stage `screening`: which images deserve a real recapture (paired evaluations §5, App. E) and whether
paired summaries predict model-level real performance (§6, App. I), on one source.

Reads the Syn-B records `outputs/records/<source>.parquet` (stage `records`; for an ES / ES-Diverse
source the recapture stage's `<source>-recapture.synb.parquet`), the real-condition records
`<source>-recapture.parquet` and their probe probabilities (stage `recapture`); writes
under `outputs/paired/<source>/screening/`:

* `table16` ... `table39`, `capture` (`.csv` and `.md`): the App. E tables (`pipeline.paired.screening.tables`;
  Tables 23 and 24, the swapped-split check: `pipeline.paired.screening.swap`; titles and notes:
  `pipeline.paired.screening.report`)
  with the paper's ES / Diverse numbers beside the embedded ones where §5 and App. E state them;
* `table43`, `table46` (`.csv`, `.md`): model-level prediction (`pipeline.paired.prediction`);
* `cells.parquet` (every model x condition x score cell), `intervals.csv` (model-group intervals),
  `tiers.csv`, `prediction_errors.parquet` (stored out-of-fold errors), `metrics.json` (tier counts,
  headline AUROC and coverage).

    python scripts/screening.py
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import time
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import nullcontext
from multiprocessing import get_context

import pandas as pd

from pipeline.runtime.io import atomic_path, write_json, write_parquet, write_text
from pipeline.paired import read_records
from pipeline.paired.prediction import source_prediction
from pipeline.paired.records import check_clean_agreement, check_same_records
from pipeline.runtime.numerics import n_workers
from pipeline.paired.screening import TITLES, condition_tiers, markdown, screening_tables, swapped_tables, table_notes
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.paired_inputs import read_validated_records
from pipeline.stages.layout import recapture_path, screening_dir, sibling
from pipeline.runtime.worker_state import die_with_parent


def _done(function, *args) -> Future:
    """`function(*args)`, run here, as a finished future (the one-process stand-in for a pool's `submit`)."""
    future: Future = Future()
    future.set_result(function(*args))
    return future


def _csv(table: pd.DataFrame, path) -> None:
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)


def main(cfg) -> None:
    spec = plain(cfg.paired)
    settings = spec["screening"]
    if settings is None:
        raise ValueError("paired.screening: null — the screening stage needs its settings (seed, budgets, draws, ...)")
    start = time.perf_counter()
    source = spec["source"]
    synb = read_records(sibling(recapture_path(cfg), ".synb.parquet"))
    if spec["recapture"]["source"] == "embedded":   # Syn-B = the records stage's table; the recapture stage's copy must agree
        synthetic = read_validated_records(cfg)
        check_same_records(synthetic, synb)
    else:
        synthetic = synb
    real = read_records(recapture_path(cfg))
    check_clean_agreement(synthetic, real)
    probes = pd.read_parquet(sibling(recapture_path(cfg), ".probes.parquet"))
    tiers = condition_tiers(real, split="dev")
    # with more than one worker the App. E tables (one core, ~25 s) go to a worker process while this one makes the §6
    # tables, whose ridge refits, one after another here, would otherwise have both cores after them: each part is a
    # pure function of the records and its own seeded generator, so the values are those of one process
    parallel = n_workers(int(cfg.workers)) > 1
    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=die_with_parent) if parallel else nullcontext() as pool:
        submit = pool.submit if parallel else _done
        tables_job = submit(screening_tables, synthetic, real, probes, source, settings)
        swapped_job = submit(swapped_tables, synthetic, real, source, settings)
        pred_tables, errors, summaries = source_prediction(synthetic, real, tiers, spec, 1)
        (tables, metrics), swapped = tables_job.result(), swapped_job.result()
    tables.update(swapped)
    out = screening_dir(cfg)
    tables.update(pred_tables)
    write_parquet(errors, out / "prediction_errors.parquet")
    write_parquet(summaries, out / "model_summaries.parquet")
    notes = table_notes(metrics, spec["recapture"]["source"])
    for name, table in tables.items():
        if name in TITLES:
            _csv(table, out / f"{name}.csv")
            write_text(markdown(name, table, notes[name]), out / f"{name}.md")
    write_parquet(tables["cells"], out / "cells.parquet")
    _csv(tables["intervals"], out / "intervals.csv")
    _csv(tables["tiers"], out / "tiers.csv")
    write_json(metrics, out / "metrics.json")
    h = metrics["headline"].get("mild", {})
    print(f"screening {source}: tiers {metrics['tier_counts']}; mild AUROC U {h.get('auroc_U', float('nan')):.3f} "
          f"S {h.get('auroc_S', float('nan')):.3f}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run_stage(main)
