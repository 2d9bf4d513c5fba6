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

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import functools
import json

from pipeline.benchmark.build import build_benchmark, build_space
from pipeline.benchmark.ground_truth import evaluate_shard, table_fingerprint, write_final
from pipeline.runtime.io import write_parquet
from pipeline.perturb.materialize import open_store
from pipeline.benchmark.plugin_code import check_plugins
from pipeline.stages.runner import benchmark_spec, run_stage
from pipeline.stages.layout import asset_digest, data_dir, final_paths, perturb_root, shard_store, timings_path


def main(cfg) -> None:
    spec = benchmark_spec(cfg)
    check_plugins(spec)
    shard, num_shards = int(cfg.get("shard", 0)), int(cfg.get("num_shards", 1))
    factory = functools.partial(build_benchmark, spec, str(data_dir(cfg)), per_input=True)
    store = spec["store"]
    source = functools.partial(open_store, str(perturb_root(cfg)), store["max_order"]) if store["enabled"] else None
    raw, timings, stats = evaluate_shard(factory, build_space(spec), shard_store(cfg, shard, num_shards),
                                         table_fingerprint(spec, asset_digest(data_dir(cfg))), shard=shard, num_shards=num_shards,
                                         workers=int(cfg.workers), source=source)
    print(json.dumps(stats))
    if num_shards == 1:
        write_parquet(timings, timings_path(cfg, "groundtruth"))
        bench = build_benchmark(spec, data_dir(cfg))
        summary = write_final(raw, bench, spec, **final_paths(cfg), source=source(bench) if source is not None else None)
        print(json.dumps(summary["pareto"]))


if __name__ == "__main__":
    run_stage(main)
