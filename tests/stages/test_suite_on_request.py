"""humaneval_b, the stand-in for the paper's MBPP column, runs on request (issue 31): the default `suite` leaves it
out, and the command conf/config.yaml and docs/configuration.md give adds exactly its five suite stages."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ON_REQUEST = ["suite=[bbc_news,humaneval,humaneval_b]"]  # the documented override of scripts/compose_params.py


def _stage_names(folder: Path) -> set[str]:
    from dvc.repo import Repo

    with Repo(str(folder)) as repo:
        return {s.name for s in repo.index.stages}


@pytest.fixture(scope="module")
def default_stages() -> set[str]:
    return _stage_names(ROOT)


def test_the_default_suite_leaves_humaneval_b_out(default_stages):
    assert yaml.safe_load((ROOT / "params.yaml").read_text())["suite"] == ["bbc_news", "humaneval"]
    assert not [s for s in default_stages if s.endswith("@humaneval_b")]


def test_the_documented_command_adds_humaneval_bs_five_stages(tmp_path, default_stages):
    for name in ("dvc.yaml", "scripts", "pipeline", "conf"):  # compose_params writes params.yaml beside its own tree
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, tmp_path / name)
    subprocess.run([sys.executable, "scripts/compose_params.py", *ON_REQUEST], cwd=tmp_path, check=True,
                   env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    added = _stage_names(tmp_path) - default_stages
    assert added == {f"{stage}_suite@humaneval_b" for stage in
                     ("prepare", "perturb", "groundtruth", "figures_groundtruth", "search")}
