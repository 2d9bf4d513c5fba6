"""Stage `groundtruth`: evaluate every θ in Θ (or one shard of Θ) and, unsharded, write the final table
with normalised objectives, P* flags, the P* summary and the gallery images of P* configurations.

    python scripts/groundtruth.py                               # params.yaml, whole space
    python scripts/groundtruth.py shard=0 num_shards=4          # one shard; then scripts/merge_groundtruth.py

Finished configurations live in a resume store under data/cache/store/groundtruth/ (keyed by the
benchmark config, the prepared assets, the code and the library versions); the perturbed sets come from
the perturbation store under data/cache/perturb/ (stage `perturb`, filled here where it lacks them) unless
`benchmark.store.enabled=false`; wall-clock timings go to
`outputs/timings/groundtruth/<benchmark>.parquet`, apart from the results.
"""
from __future__ import annotations

import functools
import json

import numpy as np
from _entry import benchmark_spec, run_stage
from paths import asset_digest, data_dir, perturb_root, shard_store, sibling, table_path, timings_path

from pipeline.builders import build_benchmark, build_space
from pipeline.fingerprint import stage_fingerprint
from pipeline.groundtruth import evaluate_shard, finalize, pareto_summary
from pipeline.io import atomic_path, write_json, write_parquet
from pipeline.perturb.compose import compose
from pipeline.perturb.materialize import open_store

CODE = ("pipeline.builders", "pipeline.groundtruth")  # the modules that compute a configuration's values


def fingerprint(cfg) -> str:
    """What every value of the table depends on: benchmark config, prepared assets, code, libraries (not
    the perturbation store's settings: the store returns T_θ bit for bit as prefix reuse computes it)."""
    spec = {k: v for k, v in benchmark_spec(cfg).items() if k != "store"}
    return stage_fingerprint({"benchmark": spec, "assets": asset_digest(data_dir(cfg))}, CODE)


def gallery_array(items: list, example) -> np.ndarray:
    """The gallery's perturbed examples as one array: an image stack, or a unicode array of texts (both
    load without pickle)."""
    if isinstance(example, np.ndarray):
        return np.stack(items) if items else np.zeros((0,) + example.shape[1:], example.dtype)
    return np.array([str(x) for x in items], dtype=str)


def write_final(cfg, raw) -> None:
    """Normalise, flag P*, and write the table, its summary and the P* gallery of one example image."""
    spec = benchmark_spec(cfg)
    metrics = list(spec["fidelity"])
    table = finalize(raw, metrics, spec.get("task_metric", "accuracy"))
    bench = build_benchmark(spec, data_dir(cfg))
    summary = {"benchmark": spec["name"], "space_size": bench.space.size, "clean_" + spec.get("task_metric", "accuracy"): bench.clean_score,
               "pareto": pareto_summary(table, metrics, bench.space.n_dims)}
    write_parquet(table, table_path(cfg))
    write_json(summary, sibling(table_path(cfg), ".summary.json"))
    names = list(bench.space.names)
    front = table[table[[f"pareto_{m}" for m in metrics]].any(axis=1)]
    index = int(spec.get("gallery_index", 0))
    example = bench.clean[index : index + 1]
    thetas = front[names].to_numpy()
    images = gallery_array([compose(bench.perturbations, example, tuple(t), bench.seed)[0] for t in thetas], example)
    with atomic_path(sibling(table_path(cfg), ".gallery.npz")) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, thetas=thetas, images=images, clean=example[0], label=bench.labels[index])
    print(json.dumps(summary["pareto"]))


def main(cfg) -> None:
    spec = benchmark_spec(cfg)
    space = build_space(spec)
    shard, num_shards = int(cfg.get("shard", 0)), int(cfg.get("num_shards", 1))
    factory = functools.partial(build_benchmark, spec, str(data_dir(cfg)))
    store = spec["store"]
    source = functools.partial(open_store, str(perturb_root(cfg)), store["max_order"]) if store["enabled"] else None
    raw, timings, stats = evaluate_shard(factory, space, shard_store(cfg, shard, num_shards), fingerprint(cfg),
                                         shard=shard, num_shards=num_shards, workers=int(cfg.workers), source=source)
    print(json.dumps(stats))
    if num_shards == 1:
        write_parquet(timings, timings_path(cfg, "groundtruth"))
        write_final(cfg, raw)


if __name__ == "__main__":
    run_stage(main)
