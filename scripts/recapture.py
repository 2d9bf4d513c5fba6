"""Stage `recapture`: the model zoo's prediction records under real recapture conditions (paired
evaluations §3.3, §5), with the Syn-B records and probe probabilities of the same images.

`paired.recapture.source: embedded` (the default) trains the zoo exactly as `records` does (same pool,
split seed, test images and dev/eval split; the models are deterministic, so both tables share one clean
side) and photographs every test image under each simulated recapture condition
(`pipeline.perturb.recapture`: 2 lightings x 27 camera settings). `es` / `diverse` read ImageNet-ES /
ES-Diverse from `paired.recapture.root` instead: the references are the clean pool, each
`<lighting>-param_<k>` folder a real condition, and the zoo trains on `paired.recapture.train_root`
(`pipeline.paired.es_source`). Writes beside the Syn-B records `outputs/records/<source>.parquet`:

* `<source>-recapture.parquet`: one row per (model, condition, image), the record schema, condition =
  the recapture condition ("l1-param_7");
* `<source>-recapture.synb.parquet`: the Syn-B records of the same images and models (for the embedded
  source a copy of the records stage's table, checked equal by `screening`; for ES the only one);
* `<source>-recapture.probes.parquet`: per model the clean, TTA18 and Syn-B class probabilities of every
  image (`pipeline.paired.recapture_records.probe_table`), for TTA18 and the A3Rank adaptation (§5.3);
* `<source>-recapture.json`: per condition its mean development accuracy across models and tier (mild
  >= 40%, severe 20% to < 40%, extreme < 20%), the tier counts, and each model's accuracies.

    python scripts/recapture.py                                    # the 54 conditions, ~3.5 min
    python scripts/recapture.py paired=tiny paired.recapture.params=[1,14,27]
"""
from __future__ import annotations

import time

import numpy as np
from _entry import plain, run_stage
from paths import recapture_path, sibling
from tqdm import tqdm

from pipeline.io import write_json, write_parquet
from pipeline.models.zoo import check_zoo
from pipeline.data.imagenet_es import load_wnids
from pipeline.paired.es_source import es_pool, load_image_folder
from pipeline.paired.pools import POOLS, PoolImages, pool_test_set
from pipeline.paired.recapture_records import (condition_summary, probe_stacks, probe_table, recaptured_images, synthetic_images,
                                               synthetic_records, zoo_records)
from pipeline.paired.records import write_records
from pipeline.paired.screening_probes import TTA18
from pipeline.perturb.recapture import N_PARAMS, make_condition


def _embedded(spec: dict) -> tuple[tuple[np.ndarray, np.ndarray], PoolImages, dict[str, np.ndarray], dict, int]:
    """The records stage's pool photographed under the simulated recapture conditions."""
    rec, rc = spec["records"], spec["recapture"]
    pool = POOLS.get(rec["pool"])
    if pool.modality != "vision":
        raise ValueError(f"paired.records.pool: {rec['pool']!r} holds {pool.modality}; a recapture photographs images "
                         f"(an image pool: {', '.join(n for n in POOLS if POOLS.get(n).modality == 'vision')})")
    (train_x, train_y), images = pool_test_set(rec)
    test_x = images.images
    params = rc["params"] if rc["params"] is not None else range(1, N_PARAMS + 1)
    conditions = [make_condition(lighting, p) for lighting in rc["lightings"] for p in params]
    shots = recaptured_images(test_x, conditions, rc["seed"], lambda it: tqdm(it, desc="recapture", disable=not spec["progress"]))
    meta = {c.name: {"lighting": c.lighting, "param": c.param, "setting": c.label} for c in conditions}
    return (train_x, train_y), images, shots, meta, int(train_y.max()) + 1


def _from_disk(spec: dict) -> tuple[tuple[np.ndarray, np.ndarray], PoolImages, dict[str, np.ndarray], dict, int]:
    """ImageNet-ES / ES-Diverse recaptures of their references; the zoo trains on `train_root`."""
    rec, rc = spec["records"], spec["recapture"]
    size = rec["image_size"]
    images, shots, meta = es_pool(rc["root"], rc["wnids"], rc["source"], rc["lightings"], rc["params"], size,
                                  rec["dev_fraction"], rec["seed"])
    return load_image_folder(rc["train_root"], rc["wnids"], size), images, shots, meta, len(load_wnids(rc["wnids"]))


def main(cfg) -> None:
    spec = plain(cfg.paired)
    rec, rc = spec["records"], spec["recapture"]
    if rc is None:
        raise ValueError("paired.recapture: null — the recapture stage needs its settings (source, seed, lightings, params)")
    check_zoo(rec["models"])
    start = time.perf_counter()
    train, images, shots, meta, n_classes = (_embedded if rc["source"] == "embedded" else _from_disk)(spec)
    load_s = time.perf_counter() - start
    synthetic = synthetic_images(images.images, rec["corruptions"], rec["severities"], rec["seed"])
    bar = lambda it: tqdm(it, desc="models", disable=not spec["progress"])  # noqa: E731
    records, arrays = zoo_records(rec["models"], train, images, shots, probe_stacks(images.images, synthetic), bar)
    out = recapture_path(cfg)
    write_records(records, out, n_classes=n_classes)
    write_records(synthetic_records(rec["models"], images, arrays, list(synthetic)), sibling(out, ".synb.parquet"), n_classes)
    names = {"clean": ["clean"], "tta": list(TTA18), "synb": list(synthetic)}
    write_parquet(probe_table(arrays, images.image_ids, names), sibling(out, ".probes.parquet"))
    accuracy = (records.assign(correct=records["pert_pred"] == records["y"])
                .groupby(["model", "condition"])["correct"].mean())
    summary = condition_summary(records)
    for name, row in summary["conditions"].items():
        row.update(meta[name])
    write_json({"source": rc["source"], "n_records": len(records), "n_models": len(rec["models"]), "n_conditions": len(shots),
                "n_images": len(images.labels), "n_dev": int((images.split == "dev").sum()), **summary,
                "models": {m: {c: float(a) for c, a in g.droplevel(0).items()} for m, g in accuracy.groupby(level=0)}},
               sibling(out, ".json"))
    print(f"wrote {len(records)} records ({len(rec['models'])} models x {len(shots)} conditions x {len(images.labels)} images); "
          f"tiers {summary['tier_counts']}; {load_s:.0f} s images, {time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    run_stage(main)
