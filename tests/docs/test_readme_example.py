"""The README's "Test your own model" section runs as printed (a doc test): every command block of the section,
shell then Python, in the repository's root as a user runs it, on the worked example (fastText language ID, a
model that is not ours). A run of the same name that a developer made before is kept aside and put back."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Test your own model"


def blocks(language: str, heading: str = SECTION) -> list[str]:
    """The fenced `language` blocks of the README's section `heading`, in order."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index(heading):]
    section = section[: section.index("\n## ", len(heading))]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def run_names() -> list[str]:
    """The run names the section's blocks use (`run=<name>`, `name="<name>"`)."""
    code = "\n".join(blocks("bash") + blocks("python"))
    return re.findall(r"run=([\w.-]+)", code) + re.findall(r'name="([\w.-]+)"', code)


@pytest.fixture
def aside(tmp_path):
    """Move the runs' folders and stores aside during the test and put them back after."""
    paths = [p for name in run_names() for p in (ROOT / "outputs" / "runs" / name, ROOT / "data" / "runs" / name,
                                                 ROOT / "data" / "cache" / "store" / "assess" / f"{name}.sqlite")]
    kept = {}
    for i, p in enumerate(paths):
        if p.exists():
            kept[p] = tmp_path / str(i)
            shutil.move(p, kept[p])
    yield
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    for p, saved in kept.items():
        shutil.move(saved, p)


def tracked_changes() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout


def run_section(shell: str, python: str, min_front: int) -> dict:
    """Run the section's shell block, then its Python block, as a user does; check what each prints and writes;
    the shell run's summary.json."""
    before = tracked_changes()
    venv = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}  # `python` is the venv's
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=ROOT, capture_output=True, text=True, timeout=900, env=venv)
    assert done.returncode == 0, done.stderr[-3000:]
    out = ROOT / "outputs" / "runs" / "langid"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["clean_score"] == 0.97 and summary["n_inputs"] == 400
    assert summary["metrics"]["chrf"]["front"] >= min_front  # a visible front, not one configuration
    assert "round" in done.stdout and f"page: {out / 'index.html'}" in done.stdout
    assert {"index.html", "front.csv", "summary.json"} <= {p.name for p in out.iterdir()}
    exported = re.search(r"^export PYTHONPATH=(\S+)", shell, flags=re.M).group(1)  # what the Python block runs under
    done = subprocess.run([sys.executable, "-c", python], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**venv, "PYTHONPATH": exported})
    assert done.returncode == 0, done.stderr[-3000:]
    score, front = done.stdout.strip().splitlines()[-1].split()
    assert float(score) == summary["clean_score"] and int(front) >= min_front
    assert (ROOT / "outputs" / "runs" / "langid-py" / "index.html").exists()
    assert tracked_changes() == before  # nothing the repository tracks was touched
    return summary


@pytest.mark.slow
def test_the_section_runs_as_printed(aside):
    shell, python = blocks("bash"), blocks("python")
    assert len(shell) == 1 and len(python) == 1 and sorted(run_names()) == ["langid", "langid-py"]
    run_section(shell[0], python[0], min_front=10)


def test_the_section_runs_with_a_small_budget(aside):
    """The fast tier's run of the same blocks: each search stopped after 8 proposals (`search.live.budget`, the
    `budget` setting), everything else as printed."""
    (shell,), (python,) = blocks("bash"), blocks("python")
    command = re.search(r"^\.venv/bin/python scripts/assess\.py .*$", shell, flags=re.M).group(0)
    call = re.search(r'name="langid-py",', python).group(0)
    summary = run_section(shell.replace(command, command + " search.live.budget=8"), python.replace(call, call + " budget=8,"), min_front=1)
    assert summary["metrics"]["chrf"]["proposals"] == 8  # and every perturbation alone, evaluated before the search
    assert summary["configurations_evaluated"] <= 8 + 4 * 5
