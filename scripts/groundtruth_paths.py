"""Where the ground-truth stages read and write, from the config (shared by the three scripts)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from _entry import ROOT, plain


def data_dir(cfg) -> Path:
    return ROOT / cfg.paths.data / cfg.benchmark.name


def table_path(cfg) -> Path:
    return ROOT / cfg.paths.outputs / "groundtruth" / f"{cfg.benchmark.name}.parquet"


def shard_path(cfg, shard: int, num_shards: int) -> Path:
    return ROOT / cfg.paths.outputs / "groundtruth" / "shards" / cfg.benchmark.name / f"shard-{shard}-of-{num_shards}.parquet"


def log_dir(cfg) -> Path:
    """Resume logs, keyed by the benchmark spec and the content of its prepared assets, so a changed
    model or dataset never resumes from stale values. Kept outside DVC outputs (DVC deletes those)."""
    digest = hashlib.sha256(json.dumps(plain(cfg.benchmark), sort_keys=True).encode())
    for asset in sorted(data_dir(cfg).glob("*")):
        if asset.is_file():
            digest.update(asset.name.encode() + hashlib.sha256(asset.read_bytes()).digest())
    return ROOT / cfg.paths.data / "cache" / "groundtruth-logs" / cfg.benchmark.name / digest.hexdigest()[:16]
