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

import numpy as np
import pandas as pd
from _entry import plain, run_stage
from paths import records_path
from tqdm import tqdm

from pipeline.io import write_json
from pipeline.models.zoo import build_model, check_zoo
from pipeline.paired.pools import POOLS
from pipeline.paired.records import records_from_probabilities, split_dev_eval, write_records
from pipeline.perturb.compose import apply_step
from pipeline.perturb.registry import get_perturbation


def main(cfg) -> None:
    spec = plain(cfg.paired)
    rec = spec["records"]
    check_zoo(rec["models"])
    (train_x, train_y), (test_x, test_y) = POOLS.get(rec["pool"]).load(rec["seed"], rec["image_size"])
    if rec["test_limit"] is not None:
        test_x, test_y = test_x[: rec["test_limit"]], test_y[: rec["test_limit"]]
    image_ids = np.array([f"test{i:04d}" for i in range(len(test_y))])
    split = split_dev_eval(test_y, rec["dev_fraction"], rec["seed"])
    conditions = [(name, int(sev)) for name in rec["corruptions"] for sev in rec["severities"]]
    perturbed = {f"{name}-{sev}": apply_step(get_perturbation(name), test_x, (sev,), rec["seed"])
                 for name, sev in tqdm(conditions, desc="perturb", disable=not spec["progress"])}
    parts, metrics = [], {}
    for model_spec in tqdm(rec["models"], desc="models", disable=not spec["progress"]):
        model = build_model(model_spec).fit(train_x, train_y)
        clean = model.predict_proba(test_x)
        metrics[model_spec["name"]] = {"clean_accuracy": float((clean.argmax(1) == test_y).mean())}
        for condition, inputs in perturbed.items():
            pert = model.predict_proba(inputs)
            metrics[model_spec["name"]][f"{condition}_accuracy"] = float((pert.argmax(1) == test_y).mean())
            parts.append(records_from_probabilities(model_spec["name"], model_spec["family"], condition, image_ids,
                                                    test_y, split, clean, pert))
    records = pd.concat(parts, ignore_index=True)
    out = records_path(cfg).parent
    write_records(records, out / f"{spec['source']}.parquet", n_classes=int(train_y.max()) + 1)
    write_json({"pool": rec["pool"], "n_records": len(records), "n_models": len(rec["models"]), "n_conditions": len(conditions),
                "n_images": len(test_y), "n_dev": int((split == "dev").sum()), "models": metrics},
               out / f"{spec['source']}.json")
    print(f"wrote {len(records)} records ({len(rec['models'])} models x {len(conditions)} conditions x {len(test_y)} inputs)")


if __name__ == "__main__":
    run_stage(main)
