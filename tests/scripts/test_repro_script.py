"""`make repro`'s runner (`scripts/repro.py`) on a DVC project of four shell stages: two stages that can only finish
together (each waits for the other to have started) prove they run side by side; the lock it leaves is the one a
plain `dvc repro` writes; a failing stage stops what reads it, exits with DVC's status and shows the stage's log."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scripts.repro import dvc_jobs, main, run, stale_stages

# DVC's graph, built in this process, goes through pygtrie's deprecated `_NoneStep.value` (DVC's, not ours)
pytestmark = pytest.mark.filterwarnings("ignore:_NoneStep.value:DeprecationWarning")

# each side marks that it started, then waits (up to 60 s) for the other side's mark: run one after the other, the
# first one fails
MEET = "touch {me}.started && for i in $(seq 600); do test -e {other}.started && break; sleep 0.1; done && " \
       "test -e {other}.started && echo {me} > {me}.txt"
STAGES = {
    "left": {"cmd": MEET.format(me="left", other="right"), "outs": ["left.txt"]},
    "right": {"cmd": MEET.format(me="right", other="left"), "outs": ["right.txt"]},
    "join": {"cmd": "cat left.txt right.txt > join.txt", "deps": ["left.txt", "right.txt"], "outs": ["join.txt"]},
}


def project(path: Path, stages: dict) -> Path:
    path.mkdir()
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q", "--no-scm"], cwd=path, check=True)
    (path / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}))
    return path


def lock(path: Path) -> dict:
    return yaml.safe_load((path / "dvc.lock").read_text())


def test_independent_stages_run_side_by_side_and_leave_dvc_repro_s_lock(tmp_path: Path) -> None:
    ours = project(tmp_path / "ours", STAGES)
    serial = project(tmp_path / "serial", STAGES | {side: {"cmd": f"echo {side} > {side}.txt", "outs": [f"{side}.txt"]}
                                                     for side in ("left", "right")})
    jobs = dvc_jobs(ours, pool_cost=2)
    assert {j.name: j.after for j in jobs} == {"left": frozenset(), "right": frozenset(), "join": frozenset({"left", "right"})}
    assert run(jobs, slots=2, dvc_args=[], root=ours) == 0
    assert (ours / "join.txt").read_text() == "left\nright\n"
    assert "Data and pipelines are up to date" in subprocess.run([sys.executable, "-m", "dvc", "status"], cwd=ours,
                                                                capture_output=True, text=True, check=True).stdout
    # the same outputs from a plain `dvc repro` of sides that do not wait (one after the other, they would fail)
    subprocess.run([sys.executable, "-m", "dvc", "repro", "-q"], cwd=serial, check=True)
    ours_lock, serial_lock = lock(ours)["stages"], lock(serial)["stages"]
    assert {k: v["outs"] for k, v in ours_lock.items()} == {k: v["outs"] for k, v in serial_lock.items()}
    assert ours_lock["join"] == serial_lock["join"]
    assert sorted(p.name for p in (ours / "outputs/logs/repro").iterdir()) == ["join.log", "left.log", "right.log"]
    rows = [line.split("\t") for line in (ours / "outputs/timings/repro.tsv").read_text().splitlines()]
    assert rows[0] == ["stage", "seconds", "min:s", "share"] and sorted(r[0] for r in rows[1:-1]) == ["join", "left", "right"]
    assert rows[-1][0] == "total" and float(rows[-1][1]) >= max(float(r[1]) for r in rows[1:-1])  # the run's wall time

    # a second run finds everything up to date and runs nothing
    assert stale_stages(ours) == set()
    (ours / "left.started").unlink()
    assert run(jobs, slots=2, dvc_args=[], root=ours, stale=set()) == 0
    assert not (ours / "left.started").exists()


def test_a_rerun_runs_the_stale_stages_and_the_readers_of_changed_outputs_only(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"a": {"cmd": "echo a > a.txt", "outs": ["a.txt"]},
                                    "b": {"cmd": "cp a.txt b.txt", "deps": ["a.txt"], "outs": ["b.txt"]}})
    jobs = dvc_jobs(root, pool_cost=2)
    assert run(jobs, slots=2, dvc_args=[], root=root) == 0
    logs = root / "outputs/logs/repro"

    def rerun(cmd: str) -> set[str]:
        """Change a's command; the stages whose log the rerun wrote."""
        (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": {**yaml.safe_load((root / "dvc.yaml").read_text())["stages"],
                                                                  "a": {"cmd": cmd, "outs": ["a.txt"]}}}))
        for log in logs.iterdir():
            log.unlink()
        stale = stale_stages(root)
        assert stale == {"a"}
        assert run(jobs, slots=2, dvc_args=[], root=root, stale=stale) == 0
        return {p.stem for p in logs.iterdir()}

    assert rerun("printf 'a\\n' > a.txt") == {"a"}  # the same bytes: b is up to date without asking DVC
    assert rerun("echo other > a.txt") == {"a", "b"}
    assert (root / "b.txt").read_text() == "other\n"
    assert stale_stages(root) == set()

def test_a_failing_stage_stops_its_readers_exits_non_zero_and_shows_its_log(tmp_path: Path, capsys) -> None:
    root = project(tmp_path / "p", {
        "broken": {"cmd": "echo the reason it broke && exit 3", "outs": ["broken.txt"]},
        "reader": {"cmd": "cp broken.txt reader.txt", "deps": ["broken.txt"], "outs": ["reader.txt"]},
    })
    assert run(dvc_jobs(root, pool_cost=2), slots=2, dvc_args=[], root=root) == 255  # DVC's status for a failed command
    out = capsys.readouterr()
    assert "FAILED broken (exit 255)" in out.out and "the reason it broke" in out.out and "exited with 3" in out.out
    assert "stage failed: broken (exit 255)" in out.err
    assert not (root / "outputs/logs/repro/reader.log").exists() and not (root / "reader.txt").exists()


@pytest.mark.parametrize("slots", ["0", "-1"])
def test_slots_below_one_are_refused(slots: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--slots", slots])
    assert exit_.value.code == 2 and f"--slots must be at least 1, got {slots}" in capsys.readouterr().err



def test_the_pipeline_s_jobs_are_dvc_yaml_s_stages_with_the_pool_stages_at_every_core() -> None:
    from pipeline.stages.layout import ROOT

    jobs = {j.name: j for j in dvc_jobs(ROOT, pool_cost=16)}
    listed = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]
    assert set(jobs) == set(listed)
    assert jobs["groundtruth_suite@bbc_news"].cost == jobs["search"].cost == jobs["recapture"].cost == 16
    assert jobs["figures_search"].cost == jobs["prepare_suite@bbc_news"].cost == jobs["report"].cost == 1
    assert jobs["search_suite@humaneval"].after == {"stage_code", "groundtruth_suite@humaneval"}


def test_the_pipelines_of_other_folders_are_left_to_run_on_request(tmp_path: Path) -> None:
    """As a plain `dvc repro` at the root: realsize/dvc.yaml's stages are neither scheduled nor found stale."""
    root = project(tmp_path / "p", {"a": {"cmd": "echo a > a.txt", "outs": ["a.txt"]}})
    (root / "sub").mkdir()
    (root / "sub" / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"c": {"cmd": "echo c > c.txt", "outs": ["c.txt"]}}}))
    assert [j.name for j in dvc_jobs(root, pool_cost=2)] == ["a"]
    assert stale_stages(root) == {"a"}
    assert run(dvc_jobs(root, pool_cost=2), slots=2, dvc_args=[], root=root) == 0
    assert stale_stages(root) == set() and not (root / "sub" / "c.txt").exists()
