"""`prepare`, `groundtruth`, `search`, `search_summary` on benchmark=tiny with the default search methods, as a
user runs them (issue 28): the 3^2 lattice is evaluated long before B = 45 proposals, and every method that is
not single-pass (Optuna's NSGA-II among them) still spends the whole budget, so the summary accepts its traces.
The fast tier searches one fidelity metric (kid), the slow tier both of benchmark=tiny's (ssim, kid): the
evolutionary methods' variation on a lattice of 9 configurations takes seconds a run."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.config.search import seeds_of
from pipeline.search.registry import method_class
from tests.in_process import run_or_fail

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("metrics", [pytest.param(["search.metrics=[kid]"], id="kid"),
                                     pytest.param([], marks=pytest.mark.slow, id="ssim-kid")])
def test_the_tiny_sequence_runs_to_the_summary_with_the_default_methods(metrics, tmp_path, monkeypatch, capsys):
    from pipeline.stages.runner import compose_job
    from pipeline.stages.search_inputs import metrics_of

    args = ["benchmark=tiny", "suite=[]", f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs", "workers=1",
            "model.epochs=1", "benchmark.features.epochs=1", "search.seeds=1", *metrics]
    for script in ("prepare", "groundtruth", "search", "search_summary"):
        run_or_fail(script, args, monkeypatch, capsys)
    cfg = compose_job(args)
    assert metrics_of(cfg) == (["kid"] if metrics else ["ssim", "kid"])
    out = tmp_path / "outputs"
    runs = pd.read_csv(out / "search_summary/runs.csv")
    assert sorted(runs["method"].unique()) == sorted(cfg.search.methods)  # the defaults, none left out
    assert len(runs) == len(metrics_of(cfg)) * sum(seeds_of(cfg.search, m) for m in cfg.search.methods)
    for method in cfg.search.methods:
        trace = pd.read_parquet(out / "search/tiny/kid" / method / "seed=0.parquet")
        assert len(trace) == (9 if method_class(method).single_pass else 45), method  # B = 5 · |Θ|
        if method == "optuna_nsga2":  # Θ exhausted early; every proposal after it a cache hit that spends B
            assert trace["u"].iloc[-1] == 9 and int(trace["u"].eq(9).idxmax()) < 44
    assert "Optuna NSGA-II" in (out / "search_summary/table2.md").read_text()
