"""The `perturb` stage: T_θ of a benchmark materialised once into the perturbation store, then read by the
ground truth (of any model, any shard). On `benchmark=tiny` (3^2 configurations): the store holds every
non-identity θ (or those of its order bound), a warm ground truth perturbs nothing (0 transform
applications), and its table is byte-identical to the one computed without a store. The first `perturb`
runs as its own process, as a user runs it; the other stages run in this process (`run_stage` with the
script's argv: the same configuration, exit status and output, without a process's seconds of imports)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.in_process import stage_here
from tests.scripts.test_submitit import config, overrides, script


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    from scripts import prepare

    folder = tmp_path_factory.mktemp("prepared")
    prepare.main(config(folder))
    return folder


@pytest.fixture
def here(monkeypatch, capsys):
    """`here(name, folder, *extra)`: `script(name, folder, *extra)` in this process, as a finished process."""
    def run(name: str, folder: Path, *extra: str) -> subprocess.CompletedProcess:
        return stage_here(name, [*extra, *overrides(folder)], monkeypatch, capsys)

    return run


@pytest.fixture
def run_dir(prepared: Path, tmp_path: Path) -> Path:
    """A fresh folder holding the prepared tiny benchmark (and nothing else)."""
    shutil.copytree(prepared / "data", tmp_path / "data")
    return tmp_path


def _stats(done) -> dict:
    return next(json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"configurations"'))


def test_perturb_then_groundtruth_reads_the_store(run_dir: Path, here):
    done = script("perturb", run_dir)  # as its own process
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((run_dir / "outputs/perturb/tiny.json").read_text())
    assert manifest["enabled"] and manifest["configurations"] == 3**2 - 1          # every θ but the identity
    store = run_dir / "data/cache/perturb" / manifest["digest"]
    assert len(list((store / "chunks").glob("*.chunk"))) == 3                      # one chunk per θ_1
    assert manifest["size_bytes"] == sum(p.stat().st_size for p in (store / "chunks").glob("*.chunk"))

    warm = here("groundtruth", run_dir)
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert _stats(warm)["applications"] == 0                                         # everything came from the store
    table = (run_dir / "outputs/groundtruth/tiny.parquet").read_bytes()

    shutil.rmtree(run_dir / "data/cache")                                            # no resume store, no perturbation store
    cold = here("groundtruth", run_dir, "benchmark.store.enabled=false")
    assert cold.returncode == 0, cold.stderr[-2000:]
    assert _stats(cold)["applications"] > 0 and not (run_dir / "data/cache/perturb").exists()
    assert (run_dir / "outputs/groundtruth/tiny.parquet").read_bytes() == table


def test_a_bounded_store_holds_the_low_orders_only(run_dir: Path, here):
    done = here("perturb", run_dir, "benchmark.store.max_order=1")
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((run_dir / "outputs/perturb/tiny.json").read_text())
    assert manifest["configurations"] == 2 * 2                                        # one dimension active, levels 1-2
    gt = here("groundtruth", run_dir, "benchmark.store.max_order=1")
    assert gt.returncode == 0 and _stats(gt)["applications"] > 0                      # order 2 is computed in memory
    bad = here("perturb", run_dir, "benchmark.store.max_order=3")
    assert bad.returncode == 2 and "benchmark.store.max_order: 3 — a number in [0, 2]" in bad.stderr
