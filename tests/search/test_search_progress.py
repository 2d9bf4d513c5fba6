"""Table-mode search over worker processes: one progress bar over the runs, to its end, and no joblib
warning. Workers used to import Optuna and torch inside their first `optuna_nsga2` run, after joblib's
memory reference, and were restarted as leaking ("A worker stopped while some jobs were given to the executor")."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipeline.front.space import Space
from tests.search.search_fixtures import synthetic_table

ROOT = Path(__file__).resolve().parents[2]


def test_table_mode_shows_one_bar_over_the_runs_and_no_worker_restart(tmp_path):
    (tmp_path / "outputs/groundtruth").mkdir(parents=True)
    synthetic_table(Space(("brightness", "pixelate"), 3)).to_parquet(tmp_path / "outputs/groundtruth/tiny.parquet", index=False)
    methods = "[random,optuna_nsga2,coverage]"  # light runs first in each worker, then Optuna's, then light ones again
    done = subprocess.run([sys.executable, "scripts/search.py", "benchmark=tiny", f"paths.data={tmp_path}/data",
                           f"paths.outputs={tmp_path}/outputs", "workers=2", f"search.methods={methods}", "search.seeds=2",
                           "search.table2_methods=[random]", "search.fig3_methods=[random]", "search.fig4_methods=[random]"],
                          check=False, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "worker stopped" not in done.stderr and "Warning" not in done.stderr, done.stderr
    bars = [line for line in done.stderr.replace("\r", "\n").splitlines() if line.strip()]
    assert bars and all(line.startswith("search tiny: ") for line in bars), bars  # nothing but the bar
    assert "100%" in bars[-1] and "14/14" in bars[-1], bars[-1]  # 2 metrics × (2 + 3 + 2) runs, every one counted
    assert len(list((tmp_path / "outputs/search/tiny").glob("*/*/seed=*.parquet"))) == 14
