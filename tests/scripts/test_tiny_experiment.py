"""`dvc exp run -S benchmark=tiny -S suite=[] -S paired=tiny -S paired_suite=[]` runs every stage to the end, from a fresh clone (slow tier)."""
import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_dvc_exp_run_on_the_tiny_benchmark(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(["dvc", "exp", "run", "-S", "benchmark=tiny", "-S", "suite=[]", "-S", "paired=tiny", "-S", "paired_suite=[]"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=3000)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = clone / "outputs"
    assert len(pd.read_parquet(out / "groundtruth/tiny.parquet")) == 9
    assert json.loads((out / "tune/choice.json").read_text())["pairs_tuned"] == ["tiny/ssim", "tiny/kid"]
    assert "tiny" in (out / "search_summary/table2.md").read_text()
    for adapter in ("geometric", "weights", "severity"):
        assert (out / "figures/fuzz" / adapter / "omega.png").stat().st_size > 5000
