"""Stage `records`: paired prediction records of a model zoo on a record pool (`paired.records.pool`).

Trains every zoo model on the pool's train split, predicts its clean test inputs and each synthetic
condition (a perturbation family × level, per-input seeds from (seed, input, level)), and writes one
record table with a within-class dev/eval split of the test inputs. The pool is the digits images
(ImageNet-C corruptions, `paired=default`) or the BBC News leads of the text benchmark (its four text
perturbations at k edits, `paired=bbc_news`).

    python scripts/records.py                      # outputs/records/<paired.source>.parquet (+ .json)
    python scripts/records.py paired=bbc_news      # the text zoo (MiniLM and TF-IDF heads)
    python scripts/records.py paired=tiny          # a few seconds
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

from tqdm import tqdm

from pipeline.runtime.io import write_json
from pipeline.models.text_encoder import default_workers
from pipeline.runtime.numerics import n_workers
from pipeline.models.zoo import check_zoo
from pipeline.paired.records.pools import pool_test_set
from pipeline.paired.records.table import write_records
from pipeline.paired.records.zoo import synthetic_images, zoo_records
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.layout import records_path


def main(cfg) -> None:
    spec = plain(cfg.paired)
    rec = spec["records"]
    check_zoo(rec["models"])
    (train_x, train_y), test = pool_test_set(rec)
    perturbed = synthetic_images(test.images, rec["corruptions"], rec["severities"], rec["seed"])
    with default_workers(n_workers(cfg.workers)):  # a text zoo's encoder spreads its batches over the cores
        records, _ = zoo_records(rec["models"], (train_x, train_y), test, perturbed,
                                 progress=lambda it: tqdm(it, desc="models", disable=not spec["progress"]))
    correct = records.assign(clean=records["clean_pred"] == records["y"], pert=records["pert_pred"] == records["y"])
    metrics = {}
    for model, rows in correct.groupby("model", sort=False):
        by_condition = rows.groupby("condition", sort=False)
        metrics[model] = {"clean_accuracy": float(by_condition["clean"].mean().iloc[0]),
                          **{f"{c}_accuracy": float(a) for c, a in by_condition["pert"].mean().items()}}
    out = records_path(cfg).parent
    write_records(records, out / f"{spec['source']}.parquet", n_classes=int(train_y.max()) + 1)
    write_json({"pool": rec["pool"], "n_records": len(records), "n_models": len(rec["models"]), "n_conditions": len(perturbed),
                "n_images": len(test.labels), "n_dev": int((test.split == "dev").sum()), "models": metrics},
               out / f"{spec['source']}.json")
    print(f"wrote {len(records)} records ({len(rec['models'])} models x {len(perturbed)} conditions x {len(test.labels)} inputs)")


if __name__ == "__main__":
    run_stage(main)
