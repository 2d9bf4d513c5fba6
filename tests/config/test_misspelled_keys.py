"""A misspelled key is named itself, whatever else is on the line: beside the README's
`+model.num_classes=10` (or `++`), a Hydra search path, `~` deletions, and in `--params` mode. The line
names the key and the keys the schema allows there, exits 2 and writes nothing."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = ["benchmark=tiny", "model=external", "model._target_=my_pkg.models.MyModel"]
TOP = "not a key of the top level; valid keys: "
DATASET = "not a key of benchmark.dataset (a dataset of kind 'digits'); valid keys: "


def paths(folder: Path) -> list[str]:
    return [f"paths.data={folder}/run/data", f"paths.outputs={folder}/run/outputs"]


def assert_one_line(code: int, err: str, start: str, folder: Path) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(start), lines[0]
    assert not list((folder / "run").rglob("*")), "nothing is written"
    return lines[0]


def run_here(script: str, args: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """The stage's `run_stage(main)` in this process with the script's argv: (exit status, stderr)."""
    module = importlib.import_module(f"scripts.{script}")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        importlib.import_module("pipeline.stages.runner").run_stage(module.main)
    return exit_.value.code, capsys.readouterr().err


TYPOS = [("serach.mode=live", "error: serach: {mode: 'live'} — " + TOP, "search"),
         ("benchmark.dataset.pth=/x", "error: benchmark.dataset.pth: '/x' — " + DATASET, "test_limit")]


@pytest.mark.parametrize("prefix", ["+", "++"])
@pytest.mark.parametrize("typo, start, valid", TYPOS, ids=[t for t, _, _ in TYPOS])
def test_a_misspelled_key_beside_an_added_key_is_named(prefix, typo, start, valid, tmp_path, monkeypatch, capsys):
    args = [*EXTERNAL, f"{prefix}model.num_classes=10", typo, *paths(tmp_path)]
    line = assert_one_line(*run_here("search", args, monkeypatch, capsys), start, tmp_path)
    assert valid in line.removeprefix(start).split(", ")


@pytest.mark.parametrize("prefix, typo, start, valid", [  # one in the fast tier, every case of the test above in the slow one
    pytest.param(prefix, *case, id=f"{case[0]}-{prefix}", marks=() if (prefix, case) == ("+", TYPOS[0]) else pytest.mark.slow)
    for case in TYPOS for prefix in ("+", "++")])
def test_a_misspelled_key_beside_an_added_key_is_named_as_a_real_process(prefix, typo, start, valid, tmp_path):
    argv = [*EXTERNAL, f"{prefix}model.num_classes=10", typo, *paths(tmp_path)]
    done = subprocess.run([sys.executable, "scripts/search.py", *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
    line = assert_one_line(done.returncode, done.stderr, start, tmp_path)
    assert valid in line.removeprefix(start).split(", ")


def test_a_misspelled_key_beside_a_group_of_the_users_config_folder(tmp_path, monkeypatch, capsys):
    (tmp_path / "conf" / "model").mkdir(parents=True)
    (tmp_path / "conf" / "model" / "my_model.yaml").write_text(
        "name: my_model\nkind: external\n_target_: my_pkg.models.MyModel\nnum_classes: 10\n")
    args = ["benchmark=tiny", f"hydra.searchpath=[file://{tmp_path}/conf]", "model=my_model", "serach.mode=live", *paths(tmp_path)]
    assert_one_line(*run_here("search", args, monkeypatch, capsys), "error: serach: {mode: 'live'} — " + TOP, tmp_path)


def test_deleted_keys_are_deleted_before_the_misspelled_one_is_named(tmp_path, monkeypatch, capsys):
    """Without its deletions, the line would blame `model.width`, a key of conf/ the user took away."""
    args = ["benchmark=tiny", "model.kind=torchvision", "~model.width", "~model.epochs", "~model.seed", "+model.arch=resnet18",
            "model.widht=3", *paths(tmp_path)]
    assert_one_line(*run_here("prepare", args, monkeypatch, capsys), "error: model.widht: 3 — not a key of model (a model of "
                    "kind 'torchvision'); valid keys: arch", tmp_path)


@pytest.mark.parametrize("args, start", [(["+search.seeds=0"], "error: search.seeds: 0 — an integer ≥ 1"),
                                         (["++model.width=10", "serach.mode=live"], "error: serach: {mode: 'live'} — " + TOP)])
def test_params_mode_reads_a_prefixed_key_as_the_key(args, start, tmp_path, monkeypatch, capsys):
    assert_one_line(*run_here("search", ["--params", *args, *paths(tmp_path)], monkeypatch, capsys), start, tmp_path)
