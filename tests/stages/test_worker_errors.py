"""An error raised where a stage's work runs, in worker processes, reaches the stage's one error path:
live search on a CSV whose label column is misnamed (the data set is built in joblib's workers) prints one
`error:` line and exits 2, as `prepare` does for the same file; the ground truth's process pool hands a
benchmark that cannot be built back to the parent as that error, not as a broken pool. The live search runs in
this process in the fast tier (`run_stage` with the script's argv; its workers are processes all the same) and as
a process of its own in the slow tier."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.config import ConfigError
from pipeline.benchmark.ground_truth import evaluate_shard
from pipeline.front.space import Space
from tests.in_process import forgetting, stage_here

ROOT = Path(__file__).resolve().parents[2]
MODEL = '''import numpy as np


class Constant:
    def predict(self, texts):
        return np.zeros(len(texts), dtype=np.int64)
'''


def search_here(argv: list[str], user: Path, monkeypatch, capfd) -> subprocess.CompletedProcess:
    """scripts/search.py's `run_stage(main)` in this process, the package on sys.path (which the spawned workers get);
    its exit status and what it and its workers wrote (file descriptors 1 and 2)."""
    monkeypatch.syspath_prepend(str(user))
    return stage_here("search", argv, monkeypatch, capfd, forgetting("my_pkg"))


@pytest.mark.parametrize("where", ["here", pytest.param("process", marks=pytest.mark.slow)])
def test_live_search_reports_a_data_set_its_workers_cannot_build_in_one_line(where, tmp_path, monkeypatch, capfd):
    (tmp_path / "my_pkg").mkdir()
    (tmp_path / "my_pkg" / "__init__.py").write_text("")
    (tmp_path / "my_pkg" / "text.py").write_text(MODEL)
    (tmp_path / "reviews.csv").write_text("text,category\ngood film,1\nbad film,0\nfine,1\n")
    argv = ["benchmark=text_csv", f"benchmark.dataset.path={tmp_path}/reviews.csv", "model=external",
            "model._target_=my_pkg.text.Constant", "fidelity=[chrf]", "benchmark.perturbations=[typo,punctuation]",
            "benchmark.levels=2", "search.mode=live", "search.live.executor=processes", "search.live.batch_size=2", "workers=2",
            "suite=[]", f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs"]
    if where == "here":
        done = search_here(argv, tmp_path, monkeypatch, capfd)
    else:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "scripts/search.py", *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(errors) == 1, done.stderr
    assert errors[0].startswith("error: benchmark.dataset._target_: 'pipeline.data.text_table.TextTableDataSet' — "), errors[0]
    assert "no column 'label' (label_column); columns present: 'text', 'category'" in errors[0]
    assert not (tmp_path / "outputs").exists(), "no result is written"


def refuse() -> None:
    """A benchmark factory whose data set is refused (as `pipeline.benchmark.plugin_code.build` refuses one)."""
    raise ConfigError("benchmark.dataset.path", "/nowhere.csv", "a file of texts and labels")


@pytest.mark.parametrize("workers", [1, 2])
def test_the_ground_truth_raises_a_workers_build_error_in_the_parent(workers, tmp_path):
    with pytest.raises(ConfigError) as raised:
        evaluate_shard(refuse, Space(("brightness", "pixelate"), 2), tmp_path / "store.sqlite", "f",
                       workers=workers, progress=False)
    assert str(raised.value) == "benchmark.dataset.path: '/nowhere.csv' — a file of texts and labels"


def test_the_error_line_is_its_own_after_a_progress_bar_it_interrupts(capsys):
    from tqdm import tqdm

    from pipeline.stages.runner import fail

    bar = tqdm(total=4, desc="ground truth shard 0/1")
    bar.update(1)
    with pytest.raises(SystemExit) as exit_:
        fail(ConfigError("benchmark.dataset.path", "/nowhere.csv", "a file of texts and labels"))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and bar.disable  # closed
    assert err.endswith("\nerror: benchmark.dataset.path: '/nowhere.csv' — a file of texts and labels\n"), repr(err)
