"""The one error path, through the stage scripts' entry (`_entry.run_stage`): every rejected setting or
input file exits with status 2, prints one line on stderr naming the key (or file, row and column), the
bad value and what is allowed, and creates or changes no file under outputs/ or data/. Both modes:
Hydra CLI (`script key=value`) and DVC's (`script --params key=value`, what `dvc repro` / `dvc exp run
-S` run). Most cases call `run_stage` in this process with the script's argv (a subprocess per case
costs seconds of imports); `test_as_real_processes` runs a sample as separate processes (one per mode in the fast
tier, all of REAL in both modes in the slow one)."""
from __future__ import annotations

import hashlib
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.front.space import Space
from tests.search.search_fixtures import synthetic_table

ROOT = Path(__file__).resolve().parents[2]
TINY = Space(("brightness", "pixelate"), 3)
DIGITS = Space(("speckle_noise", "glass_blur", "brightness", "pixelate"), 6)


def argv(folder: Path, mode: str, overrides: tuple[str, ...]) -> list[str]:
    paths = [f"paths.data={folder}/data", f"paths.outputs={folder}/outputs"]
    if mode == "params":
        return ["--params", *paths, *overrides]
    return [*overrides, *paths] if "-m" in overrides else ["benchmark=tiny", *paths, *overrides]


def run(folder: Path, mode: str, script: str, *overrides: str) -> subprocess.CompletedProcess:
    """The stage as its own process."""
    return subprocess.run([sys.executable, f"scripts/{script}.py", *argv(folder, mode, overrides)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def run_here(folder: Path, mode: str, script: str, overrides: tuple[str, ...], monkeypatch, capsys) -> tuple[int, str]:
    """The stage's `run_stage(main)` in this process with the script's argv: (exit status, stderr)."""
    module = importlib.import_module(f"scripts.{script}")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *argv(folder, mode, overrides)])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        importlib.import_module("pipeline.stages.runner").run_stage(module.main)
    return exit_.value.code, capsys.readouterr().err


def beside_repository() -> list[str]:
    """The top-level names of the repository, but pytest's own cache (which a concurrent worker may create)."""
    return sorted(p.name for p in ROOT.iterdir() if p.name != ".pytest_cache")


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Valid inputs of every stage: ground-truth tables (tiny and digits), tiny search traces, tiny records (the
    search and records stages run in this process, with the script's argv)."""
    folder = tmp_path_factory.mktemp("inputs")
    for name, space in (("tiny", TINY), ("digits", DIGITS)):
        (folder / "outputs/groundtruth").mkdir(parents=True, exist_ok=True)
        synthetic_table(space).to_parquet(folder / f"outputs/groundtruth/{name}.parquet", index=False)
    for script, extra in (("search", ["search.seeds=1", "search.methods=[random,testnav]", "search.table2_methods=[random,testnav]",
                                      "search.fig3_methods=[testnav]", "search.fig4_methods=[testnav]"]), ("records", ["paired=tiny"])):
        module = importlib.import_module(f"scripts.{script}")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *argv(folder, "hydra", (*extra, "workers=1"))])
            importlib.import_module("pipeline.stages.runner").run_stage(module.main)  # exits (fails the fixture) on an error
    return folder


@pytest.fixture
def inputs(base, tmp_path) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(base, folder)
    return folder


def assert_rejected(folder: Path, mode: str, script: str, overrides: tuple[str, ...], expected: str, monkeypatch=None,
                    capsys=None) -> None:
    """Exit 2, one line naming what is wrong, no file created or changed. In this process when given
    pytest's monkeypatch and capsys, else as a separate process."""
    before, top = snapshot(folder), beside_repository()
    if monkeypatch is None:
        proc = run(folder, mode, script, *overrides)
        code, err = proc.returncode, proc.stderr
    else:
        code, err = run_here(folder, mode, script, overrides, monkeypatch, capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected in lines[0], lines[0]
    assert snapshot(folder) == before, "no file under outputs/ or data/ may be created or changed"
    assert beside_repository() == top, "nothing written beside the repository either"


SETTINGS = [  # (script, override, what the line must say); each runs in both modes
    ("search", "search.seedz=3", "search.seedz: 3 — not a key of search; valid keys: batch_size, budget"),
    ("search", "search.budget=0", "search.budget: 0 — null (B = budget_factor × |Θ|"),
    ("search", "search.seeds=0", "search.seeds: 0 — an integer ≥ 1"),
    ("search", "search.seeds=-2", "search.seeds: -2 — an integer ≥ 1"),
    ("search", "search.seeds=1.5", "search.seeds: 1.5 — an integer"),
    ("groundtruth", "benchmark.levels=2.5", "benchmark.levels: 2.5 — an integer"),
    ("groundtruth", "benchmark.dataset.test_limit=-1", "benchmark.dataset.test_limit: -1 — null"),
    ("groundtruth", "fidelity=[]", "fidelity: [] — a non-empty list of fidelity metrics among ssim, kid"),
    ("groundtruth", "benchmark.perturbations=[brightness,nope]", "benchmark.perturbations[1]: 'nope' — "),
    ("groundtruth", "fidelity=[ssim,psnr]", "fidelity[1]: 'psnr' — one of ssim, kid"),
    ("groundtruth", "benchmark.levels=7", "benchmark.levels: 7 — an integer in 2..6"),
    ("groundtruth", "shard=3", "shard: 3 — an integer in 0..0"),
    ("prepare", "model.width=0", "model.width: 0 — an integer ≥ 1"),
    ("search", "search.methods=[testnav,foo]", "search.methods[1]: 'foo' — one of testnav, greedy"),
    ("search", "search.mode=replay", "search.mode: 'replay' — one of table, live"),
    ("search", "search.selection=best", "search.selection: 'best' — one of dominance, rank_crowding"),
    ("tune", "search.tune.threshold=2", "search.tune.threshold: 2.0 — a number in [0, 1]"),
    ("records", "paired.records.dev_fraction=1.5", "paired.records.dev_fraction: 1.5 — "),
    ("bounds", "paired.clean_coverage=0", "paired.clean_coverage: 0.0 — a number in (0, 1]"),
    ("policies", "paired.primary_lambda=0.55", "paired.primary_lambda: 0.55 — a value of the paired.lambdas grid"),
    ("fuzz", "fuzz.adapter=tabular", "fuzz.adapter: 'tabular' — one of geometric, weights, severity"),
    ("fuzz", "fuzz.adapters.geometric.test_fraction=1.5", "fuzz.adapters.geometric.test_fraction: 1.5 — "),
]


@pytest.mark.parametrize("mode", ["hydra", "params"])
@pytest.mark.parametrize("script, override, expected", SETTINGS, ids=[f"{s}:{o}" for s, o, _ in SETTINGS])
def test_a_bad_setting_is_one_line_exit_2_and_no_output(inputs, mode, script, override, expected, monkeypatch, capsys):
    assert_rejected(inputs, mode, script, (override,), expected, monkeypatch, capsys)


HYDRA_ONLY = [
    ("search", ("search.mu=200",), "search.mu: 200 — null (derived: 4) or an integer in 2..9"),
    ("search", ("-m", "benchmark=tiny", "search.seeds=1,0"), "search.seeds: 0 — an integer ≥ 1"),  # every job of a sweep
    ("groundtruth", ("benchmark=nope",), "Could not find 'benchmark/nope'"),
    ("prepare", ("model=nope",), "Could not find 'model/nope'"),
    ("prepare", ("modality=smell",), "Could not find 'modality/smell'"),
    ("prepare", ("benchmark=tiny_imagenet", "model=digits_cnn"), "model.kind: 'digits_cnn' — a kind that fits dataset 'tiny_imagenet'"),
    ("prepare", ("-m", "benchmark=tiny", "model=digits_cnn_small,digits_cnn_wide"), "benchmark.name: 'tiny' — a name of its own for each model"),
]


@pytest.mark.parametrize("script, overrides, expected", HYDRA_ONLY, ids=[" ".join(o) for _, o, _ in HYDRA_ONLY])
def test_hydra_only_settings(inputs, script, overrides, expected, monkeypatch, capsys):
    assert_rejected(inputs, "hydra", script, overrides, expected, monkeypatch, capsys)


PARAMS_ONLY = [  # group choices in params mode take the group's keys from conf/ (how the suite stages run)
    ("prepare", ("benchmark=nope",), "Could not find 'benchmark/nope'"),
    ("prepare", ("benchmark=bbc_news", "model=digits_cnn"), "model.kind: 'digits_cnn' — a model kind of modality 'text': text_head"),
    ("prepare", ("suite=[nope]",), "suite[0]: 'nope' — one of " + ", ".join(sorted(
        p.stem for p in (ROOT / "conf" / "benchmark").glob("*.yaml"))) + " (the benchmarks of"),
    ("prepare", ("model.kind=torchvision",), "model.width: 16 — not a key of model (a model of kind 'torchvision'); valid keys: arch"),
]


@pytest.mark.parametrize("script, overrides, expected", PARAMS_ONLY, ids=[" ".join(o) for _, o, _ in PARAMS_ONLY])
def test_params_only_settings(inputs, script, overrides, expected, monkeypatch, capsys):
    assert_rejected(inputs, "params", script, overrides, expected, monkeypatch, capsys)


def _edit_table(folder: Path, name: str, edit) -> None:
    path = folder / f"outputs/groundtruth/{name}.parquet"
    table = pd.read_parquet(path)
    edit(table).to_parquet(path, index=False)


def _flip_first_front_flag(t: pd.DataFrame) -> pd.DataFrame:
    row = int(np.flatnonzero(t["pareto_ssim"].to_numpy())[0])
    t.loc[row, "pareto_ssim"] = False
    return t


def _edit_records(folder: Path, edit) -> None:
    path = folder / "outputs/records/digits.parquet"
    table = pq.read_table(path)  # keep the n_classes metadata
    edited = pa.Table.from_pandas(edit(table.to_pandas()), preserve_index=False)
    pq.write_table(edited.replace_schema_metadata(table.schema.metadata), path)


def _nan_at_row_7(t: pd.DataFrame) -> pd.DataFrame:
    t.loc[7, "pert_trueprob"] = np.nan
    return t


def _bad_u(folder: Path) -> None:
    path = next((folder / "outputs/search/tiny/ssim/random").glob("seed=0.parquet"))
    trace = pd.read_parquet(path)
    trace.loc[3, "u"] += 1
    trace.to_parquet(path, index=False)


INPUTS = [  # (script, mutation of the valid inputs, mode, extra overrides, what the line must say)
    ("search", lambda f: _edit_table(f, "tiny", lambda t: t.assign(pareto_ssim=t["pareto_ssim"].map(str))), "hydra", (),
     "tiny.parquet row 0, column 'pareto_ssim'"),
    ("search", lambda f: _edit_table(f, "tiny", _flip_first_front_flag), "hydra", (), "column 'pareto_ssim'"),
    ("search", lambda f: _edit_table(f, "digits", _flip_first_front_flag), "params", (), "digits.parquet row "),
    ("tune", lambda f: _edit_table(f, "tiny", lambda t: t.iloc[:-1]), "hydra", (), "tiny.parquet"),
    ("search_summary", _bad_u, "hydra", (), "seed=0.parquet row 3, column 'u'"),
    ("search_summary", lambda f: _edit_table(f, "tiny", _flip_first_front_flag), "hydra", (), "column 'pareto_ssim'"),
    ("bounds", lambda f: _edit_records(f, lambda t: t[~((t.model == "knn5") & (t.condition == "contrast-4"))]), "hydra",
     ("paired=tiny",), "cells missing: (knn5, contrast-4)"),
    ("policies", lambda f: _edit_records(f, _nan_at_row_7), "hydra", ("paired=tiny",), "row 7, column 'pert_trueprob'"),
    ("search_summary", lambda f: shutil.rmtree(f / "outputs/search"), "hydra", (),
     "run `python scripts/search.py benchmark=tiny paths.data="),
    ("bounds", lambda f: shutil.rmtree(f / "outputs/records"), "params", (), "run `dvc repro records` first"),
    ("plot_groundtruth", lambda f: (f / "outputs/groundtruth/tiny.parquet").unlink(), "hydra", (),
     "run `python scripts/groundtruth.py benchmark=tiny paths.data="),
    ("groundtruth", lambda f: None, "hydra", (), "data/tiny: run `python scripts/prepare.py benchmark=tiny paths.data="),
    ("fuzz", lambda f: None, "params", ("fuzz.adapter=weights",), "data/digits: run `dvc repro prepare` first"),
]


@pytest.mark.parametrize("script, mutate, mode, overrides, expected", INPUTS, ids=[f"{s}:{e[:30]}" for s, _, _, _, e in INPUTS])
def test_a_bad_or_missing_input_is_one_line_exit_2_and_no_output(inputs, script, mutate, mode, overrides, expected, monkeypatch,
                                                                 capsys):
    mutate(inputs)
    assert_rejected(inputs, mode, script, overrides, expected, monkeypatch, capsys)


REAL = [SETTINGS[0], SETTINGS[4], SETTINGS[19]]
FAST_REAL = {(SETTINGS[0], "hydra"), (SETTINGS[4], "params")}  # a misspelled key and a bad value, one per mode (the
# policies script as its own process in the fast tier: test_a_bad_input_file_as_a_real_process)


@pytest.mark.parametrize("script, override, expected, mode", [
    pytest.param(*case, mode, id=f"{case[0]}:{case[1]}-{mode}", marks=() if (case, mode) in FAST_REAL else pytest.mark.slow)
    for case in REAL for mode in ("hydra", "params")])
def test_as_real_processes(inputs, mode, script, override, expected):
    assert_rejected(inputs, mode, script, (override,), expected)


@pytest.mark.slow  # the same sweep in this process in the fast tier: test_hydra_only_settings[-m benchmark=tiny search.seeds=1,0]
def test_a_multirun_sweep_as_a_real_process(inputs):
    assert_rejected(inputs, "hydra", "search", ("-m", "benchmark=tiny", "search.seeds=2,1,0"), "search.seeds: 0 — an integer ≥ 1")


def test_a_bad_input_file_as_a_real_process(inputs):
    _edit_records(inputs, _nan_at_row_7)
    assert_rejected(inputs, "hydra", "policies", ("paired=tiny",), "row 7, column 'pert_trueprob'")


def test_a_params_file_that_does_not_parse_is_one_line_naming_file_and_line(inputs, tmp_path, monkeypatch, capsys):
    broken = tmp_path / "params.yaml"
    broken.write_text("seed: 0\nsearch: {budget: [oops\n")
    monkeypatch.setattr(importlib.import_module("pipeline.stages.runner"), "PARAMS", broken)
    assert_rejected(inputs, "params", "search", (), "params.yaml line 3, column 1: (end of file) — valid YAML (expected ',' or ']'",
                    monkeypatch, capsys)


@pytest.mark.parametrize("key", ["outputs", "data"])
def test_an_unwritable_folder_is_refused_before_any_work(inputs, key, monkeypatch, capsys):
    (inputs / "readonly").mkdir()
    (inputs / "readonly" / "a_file").write_text("not a folder")
    overrides = ("benchmark=tiny", f"paths.{key}={inputs}/readonly/a_file/sub")
    assert_rejected(inputs, "hydra", "groundtruth", overrides, f"paths.{key}: '{inputs}/readonly/a_file/sub' — a folder this run "
                    f"can write to: {inputs}/readonly/a_file is a file, not a folder", monkeypatch, capsys)


def test_an_immutable_output_folder_is_refused_before_any_work(inputs, monkeypatch, capsys):
    """The case a user met: `paths.outputs=<an immutable folder>` (root passes every permission check, so
    only trying to make a file tells)."""
    folder = inputs / "immutable"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not supported on this filesystem")
    try:
        assert_rejected(inputs, "hydra", "search", ("benchmark=tiny", f"paths.outputs={folder}"),
                        f"paths.outputs: '{folder}' — a folder this run can write to: cannot create files in {folder}",
                        monkeypatch, capsys)
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
