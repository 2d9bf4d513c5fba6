"""Sharded ground truth through Hydra's submitit launcher, as a user runs it:

    python scripts/groundtruth.py -m hydra/launcher=submitit_local benchmark=tiny shard=0,1,2 num_shards=3 workers=1
    python scripts/merge_groundtruth.py benchmark=tiny num_shards=3

`submitit_local` is real submitit job submission (the job is pickled and run by `python -m
submitit.local._local` in a process of its own), the path a SLURM array takes, minus sbatch. The merged
table is byte-identical to the unsharded one; a shard killed mid-run and resubmitted resumes and gives the
same table; the merge refuses a shard made from another config with one line naming it, exit status 2
(the library-level check, with a made-up code fingerprint: tests/benchmark/test_ground_truth.py::
test_merge_refuses_a_shard_made_from_other_code).

The fast tier submits one shard through submitit (the killed one, resubmitted) and merges the three; the slow
tier (`pytest -m slow`) adds all three shards as one submitit array merged by the merge script as its own
process, and the live batch search through submitit jobs, killed and resumed. Their paths in the fast tier: one
submitit job per chunk of a live round (tests/benchmark/test_live_evaluation.py::test_submitit_jobs_give_the_direct_values)
and a live search stopped mid-run and resumed (tests/search/test_search_stages.py::
test_live_mode_resumes_an_interrupted_run_with_the_uninterrupted_trace)."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
STORE = "data/cache/store/groundtruth/tiny-shard-{}-of-3.sqlite"


def overrides(folder: Path, *extra: str) -> list[str]:
    return ["benchmark=tiny", "model.epochs=1", "benchmark.features.epochs=1", "workers=1", f"paths.data={folder}/data",
            f"paths.outputs={folder}/outputs", *extra]


def config(folder: Path, *extra: str):
    """The validated config a stage script gets from this command line (`_entry.compose_job`)."""
    from pipeline.stages.runner import compose_job

    return compose_job(overrides(folder, *extra))


def script(name: str, folder: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """A stage script as its own process, from a shell without scripts/ on PYTHONPATH (a new user's)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, f"scripts/{name}.py", *extra, *overrides(folder)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def submit(folder: Path, shards: str) -> subprocess.CompletedProcess:
    """The shards through `hydra/launcher=submitit_local`; the sweep folder (submitit's pickles and logs)
    goes under `folder`."""
    done = script("groundtruth", folder, "-m", "hydra/launcher=submitit_local", f"shard={shards}", "num_shards=3",
                  f"hydra.sweep.dir={folder}/sweep", "hydra.launcher.timeout_min=5")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def job_stats(folder: Path) -> list[dict]:
    """The statistics line every submitit job of the sweep printed (its stdout log)."""
    logs = sorted((folder / "sweep" / ".submitit").glob("*/*_log.out"))
    return [json.loads(line) for log in logs for line in log.read_text().splitlines() if line.startswith('{"configurations"')]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Prepared tiny assets and the unsharded ground truth (`outputs/groundtruth/tiny.parquet`)."""
    from scripts import groundtruth, prepare

    folder = tmp_path_factory.mktemp("submitit")
    prepare.main(config(folder))
    groundtruth.main(config(folder))
    return folder


def copy_inputs(base: Path, folder: Path) -> Path:
    """The prepared assets of `base`, without its ground truth."""
    shutil.copytree(base / "data" / "tiny", folder / "data" / "tiny")
    return folder


@pytest.mark.slow  # the fast tier: one shard through submitit, then the merge (the killed-shard test below)
def test_shards_through_submitit_merge_to_the_unsharded_table(base, tmp_path):
    folder = copy_inputs(base, tmp_path)
    submit(folder, "0,1,2")
    stats = job_stats(folder)
    assert len(stats) == 3 and sum(s["evaluated"] for s in stats) == 9, stats
    assert all((folder / STORE.format(i)).is_file() for i in range(3))
    done = script("merge_groundtruth", folder, "num_shards=3")
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("tiny.parquet", "tiny.summary.json"):
        assert (folder / "outputs/groundtruth" / name).read_bytes() == (base / "outputs/groundtruth" / name).read_bytes(), name


# The shard's own script, paced (3 s after each committed configuration) so that a kill lands mid-run;
# the values do not change.
PACED = """
import runpy, sys, time
from pipeline.benchmark.problem import Benchmark
evaluate_many = Benchmark.evaluate_many
def paced(self, *args, **kwargs):
    for item in evaluate_many(self, *args, **kwargs):
        yield item
        time.sleep(3)
Benchmark.evaluate_many = paced
sys.argv = sys.argv[1:]
runpy.run_module("scripts.groundtruth", run_name="__main__", alter_sys=True)
"""


def finished(path: Path) -> int:
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM units").fetchone()[0]
    except sqlite3.OperationalError:  # created, tables not yet
        return 0


def test_a_shard_killed_mid_run_and_resubmitted_gives_the_same_table(base, tmp_path):
    """Shards 0 and 2 run here; shard 1, killed after its first configuration, is resubmitted through submitit and
    resumes; the merge of the three is the unsharded table and summary."""
    from scripts import groundtruth, merge_groundtruth

    folder = copy_inputs(base, tmp_path)
    for shard in (0, 2):
        groundtruth.main(config(folder, f"shard={shard}", "num_shards=3"))
    store = folder / STORE.format(1)
    with open(folder / "killed.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-c", PACED, "scripts/groundtruth.py", *overrides(folder, "shard=1", "num_shards=3")],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline and finished(store) < 1 and proc.poll() is None:
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    killed_at = finished(store)
    assert 1 <= killed_at < 3, (folder / "killed.log").read_text()[-3000:]
    submit(folder, "1")
    (stats,) = job_stats(folder)
    assert stats["resumed"] == killed_at and stats["evaluated"] == 3 - killed_at, stats
    merge_groundtruth.main(config(folder, "num_shards=3"))
    for name in ("tiny.parquet", "tiny.summary.json"):
        assert (folder / "outputs/groundtruth" / name).read_bytes() == (base / "outputs/groundtruth" / name).read_bytes(), name


def test_the_merge_refuses_a_shard_made_from_another_config(base, tmp_path, monkeypatch, capsys):
    from scripts import groundtruth, merge_groundtruth
    from pipeline.stages.runner import run_stage

    folder = copy_inputs(base, tmp_path)
    for shard in range(3):
        groundtruth.main(config(folder, f"shard={shard}", "num_shards=3"))
    groundtruth.main(config(folder, "shard=1", "num_shards=3", "benchmark.kid.subsets=5"))  # shard 1 again, another config
    monkeypatch.setattr(sys, "argv", ["scripts/merge_groundtruth.py", *overrides(folder, "num_shards=3")])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        run_stage(merge_groundtruth.main)
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: shard 1 of 3 ({folder / STORE.format(1)}) was made from other code, config or library"), lines[0]
    assert not (folder / "outputs" / "groundtruth").exists(), "nothing written"


# Live batch search (issue 20): GP-PND's rounds of q = 4 configurations, each round one submitit job per
# chunk of 2 (workers=2), every evaluation kept in the live resume store.
LIVE = ("search.mode=live", "search.metrics=[ssim]", "search.live.batch_size=4", "search.live.executor=submitit_local",
        "search.live.submitit.timeout_min=5")
LIVE_STORE = "data/cache/store/search_live/tiny.sqlite"


def live_search(folder: Path, *extra: str) -> list[dict]:
    """The live search stage as its own process; the JSON line it prints per run."""
    done = script("search", folder, *LIVE, *extra, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"metric"')]


@pytest.mark.slow  # the fast tier: test_live_evaluation.py (submitit jobs), test_search_stages.py (an interrupted live run)
def test_live_batch_search_through_submitit_resumes_after_a_kill_with_the_table_values(base, tmp_path):
    folder = copy_inputs(base, tmp_path)
    store = folder / LIVE_STORE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open(folder / "killed.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "scripts/search.py", *LIVE, *overrides(folder), "workers=2"], cwd=ROOT,
                                env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 300
        while time.time() < deadline and finished(store) < 4 and proc.poll() is None:
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    killed_at = finished(store)
    assert killed_at == 4, (folder / "killed.log").read_text()[-3000:]  # the first round, not the second
    (run,) = live_search(folder, "workers=2")
    assert run["method"] == "pnd" and run["computed_now"] == run["evaluated"] - killed_at, run
    trace = pd.read_parquet(folder / "outputs/search_live/tiny/ssim/pnd/seed=0.trace.parquet")
    new = trace[trace["is_new"]]
    sizes = new.groupby("round").size()
    assert sizes.index.tolist() == list(range(1, len(sizes) + 1)) and sizes.max() <= 4
    assert sizes.tolist()[:2] == [4, 4]  # GP-PND's initial design of 8 configurations (of 9) in two rounds of q
    table = pd.read_parquet(base / "outputs/groundtruth/tiny.parquet").set_index(["brightness", "pixelate"])
    expected = table.loc[list(map(tuple, trace[["brightness", "pixelate"]].to_numpy())), ["delta", "rho_ssim"]].to_numpy()
    np.testing.assert_allclose(trace[["delta", "rho"]].to_numpy(), expected, rtol=0, atol=1e-12)  # the jobs' values are the table's
    store.unlink()
    live_search(folder, "search.live.executor=serial")  # from scratch, in this process
    again = pd.read_parquet(folder / "outputs/search_live/tiny/ssim/pnd/seed=0.trace.parquet")
    timings = ["seconds_perturb", "seconds_infer", "seconds_fidelity"]  # measured anew by each run: not compared
    pd.testing.assert_frame_equal(again.drop(columns=timings), trace.drop(columns=timings))  # the resumed run is the uninterrupted one
