"""A user's own fuzz adapter, from a package outside the repository, by config alone: the campaign runs on
it, its source keys the resume store, and one that lacks `evaluate_fn` is one line, exit 2, nothing written.
The first campaign runs as its own process (the package found on PYTHONPATH); the reruns and the refusals run in
this process (`run_stage` with the script's argv, the package on sys.path), the adapter without `evaluate_fn`
also as its own process in the slow tier (a broken plug-in as a process in the fast one:
tests/scripts/test_external_plugin.py::test_a_broken_plug_in_is_one_line_exit_2_and_nothing_written)."""
import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pipeline.fuzz import StructuralFuzzReport
from tests.in_process import forgetting, stage_here

ROOT = Path(__file__).resolve().parents[2]

ADAPTER = '''
import numpy as np


class Bowl:
    """Error sum_i w_i (log θ_i)^2 + 0.1 [θ_0 > 1.5]: inactive θ = 1 costs nothing."""

    dim_names = ("a", "b", "c")
    inactive_value = 1.0
    candidate_values = (0.5, 2.0)
    error_name = "bowl error"
    target_names = ("jump",)

    def __init__(self, weights=(1.0, 2.0, 3.0)):
        self.w = np.asarray(weights, dtype=float)

    def evaluate_fn(self, params):
        params = np.asarray(params, dtype=float)
        jump = float(params[0] > 1.5)
        return float(self.w @ np.log(params) ** 2) + 0.1 * jump, {"jump": jump}


class NoEvaluate:
    dim_names = ("a",)
'''

SMALL = ("n_mri_perturbations=20", "n_adversarial_steps=6", "n_coarse=3", "n_frontier_perturbations=5", "directional=false",
         "adversarial_tolerance=0.5")


@pytest.fixture()
def user(tmp_path: Path) -> Path:
    (tmp_path / "my_fuzz").mkdir()
    (tmp_path / "my_fuzz" / "__init__.py").write_text("")
    (tmp_path / "my_fuzz" / "adapters.py").write_text(textwrap.dedent(ADAPTER))
    return tmp_path


def overrides(user: Path, target: str, *extra: str) -> list[str]:
    return ["+fuzz/adapters@fuzz.adapters.mine=external", "fuzz.adapter=mine", f"fuzz.adapters.mine._target_={target}",
            "fuzz.progress=false", *(f"fuzz.adapters.mine.{o}" for o in SMALL), *extra,
            f"paths.data={user}/data", f"paths.outputs={user}/outputs"]


def fuzz(user: Path, target: str, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(user), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return subprocess.run([sys.executable, "scripts/fuzz.py", *overrides(user, target, *extra)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def fuzz_here(user: Path, monkeypatch, capsys):
    """`fuzz_here(target, *extra)`: `fuzz(user, target, *extra)` in this process, as a finished process."""
    def run(target: str, *extra: str) -> subprocess.CompletedProcess:
        monkeypatch.syspath_prepend(str(user))
        return stage_here("fuzz", overrides(user, target, *extra), monkeypatch, capsys, forgetting("my_fuzz"))

    return run


def brute_force(weights=(1.0, 2.0, 3.0)) -> dict[tuple[float, ...], float]:
    """The Bowl's error at every configuration of the subset enumeration: each non-empty subset of the three
    dimensions active at every combination of the candidate values, the rest at 1."""
    w, out = np.asarray(weights), {}
    for k in (1, 2, 3):
        for dims in itertools.combinations(range(3), k):
            for values in itertools.product((0.5, 2.0), repeat=k):
                theta = np.ones(3)
                theta[list(dims)] = values
                out[tuple(theta)] = float(w @ np.log(theta) ** 2) + 0.1 * float(theta[0] > 1.5)
    return out


def test_a_users_adapter_runs_the_campaign_and_its_source_keys_the_store(user, fuzz_here):
    done = fuzz(user, "my_fuzz.adapters.Bowl", "+fuzz.adapters.mine.weights=[1.0,2.0,3.0]")  # as its own process
    assert done.returncode == 0, done.stderr
    out = user / "outputs" / "fuzz" / "mine"
    report = StructuralFuzzReport.from_json((out / "report.json").read_text())
    assert report.dim_names == ["a", "b", "c"] and report.error_name == "bowl error"
    truth = brute_force()
    assert len(report.subset_results) == 7  # every subset: the best configuration of each (2^3 - 1)
    for r in report.subset_results:
        assert r.mae == pytest.approx(truth[tuple(r.param_values)])
        active = [v for i, v in enumerate(r.param_values) if i in r.dims]
        best = min(v for t, v in truth.items() if all((t[i] != 1.0) == (i in r.dims) for i in range(3)))
        assert r.mae == pytest.approx(best) and all(v != 1.0 for v in active)
    assert json.loads((out / "metrics.json").read_text())["adapter"] == "mine"

    first = (out / "report.json").read_bytes()
    again = fuzz_here("my_fuzz.adapters.Bowl", "+fuzz.adapters.mine.weights=[1.0,2.0,3.0]")
    assert again.returncode == 0 and (out / "report.json").read_bytes() == first  # resumed: the same report
    source = user / "my_fuzz" / "adapters.py"
    source.write_text(source.read_text().replace("+ 0.1 * jump", "+ 0.2 * jump"))  # the user edits their adapter
    edited = fuzz_here("my_fuzz.adapters.Bowl", "+fuzz.adapters.mine.weights=[1.0,2.0,3.0]")
    assert edited.returncode == 0, edited.stderr
    jumped = [r for r in StructuralFuzzReport.from_json((out / "report.json").read_text()).subset_results if r.param_values[0] > 1.5]
    assert all(r.mae == pytest.approx(truth[tuple(r.param_values)] + 0.1) for r in jumped)  # recomputed, not resumed


@pytest.mark.parametrize("where", ["here", pytest.param("process", marks=pytest.mark.slow)])
def test_an_adapter_without_evaluate_fn_is_one_line_exit_2_and_nothing_written(user, where, fuzz_here):
    done = fuzz(user, "my_fuzz.adapters.NoEvaluate") if where == "process" else fuzz_here("my_fuzz.adapters.NoEvaluate")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "fuzz.adapters.mine._target_" in done.stderr and "evaluate_fn" in done.stderr
    assert not (user / "outputs").exists() and not (user / "data").exists()


def test_a_plug_in_entry_without_target_is_refused_with_the_choices(fuzz_here):
    done = fuzz_here("my_fuzz.adapters.Bowl", "+fuzz.adapters.other.scale=2")
    assert done.returncode == 2
    assert "fuzz.adapters.other" in done.stderr and "geometric, weights, severity" in done.stderr
