"""A run from the command line never overwrites the committed results with another benchmark's or model's
(`pipeline.stages.guard`): refused in one line, exit 2, before anything is written; a run with files of its own,
a DVC run (`--params`) and a run that agrees with params.yaml go ahead."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = [f"outputs/search_summary/{t}.{ext}" for t in ("table2", "recovery", "table3") for ext in ("csv", "md")]
EXTERNAL = ["model=external", "model._target_=my_pkg.models.MyModel", "+model.num_classes=10"]


@pytest.fixture
def kept():
    """The committed files these tests could touch, byte for byte; put back should a regression write them."""
    paths = [ROOT / p for p in (*SUMMARY, "outputs/search_summary/metrics.json", "outputs/groundtruth/digits.summary.json",
                                "outputs/groundtruth/bbc_news.summary.json", "outputs/prepare/digits.json")]
    before = {p: p.read_bytes() for p in paths}
    yield before
    for path, data in before.items():
        if path.read_bytes() != data:
            path.write_bytes(data)


def run_here(script: str, args: list[str], monkeypatch, capsys, task=None) -> tuple[int | None, list[str]]:
    """`python scripts/<script>.py *args` in this process (with `task` in place of the script's main if given):
    its exit status (None: it returned) and its stderr lines."""
    main = task or importlib.import_module(f"scripts.{script}").main
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *args])
    capsys.readouterr()
    try:
        importlib.import_module("pipeline.stages.runner").run_stage(main)
        code = None
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err.strip().splitlines()


REFUSED = [  # (script, overrides, the start of the line, what else it says)
    ("search_summary", ["benchmark=tiny", *EXTERNAL],  # the README's last step, which rewrote Tables 2 and 3
     "error: benchmark: 'tiny' — would overwrite the committed outputs/search_summary/",
     ("(made from params.yaml's benchmark: 'digits', by `dvc repro search_summary`); give the run its own folder "
      "(paths.outputs=<folder>), or use scripts/assess.py run=<name>")),
    ("groundtruth", ["benchmark=digits", "model=external", "model._target_=pipeline.models.under_test.DigitsCNN"],
     "error: model: 'external' — would overwrite the committed outputs/groundtruth/digits.",
     ("(made from params.yaml's model: 'digits_cnn', by `dvc repro groundtruth`); give the run its own name "
      "(benchmark.name=<name>) or its own folder (paths.outputs=<folder>), or use scripts/assess.py run=<name>")),
    ("groundtruth", ["benchmark=bbc_news", "benchmark.levels=2"],  # a benchmark of the suite: its own DVC run
     "error: benchmark.levels: 2 — would overwrite the committed outputs/groundtruth/bbc_news.",
     "(made from params.yaml's benchmark.levels: 6, by `dvc repro groundtruth_suite@bbc_news`)"),
    ("groundtruth", ["-m", "benchmark=digits,tiny", "model.width=4"],  # every job of a sweep, before any runs
     "error: model.width: 4 — would overwrite the committed outputs/groundtruth/digits.", "`dvc repro groundtruth`"),
    ("groundtruth", ["paths.data=/tmp/elsewhere"],  # the committed table from other prepared assets
     "error: paths.data: '/tmp/elsewhere' — would overwrite the committed outputs/groundtruth/digits.", "paths.data: 'data'"),
    ("prepare", ["model.width=4"], "error: model.width: 4 — would overwrite the committed data/digits",
     "give the run its own name (benchmark.name=<name>) or its own folders (paths.data=<folder> paths.outputs=<folder>)"),
]


@pytest.mark.parametrize("script, overrides, start, says", REFUSED, ids=[f"{s}:{' '.join(o)}" for s, o, *_ in REFUSED])
def test_a_run_that_would_overwrite_a_committed_output_is_refused(script, overrides, start, says, kept, monkeypatch, capsys):
    code, lines = run_here(script, overrides, monkeypatch, capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(start) and says in lines[0], lines[0]
    assert {p: p.read_bytes() for p in kept} == kept, "a committed file changed"


def test_dvc_mode_is_never_refused_and_the_same_setting_from_the_shell_is(monkeypatch, capsys):
    ran = []
    code, lines = run_here("search_summary", ["--params", "search.table2_methods=[testnav]"], monkeypatch, capsys, ran.append)
    assert code is None and len(ran) == 1, lines  # `dvc exp run -S search.table2_methods=[testnav]` runs the stage
    code, lines = run_here("search_summary", ["search.table2_methods=[testnav]"], monkeypatch, capsys, ran.append)
    assert code == 2 and len(ran) == 1 and lines[0].startswith("error: search.table2_methods: ['testnav'] — would overwrite"), lines


@pytest.fixture
def params_of_conf(tmp_path, monkeypatch):
    """params.yaml as conf/ composes it (what `make params` writes and tests/config checks), whatever the tree's state."""
    from pipeline.stages import runner

    OmegaConf.save(runner.compose_conf([]), tmp_path / "params.yaml", resolve=True)
    monkeypatch.setattr(runner, "PARAMS", tmp_path / "params.yaml")


ALLOWED = [
    ("groundtruth", ["workers=1"]),  # params.yaml's own settings, from the shell
    ("groundtruth", ["shard=1", "num_shards=4"]),
    ("merge_groundtruth", ["num_shards=4"]),
    ("groundtruth", ["benchmark=bbc_news"]),  # the suite's own DVC run
    ("groundtruth", ["benchmark=digits", "benchmark.name=mine", *EXTERNAL]),  # files of its own
    ("search_summary", ["benchmark=tiny", "paths.outputs=/tmp/elsewhere", *EXTERNAL]),
    ("search", ["benchmark=digits", "search.mode=live", *EXTERNAL]),  # live search writes outputs/search_live/
    ("groundtruth", ["benchmark=tiny", "model=digits_cnn_wide"]),  # tiny's files are not committed
    ("records", ["benchmark=tiny"]),  # the paired records depend on no benchmark setting
    ("fuzz", ["fuzz.adapter=weights"]),  # DVC's `fuzz_weights` stage
]


@pytest.mark.parametrize("script, overrides", ALLOWED, ids=[f"{s}:{' '.join(o)}" for s, o in ALLOWED])
def test_a_run_with_files_of_its_own_or_params_yaml_s_settings_goes_ahead(script, overrides, params_of_conf, monkeypatch):
    from pipeline.stages.guard import check_overwrite
    from pipeline.stages.runner import compose_job, load_params

    monkeypatch.setattr(sys, "argv", [f"scripts/{script}.py", *overrides])
    check_overwrite(compose_job(overrides), overrides, load_params)
