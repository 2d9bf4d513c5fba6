"""A missing input names the command that makes it in the mode the user is in: in script mode (Hydra
overrides) the producing stage's script with the same overrides, ready to paste; in DVC mode (no arguments,
or `--params`) `dvc repro <stage>`."""
from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_here(script: str, args: list[str], monkeypatch, capsys) -> str:
    """The stage's `run_stage(main)` in this process with the script's argv; its one stderr line."""
    module = importlib.import_module(f"scripts.{script}")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        importlib.import_module("pipeline.stages.runner").run_stage(module.main)
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1, lines
    return lines[0]


def hinted(line: str) -> list[str]:
    """The command between the backticks of `run `…` first`, as the shell splits it."""
    assert line.endswith("` first"), line
    return shlex.split(line.rpartition("run `")[2].removesuffix("` first"))


@pytest.fixture
def paths(tmp_path: Path) -> list[str]:
    return [f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs"]


def test_script_mode_names_the_producing_script_with_the_same_overrides(paths, tmp_path, monkeypatch, capsys):
    overrides = ["benchmark=tiny", "benchmark.name=mine", *paths]
    line = run_here("groundtruth", overrides, monkeypatch, capsys)
    assert line.startswith(f"error: missing input {tmp_path}/data/mine: run `python scripts/prepare.py benchmark=tiny "
                           "benchmark.name=mine paths.data="), line
    assert hinted(line) == ["python", "scripts/prepare.py", *overrides]


def test_the_hint_quotes_what_the_shell_would_change(paths, monkeypatch, capsys):
    overrides = ["benchmark=tiny", "benchmark.name=tiny-${model.name}", *paths]
    line = run_here("groundtruth", overrides, monkeypatch, capsys)
    assert "'benchmark.name=tiny-${model.name}'" in line
    assert hinted(line) == ["python", "scripts/prepare.py", *overrides]


@pytest.mark.parametrize("given, own", [([], ["fuzz.adapter=geometric"]), (["fuzz.adapter=weights"], [])])
def test_a_stage_with_settings_of_its_own_gets_them_unless_the_line_sets_them(given, own, paths, monkeypatch, capsys):
    """`fuzz_<adapter>` is `scripts/fuzz.py --params fuzz.adapter=<adapter>` in DVC: the script-mode hint
    carries that setting, once."""
    overrides = ["benchmark=tiny", *given, *paths]
    line = run_here("plot_fuzz", overrides, monkeypatch, capsys)
    assert hinted(line) == ["python", "scripts/fuzz.py", *own, *overrides]


@pytest.mark.parametrize("args, name", [([], "digits"), (["benchmark=tiny"], "tiny")])
def test_dvc_mode_keeps_dvc_repro(args, name, paths, tmp_path, monkeypatch, capsys):
    line = run_here("groundtruth", ["--params", *args, *paths], monkeypatch, capsys)
    assert line == f"error: missing input {tmp_path}/data/{name}: run `dvc repro prepare` first"
