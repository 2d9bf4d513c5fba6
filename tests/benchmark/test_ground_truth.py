import functools
import multiprocessing as mp
import sqlite3
import time

import numpy as np
import pandas as pd
import pytest

from pipeline.benchmark.ground_truth import TIMING_COLUMNS, config_key, evaluate_shard, merge_shards, read_shard, tasks_for_shard
from pipeline.front.ground_truth_table import finalize, minmax, pareto_summary
from pipeline.front.space import Space
from pipeline.runtime.store import ResumeStore
from tests.synthetic import make_benchmark

VALUES = ["psi", "delta", "rho_negmse", "rho_negmax"]
SPACE = Space(("noise", "shift"), 4)


def _run(store_dir, fingerprint="fp", delay=0.0, **kw):
    factory = functools.partial(make_benchmark, 30, 4, delay)
    return evaluate_shard(factory, SPACE, store_dir / "store.sqlite", fingerprint, progress=False, **kw)


def test_values_match_direct_evaluation(tmp_path):
    raw, timings, stats = _run(tmp_path)
    bench = make_benchmark(30, 4)
    assert stats["evaluated"] == 16 and stats["resumed"] == 0
    for _, row in raw.iterrows():
        direct = bench.evaluate((row["noise"], row["shift"]))
        for key in VALUES:
            assert row[key] == direct[key]
    assert raw["order"].tolist() == [int(a > 0) + int(b > 0) for a, b in zip(raw["noise"], raw["shift"])]
    assert not [c for c in raw if "seconds" in c], "timings belong in the timings table"
    assert list(timings.columns) == ["noise", "shift", *TIMING_COLUMNS] and (timings[list(TIMING_COLUMNS)] >= 0).all().all()


def test_one_and_two_workers_give_identical_tables(tmp_path):
    one = _run(tmp_path / "one", workers=1)[0]
    two = _run(tmp_path / "two", workers=2)[0]
    pd.testing.assert_frame_equal(one, two)


def test_merged_shards_equal_unsharded(tmp_path):
    full = _run(tmp_path / "full")[0]
    for i in range(3):
        _run(tmp_path / f"s{i}", shard=i, num_shards=3)
    shards = [read_shard(SPACE, tmp_path / f"s{i}" / "store.sqlite", "fp", i, 3) for i in range(3)]
    assert sum(len(s) for s in shards) == 16 and all(len(s) > 0 for s in shards)
    pd.testing.assert_frame_equal(merge_shards(SPACE, shards[::-1]), full)
    with pytest.raises(ValueError, match="missing"):
        merge_shards(SPACE, shards[:2])
    with pytest.raises(ValueError, match="more than one shard"):
        merge_shards(SPACE, [shards[0], *shards])


def test_merge_refuses_a_shard_made_from_other_code(tmp_path):
    _run(tmp_path / "s1", fingerprint="old-code", shard=1, num_shards=2)
    with pytest.raises(ValueError, match=r"^shard 1 of 2 \(.*\) was made from other code"):
        read_shard(SPACE, tmp_path / "s1" / "store.sqlite", "new-code", 1, 2)
    with pytest.raises(ValueError, match="shard 0 of 2: no store"):
        read_shard(SPACE, tmp_path / "s0" / "store.sqlite", "new-code", 0, 2)


def test_shard_arguments_are_checked():
    with pytest.raises(ValueError, match="shard=3, num_shards=3"):
        tasks_for_shard(Space(("a", "b"), 3), 3, 3)


def _finished(store_dir, fingerprint="fp"):
    path = store_dir / "store.sqlite"
    if not path.exists():
        return 0
    with ResumeStore(path) as store:
        keys = store.keys()
    return sum(config_key(fingerprint, t) in keys for t in SPACE.grid().tolist())


def _slow_run(store_dir, queue=None):
    raw, _, stats = _run(store_dir, delay=0.004, workers=1)  # ~0.1 s per configuration
    if queue is not None:
        queue.put((stats["evaluated"], raw.to_dict("list")))


def test_killed_run_resumes_without_recomputing(tmp_path):
    proc = mp.get_context("spawn").Process(target=_slow_run, args=(tmp_path,))
    proc.start()
    deadline = time.time() + 60
    while time.time() < deadline and _finished(tmp_path) < 4:
        time.sleep(0.05)
    proc.kill()
    proc.join()
    finished = _finished(tmp_path)
    assert 4 <= finished < 16, "the run should have been killed part-way"
    raw, _, stats = _run(tmp_path)
    assert stats["resumed"] == finished and stats["evaluated"] == 16 - finished
    pd.testing.assert_frame_equal(raw, _run(tmp_path / "fresh")[0])


def test_another_fingerprint_recomputes_everything(tmp_path):
    _run(tmp_path)
    raw, _, stats = _run(tmp_path, fingerprint="changed-ssim-source")
    assert stats["resumed"] == 0 and stats["evaluated"] == 16
    assert _run(tmp_path)[2]["evaluated"] == 0, "the first fingerprint's rows are still there"


def test_corrupt_row_is_reported_and_recomputed(tmp_path, capfd):
    reference = _run(tmp_path)[0]
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        db.execute("UPDATE units SET value = ? WHERE key = ?", (b'{"psi": 0.5', config_key("fp", (2, 1))))
    raw, _, stats = _run(tmp_path)
    assert stats["evaluated"] == 1
    assert capfd.readouterr().err.count("fails its checksum") == 1
    pd.testing.assert_frame_equal(raw, reference)


def test_concurrent_runs_compute_each_configuration_once(tmp_path):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_slow_run, args=(tmp_path, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join()
    assert sum(n for n, _ in results) == 16, "together the two runs evaluate each configuration exactly once"
    assert all(n > 0 for n, _ in results), "both runs took part"
    assert results[0][1] == results[1][1]


def test_finalize_normalises_and_flags_front(tmp_path):
    raw = _run(tmp_path)[0]
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


def test_the_table_key_covers_the_code_a_spec_names_by_import_path(monkeypatch):
    """The model and data set are built from `_target_` and the task metric from the catalog, so no import
    statement reaches their modules: the key must read their sources itself (editing DigitsCNN recomputes)."""
    from perf._spec import benchmark_spec
    from pipeline.benchmark import ground_truth as groundtruth
    from pipeline.runtime import fingerprint
    from pipeline.benchmark.plugin_code import code_modules

    spec = benchmark_spec(["benchmark=digits"])
    roots = (*groundtruth.CODE, *code_modules(spec))
    files = {p.name for p in fingerprint.module_closure(roots)}
    assert {"under_test.py", "test_sets.py", "robust_pass.py", "registry.py"} <= files
    before = groundtruth.table_fingerprint(spec, "assets")
    real = fingerprint.source_fingerprint

    def edited(code_roots, *args):  # as if pipeline/models/under_test.py had been edited
        return real(code_roots, *args) + ("-edited" if "pipeline.models.under_test" in code_roots else "")

    monkeypatch.setattr(fingerprint, "source_fingerprint", edited)
    assert groundtruth.table_fingerprint(spec, "assets") != before
