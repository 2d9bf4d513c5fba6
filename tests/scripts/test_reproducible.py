"""Same bits whatever the machine's numerical environment: the stages pin it themselves (slow tier)."""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.runtime.numerics import PINNED

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("data/tiny/model.pt", "data/tiny/features.pt", "data/tiny/splits.npz", "outputs/groundtruth/tiny.parquet",
           "outputs/groundtruth/tiny.summary.json", "outputs/groundtruth/tiny.gallery.npz", "outputs/prepare/tiny.json")


def _run_stages(folder: Path, env: dict[str, str], workers: int) -> dict[str, str]:
    common = ["benchmark=tiny", f"paths.data={folder}/data", f"paths.outputs={folder}/outputs", f"hydra.run.dir={folder}/hydra",
              f"workers={workers}"]
    for script in ("prepare", "groundtruth"):
        subprocess.run([sys.executable, f"scripts/{script}.py", *common], cwd=ROOT, env=env, check=True, capture_output=True)
    return {f: hashlib.md5((folder / f).read_bytes()).hexdigest() for f in CHECKED}


@pytest.mark.slow
def test_training_and_ground_truth_are_identical_under_other_numerics(tmp_path):
    fresh_shell = {k: v for k, v in os.environ.items() if k not in PINNED and k != "ROBUSTNESS_PINNED"}
    other = dict(fresh_shell, ONEDNN_MAX_CPU_ISA="AVX512_CORE_AMX", ATEN_CPU_CAPABILITY="avx512", MKL_CBWR="AUTO",
                 OMP_NUM_THREADS="2", MKL_NUM_THREADS="2", NPY_DISABLE_CPU_FEATURES="", OPENBLAS_CORETYPE="Sandybridge")
    a = _run_stages(tmp_path / "a", fresh_shell, workers=1)
    b = _run_stages(tmp_path / "b", other, workers=2)
    assert a == b
