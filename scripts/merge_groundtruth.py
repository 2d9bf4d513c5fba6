"""Merge the shard tables of a sharded ground-truth run into the final table (as the unsharded stage)."""
from __future__ import annotations

import pandas as pd
from _entry import plain, run_stage
from groundtruth import write_final
from groundtruth_paths import shard_path

from pipeline.builders import build_space
from pipeline.groundtruth import merge_shards


def main(cfg) -> None:
    n = int(cfg.num_shards)
    paths = [shard_path(cfg, i, n) for i in range(n)]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ValueError(f"shard tables missing: {', '.join(missing)}; run scripts/groundtruth.py shard=i num_shards={n} for each")
    raw = merge_shards(build_space(plain(cfg.benchmark)), [pd.read_parquet(p) for p in paths])
    write_final(cfg, raw)


if __name__ == "__main__":
    run_stage(main)
