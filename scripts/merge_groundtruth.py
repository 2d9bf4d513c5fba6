"""Merge the shards of a sharded ground-truth run into the final table (as the unsharded stage writes it).
Each shard's resume store must have been made under this merge's fingerprint (code, config, library
versions); a shard made from anything else is refused with a line naming it."""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import json

from pipeline.benchmark.build import build_benchmark, build_space
from pipeline.benchmark.ground_truth import merge_shards, read_shard, table_fingerprint, write_final
from pipeline.benchmark.plugin_code import check_plugins
from pipeline.stages.runner import benchmark_spec, run_stage
from pipeline.stages.layout import asset_digest, data_dir, final_paths, shard_store


def main(cfg) -> None:
    spec, n = benchmark_spec(cfg), int(cfg.num_shards)
    check_plugins(spec)
    space, key = build_space(spec), table_fingerprint(spec, asset_digest(data_dir(cfg)))
    raw = merge_shards(space, [read_shard(space, shard_store(cfg, i, n), key, i, n) for i in range(n)])
    summary = write_final(raw, build_benchmark(spec, data_dir(cfg)), spec, **final_paths(cfg))
    print(json.dumps(summary["pareto"]))


if __name__ == "__main__":
    run_stage(main)
