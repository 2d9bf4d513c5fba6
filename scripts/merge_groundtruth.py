"""Merge the shards of a sharded ground-truth run into the final table (as the unsharded stage writes it).
Each shard's resume store must have been made under this merge's fingerprint (code, config, library
versions); a shard made from anything else is refused with a line naming it."""
from __future__ import annotations

from _entry import benchmark_spec, run_stage
from groundtruth import fingerprint, write_final
from paths import shard_store

from pipeline.builders import build_space
from pipeline.groundtruth import merge_shards, read_shard


def main(cfg) -> None:
    n = int(cfg.num_shards)
    space, key = build_space(benchmark_spec(cfg)), fingerprint(cfg)
    write_final(cfg, merge_shards(space, [read_shard(space, shard_store(cfg, i, n), key, i, n) for i in range(n)]))


if __name__ == "__main__":
    run_stage(main)
