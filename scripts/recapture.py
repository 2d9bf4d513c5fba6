"""Stage `recapture`: the model zoo's prediction records under real recapture conditions (paired
evaluations §3.3, §5), with the Syn-B records and probe probabilities of the same images.

`paired.recapture.source: embedded` (the default) trains the zoo exactly as `records` does (same pool,
split seed, test images and dev/eval split; the models are deterministic, so both tables share one clean
side) and photographs every test image under each simulated recapture condition
(`pipeline.perturb.recapture`: 2 lightings x 27 camera settings). `es` / `diverse` read ImageNet-ES /
ES-Diverse from `paired.recapture.root` instead: the references are the clean pool, each
`<lighting>-param_<k>` folder a real condition, and the zoo trains on `paired.recapture.train_root`
(`pipeline.paired.records.sources`). Writes beside the Syn-B records `outputs/records/<source>.parquet`:

* `<source>-recapture.parquet`: one row per (model, condition, image), the record schema, condition =
  the recapture condition ("l1-param_7");
* `<source>-recapture.synb.parquet`: the Syn-B records of the same images and models (for the embedded
  source a copy of the records stage's table, checked equal by `screening`; for ES the only one);
* `<source>-recapture.probes.parquet`: per model the clean, TTA18 and Syn-B class probabilities of every
  image (`pipeline.paired.records.probes.probe_table`), for TTA18 and the A3Rank adaptation (§5.3);
* `<source>-recapture.json`: per condition its mean development accuracy across models and tier (mild
  >= 40%, severe 20% to < 40%, extreme < 20%), the tier counts, and each model's accuracies.

    python scripts/recapture.py                                    # the 54 conditions, ~3.5 min
    python scripts/recapture.py paired=tiny paired.recapture.params=[1,14,27]
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import time

from tqdm import tqdm

from pipeline.runtime.io import write_json, write_parquet
from pipeline.models.zoo import check_zoo
from pipeline.paired.records import (
    condition_summary,
    probe_stacks,
    probe_table,
    recapture_source,
    synthetic_images,
    synthetic_records,
    write_records,
    zoo_records,
)
from pipeline.perturb.tta import TTA18
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.layout import recapture_path, sibling


def main(cfg) -> None:
    spec = plain(cfg.paired)
    rec, rc = spec["records"], spec["recapture"]
    if rc is None:
        raise ValueError("paired.recapture: null — the recapture stage needs its settings (source, seed, lightings, params)")
    check_zoo(rec["models"])
    start = time.perf_counter()
    progress = lambda it: tqdm(it, desc="recapture", disable=not spec["progress"])  # noqa: E731
    # the embedded source's conditions are recaptured on worker processes while this one makes the probes and trains
    # the zoo, whose models then predict each condition as it comes
    train, images, shots, meta, n_classes = recapture_source(spec, progress, int(cfg.workers))
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
    write_json({"source": rc["source"], "n_records": len(records), "n_models": len(rec["models"]), "n_conditions": len(meta),
                "n_images": len(images.labels), "n_dev": int((images.split == "dev").sum()), **summary,
                "models": {m: {c: float(a) for c, a in g.droplevel(0).items()} for m, g in accuracy.groupby(level=0)}},
               sibling(out, ".json"))
    print(f"wrote {len(records)} records ({len(rec['models'])} models x {len(meta)} conditions x {len(images.labels)} images); "
          f"tiers {summary['tier_counts']}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    run_stage(main)
