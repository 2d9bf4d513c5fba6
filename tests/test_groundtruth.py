import functools
import multiprocessing as mp
import time

import numpy as np
import pandas as pd
import pytest

from pipeline.groundtruth import (evaluate_shard, finalize, merge_shards, minmax, pareto_summary, read_logs,
                                  tasks_for_shard)
from pipeline.space import Space
from synthetic import make_benchmark

VALUES = ["psi", "delta", "rho_negmse", "rho_negmax"]


def _run(log_dir, **kw):
    factory = functools.partial(make_benchmark, 30, 4)
    return evaluate_shard(factory, Space(("noise", "shift"), 4), log_dir, progress=False, **kw)


def test_values_match_direct_evaluation(tmp_path):
    raw, stats = _run(tmp_path)
    bench = make_benchmark(30, 4)
    assert stats["evaluated"] == 16 and stats["resumed"] == 0
    for _, row in raw.iterrows():
        direct = bench.evaluate((row["noise"], row["shift"]))
        for key in VALUES:
            assert row[key] == direct[key]
    assert raw["order"].tolist() == [int(a > 0) + int(b > 0) for a, b in zip(raw["noise"], raw["shift"])]


def test_one_and_two_workers_give_identical_tables(tmp_path):
    one, _ = _run(tmp_path / "one", workers=1)
    two, _ = _run(tmp_path / "two", workers=2)
    pd.testing.assert_frame_equal(one[["noise", "shift", "order", *VALUES]], two[["noise", "shift", "order", *VALUES]])


def test_merged_shards_equal_unsharded(tmp_path):
    full, _ = _run(tmp_path / "full")
    space = Space(("noise", "shift"), 4)
    shards = [_run(tmp_path / f"s{i}", shard=i, num_shards=3)[0] for i in range(3)]
    assert sum(len(s) for s in shards) == 16 and all(len(s) > 0 for s in shards)
    merged = merge_shards(space, shards[::-1])
    cols = ["noise", "shift", "order", *VALUES]
    pd.testing.assert_frame_equal(merged[cols], full[cols])
    with pytest.raises(ValueError, match="missing"):
        merge_shards(space, shards[:2])
    with pytest.raises(ValueError, match="more than one shard"):
        merge_shards(space, [shards[0], *shards])


def test_shard_arguments_are_checked():
    with pytest.raises(ValueError, match="shard=3, num_shards=3"):
        tasks_for_shard(Space(("a", "b"), 3), 3, 3)


def _slow_run(log_dir):
    factory = functools.partial(make_benchmark, 30, 4, 0.004)  # ~0.1 s per configuration
    evaluate_shard(factory, Space(("noise", "shift"), 4), log_dir, workers=1, progress=False)


def test_killed_run_resumes_without_recomputing(tmp_path):
    log_dir = tmp_path / "logs"
    proc = mp.get_context("spawn").Process(target=_slow_run, args=(log_dir,))
    proc.start()
    deadline = time.time() + 60
    while time.time() < deadline and len(read_logs(log_dir)) < 4:
        time.sleep(0.05)
    proc.kill()
    proc.join()
    finished = read_logs(log_dir)
    assert 4 <= len(finished) < 16, "the run should have been killed part-way"
    # a half-written line (a kill during a write) is ignored
    with open(next(log_dir.glob("task-*.jsonl")), "a") as fh:
        fh.write('{"theta": [3, 3], "valu')
    raw, stats = _run(log_dir)
    assert stats["resumed"] == len(finished) and stats["evaluated"] == 16 - len(finished)
    fresh, _ = _run(tmp_path / "fresh")
    pd.testing.assert_frame_equal(raw[["noise", "shift", *VALUES]], fresh[["noise", "shift", *VALUES]])


def test_finalize_normalises_and_flags_front(tmp_path):
    raw, _ = _run(tmp_path)
    table = finalize(raw, ["negmse", "negmax"])
    assert "accuracy" in table and "psi" not in table
    for col in ("delta_norm", "rho_negmse_norm", "rho_negmax_norm"):
        assert table[col].min() == 0.0 and table[col].max() == 1.0
    # brute-force P*: not dominated by any other configuration under (δ, ρ)
    pts = table[["delta_norm", "rho_negmse_norm"]].to_numpy()
    expected = [not any((pts[j] >= pts[i]).all() and (pts[j] > pts[i]).any() for j in range(len(pts))) for i in range(len(pts))]
    assert table["pareto_negmse"].tolist() == expected
    summary = pareto_summary(table, ["negmse"], 2)["negmse"]
    front = table[table["pareto_negmse"]]
    assert summary["size"] == len(front) == sum(summary[f"order_{k}"] for k in range(3))
    np.testing.assert_array_equal(minmax(np.array([2.0, 2.0])), [0.0, 0.0])
