"""A user's own model, from a package outside the repository, by config alone (issue: the open contract): the
package lives in a temporary folder on PYTHONPATH; prepare, ground truth on `benchmark=tiny`, live search and
the search summary run on it; editing its source recomputes the ground truth's units; a YAML file in the
user's own config folder names it; a plug-in that lacks its protocol's method is refused in one line.

The end-to-end run has two tiers: in the fast one `prepare` runs as its own process (the package found on
PYTHONPATH) and the later stages in this process (`run_stage` with the script's argv, the package on sys.path);
the slow tier (`pytest -m slow`) runs every stage as its own process."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests import in_process
from tests.in_process import forgetting

ROOT = Path(__file__).resolve().parents[2]

MODEL = '''"""A model under test of the user's own: a brightness-bucket classifier (no training)."""
import numpy as np

SCALE = {scale}


class MyModel:
    def __init__(self, num_classes):
        self.num_classes = num_classes

    def predict_proba(self, images):
        mean = images.reshape(len(images), -1).mean(axis=1) / 255.0
        classes = np.minimum((mean * SCALE * self.num_classes).astype(int), self.num_classes - 1)
        return np.eye(self.num_classes)[classes]


class NoPredict:
    def __init__(self, num_classes):
        self.num_classes = num_classes

    def forward(self, images):
        return images
'''


def user_folder(folder: Path) -> Path:
    """`folder` with the user's package `my_pkg` and their config folder `my_conf`."""
    (folder / "my_pkg").mkdir()
    (folder / "my_pkg" / "__init__.py").write_text('"""The user\'s package."""\n')
    (folder / "my_pkg" / "models.py").write_text(MODEL.format(scale=3.0))
    (folder / "my_conf" / "model").mkdir(parents=True)
    (folder / "my_conf" / "model" / "my_model.yaml").write_text(
        "name: my_model\nkind: external\n_target_: my_pkg.models.MyModel\nnum_classes: 10\n")
    return folder


@pytest.fixture(scope="module")
def user(tmp_path_factory) -> Path:
    """A folder with the user's package `my_pkg` and their config folder `my_conf`, shared by the module."""
    return user_folder(tmp_path_factory.mktemp("user"))


def stage(user: Path, script: str, *overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(user), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    paths = [f"paths.data={user}/data", f"paths.outputs={user}/outputs", "workers=1"]
    return subprocess.run([sys.executable, f"scripts/{script}.py", *overrides, *paths], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def stage_here(user: Path, script: str, *overrides: str, monkeypatch, capsys) -> subprocess.CompletedProcess:
    """`stage` in this process (`tests.in_process.stage_here`), the package on sys.path and imported afresh."""
    monkeypatch.syspath_prepend(str(user))
    return in_process.stage_here(script, [*overrides, f"paths.data={user}/data", f"paths.outputs={user}/outputs", "workers=1"],
                                 monkeypatch, capsys, forgetting("my_pkg"))


EXTERNAL = ("benchmark=tiny", "model=external", "model._target_=my_pkg.models.MyModel", "+model.num_classes=10",
            "benchmark.store.enabled=false", "benchmark.features.epochs=1")  # KID's feature network: one epoch is enough here


def last_json(stdout: str) -> dict:
    return next(json.loads(line) for line in reversed(stdout.splitlines()) if line.startswith("{") and "resumed" in line)


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def prepared(user) -> subprocess.CompletedProcess:
    """`prepare` of the user's model on `benchmark=tiny` in the module's folder, as its own process."""
    return stage(user, "prepare", *EXTERNAL)


@pytest.mark.parametrize("where", ["here", pytest.param("processes", marks=pytest.mark.slow)])
def test_an_external_model_runs_end_to_end(where, tmp_path, request, monkeypatch, capsys):
    """`here`: prepare as its own process (the module's, shared with the plug-in error tests), then every later
    stage in this process; `processes` (slow tier): every stage as its own process, in a folder of its own."""
    if where == "here":
        user = request.getfixturevalue("user")
        done = request.getfixturevalue("prepared")
        run = functools.partial(stage_here, monkeypatch=monkeypatch, capsys=capsys)
    else:
        user = user_folder(tmp_path)
        done = stage(user, "prepare", *EXTERNAL)
        run = stage
    assert done.returncode == 0, done.stderr
    prepared = {p.name for p in (user / "data" / "tiny").iterdir()}
    assert {"splits.npz", "features.pt"} <= prepared and "model.pt" not in prepared  # nothing trained for it

    first = run(user, "groundtruth", *EXTERNAL)
    assert first.returncode == 0, first.stderr
    assert last_json(first.stdout) == {**last_json(first.stdout), "configurations": 9, "resumed": 0}
    table = pd.read_parquet(user / "outputs" / "groundtruth" / "tiny.parquet")
    assert len(table) == 9 and not any(c.startswith("adequacy_") for c in table.columns)  # a black box: no adequacy

    again = run(user, "groundtruth", *EXTERNAL)
    assert again.returncode == 0 and last_json(again.stdout)["resumed"] == 9, again.stderr

    (user / "my_pkg" / "models.py").write_text(MODEL.format(scale=2.0))  # the user edits their model
    edited = run(user, "groundtruth", *EXTERNAL)
    assert edited.returncode == 0 and last_json(edited.stdout)["resumed"] == 0, edited.stderr

    live = run(user, "search", *EXTERNAL, "search.mode=live", "search.live.methods=[testnav]", "search.live.seeds=1",
               "search.live.budget=12")
    assert live.returncode == 0, live.stderr
    for metric in ("ssim", "kid"):  # live traces of the model itself, B = 12 proposals each
        trace = pd.read_parquet(user / "outputs" / "search_live" / "tiny" / metric / "testnav" / "seed=0.trace.parquet")
        assert len(trace) == 12 and trace["delta"].between(0, 1).all()
    methods = ("search.seeds=1", "search.methods=[testnav,random]", "search.table2_methods=[testnav,random]",
               "search.fig3_methods=[testnav]", "search.fig4_methods=[testnav]")
    table_search = run(user, "search", *EXTERNAL, *methods)
    assert table_search.returncode == 0, table_search.stderr
    summary = run(user, "search_summary", *EXTERNAL, *methods)
    assert summary.returncode == 0, summary.stderr
    assert (user / "outputs" / "search_summary").is_dir() and any((user / "outputs" / "search_summary").rglob("*.md"))


def test_a_model_yaml_in_the_users_config_folder(user, monkeypatch, capsys):
    done = stage_here(user, "prepare", "benchmark=tiny", f"hydra.searchpath=[file://{user / 'my_conf'}]", "model=my_model",
                      "benchmark.store.enabled=false", "benchmark.name=tiny_yaml", "benchmark.features.epochs=1",
                      monkeypatch=monkeypatch, capsys=capsys)
    assert done.returncode == 0, done.stderr
    assert (user / "data" / "tiny_yaml" / "splits.npz").is_file() and not (user / "data" / "tiny_yaml" / "model.pt").exists()


BROKEN = [("my_pkg.models.NoPredict", "has no predict_proba() or predict()"), ("my_pkg.models.Nowhere", "an importable class or factory")]


@pytest.mark.parametrize("target, missing, where", [
    pytest.param(*BROKEN[0], "process", id="NoPredict-process"), pytest.param(*BROKEN[1], "here", id="Nowhere-here"),
    pytest.param(*BROKEN[1], "process", id="Nowhere-process", marks=pytest.mark.slow)])
def test_a_broken_plug_in_is_one_line_exit_2_and_nothing_written(user, prepared, target, missing, where, monkeypatch, capsys):
    """As its own process; the second kind also in this process (`run_stage`: the same check), as a process in the slow tier."""
    assert prepared.returncode == 0, prepared.stderr  # the ground truth's inputs are there: only the plug-in is wrong
    before = snapshot(user)
    run = stage if where == "process" else functools.partial(stage_here, monkeypatch=monkeypatch, capsys=capsys)
    done = run(user, "groundtruth", "benchmark=tiny", "model=external", f"model._target_={target}", "+model.num_classes=10")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: model._target_: "), done.stderr
    assert missing in lines[0], lines[0]
    assert snapshot(user) == before


def test_dvc_yaml_lists_the_plug_in_source_as_a_dependency(user, tmp_path, monkeypatch):
    """`make dvc.yaml` after pointing params.yaml at a plug-in: its package's files become deps of the stages
    that build the benchmark (and of no other), so editing the model reruns them."""
    from omegaconf import OmegaConf

    from pipeline.stages import table as stages

    monkeypatch.syspath_prepend(str(user))
    params = OmegaConf.load(ROOT / "params.yaml")
    params.model = {"name": "mine", "kind": "external", "_target_": "my_pkg.models.MyModel", "num_classes": 10}
    OmegaConf.save(params, tmp_path / "params.yaml")
    expected = sorted(str(user / "my_pkg" / f) for f in ("__init__.py", "models.py"))
    assert stages.plugin_deps(tmp_path / "params.yaml") == expected
    body = yaml.safe_load(stages.dvc_yaml(tmp_path / "params.yaml"))["stages"]
    for name, stage in body.items():
        assert (set(expected) <= set(stage.get("deps", []))) == (name in stages.PLUGIN_STAGES), name
    assert stages.plugin_deps(ROOT / "params.yaml") == []  # the embedded default: no plug-in outside the project


def test_params_mode_as_dvc_exp_run_composes_it(user, tmp_path, monkeypatch, capsys):
    """`dvc exp run -S model=external -S model._target_=... -S +model.num_classes=10` composes conf/ with the
    overrides into params.yaml (`[hydra] enabled` in .dvc/config), then runs each stage with no arguments:
    the same composition, saved as params.yaml, runs `prepare` in params mode."""
    import importlib

    from omegaconf import OmegaConf

    entry = importlib.import_module("pipeline.stages.runner")
    monkeypatch.syspath_prepend(str(user))
    composed = entry.compose_conf(["benchmark=tiny", "model=external", "model._target_=my_pkg.models.MyModel",
                                   "+model.num_classes=10", "benchmark.name=tiny_dvc", "benchmark.features.epochs=1"])
    OmegaConf.save(composed, tmp_path / "params.yaml")
    monkeypatch.setattr(entry, "PARAMS", tmp_path / "params.yaml")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / "prepare.py"), "--params", f"paths.data={user}/data",
                                      f"paths.outputs={user}/outputs"])
    entry.run_stage(importlib.import_module("scripts.prepare").main)
    assert (user / "data" / "tiny_dvc" / "features.pt").is_file() and not (user / "data" / "tiny_dvc" / "model.pt").exists()
    metrics = json.loads((user / "outputs" / "prepare" / "tiny_dvc.json").read_text())
    assert "features_test_accuracy" in metrics and not any(k.startswith("model_") for k in metrics)  # nothing trained
