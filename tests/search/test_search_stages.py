"""The search stage scripts end to end on a synthetic ground-truth table: search (table and live mode,
resume), search_summary, plot_recall, tune; and the conf/search group's composition."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys

import matplotlib.image as plt_image
import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.front.pareto import pareto_mask
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table
from tests.synthetic import make_benchmark

ROOT = importlib.import_module("pipeline.stages.layout").ROOT


def stage(name: str):
    module = importlib.import_module(f"scripts.{name}")
    assert module.__file__.endswith(f"scripts/{name}.py")
    return module


def config(tmp_path, names=NAMES4, levels=3, fidelity=("ssim", "kid")):
    search = OmegaConf.load(ROOT / "conf" / "search" / "default.yaml")
    search.seeds, search.mu, search.budget_factor = 2, 8, 2
    search.methods = ["testnav", "greedy", "ga", "random", "delta_only", "rho_only"]
    search.tune.update(eta_c=[1, 15], eta_m=[5], mu=[6], seeds=2)
    return OmegaConf.create({
        "benchmark": {"name": "syn", "perturbations": list(names), "levels": levels}, "fidelity": list(fidelity),
        "model": {"name": "synthetic", "kind": "synthetic"}, "report": {"count_identity": False},
        "paths": {"data": str(tmp_path / "data"), "outputs": str(tmp_path / "out")}, "workers": 1, "device": "cpu", "seed": 0, "search": search,
    })


@pytest.fixture
def cfg(tmp_path):
    cfg = config(tmp_path)
    table = synthetic_table(Space(NAMES4, 3))
    (tmp_path / "out" / "groundtruth").mkdir(parents=True)
    table.to_parquet(tmp_path / "out" / "groundtruth" / "syn.parquet")
    return cfg


def test_search_writes_one_trace_per_run_and_resumes(cfg, tmp_path, capsys):
    cfg.search.methods = ["testnav", "greedy", "random"]
    stage("search").main(cfg)
    traces = sorted((tmp_path / "out" / "search" / "syn").glob("*/*/seed=*.parquet"))
    assert len(traces) == 2 * 3 * 2  # metrics x methods x seeds
    t = pd.read_parquet(tmp_path / "out" / "search" / "syn" / "kid" / "testnav" / "seed=1.parquet")
    assert len(t) == 2 * 81 and list(t.columns[:5]) == ["b", *NAMES4]
    assert "12 of 12 runs to do" in capsys.readouterr().out
    traces[0].unlink()  # as DVC does before it reruns a stage: the resume store still has the run
    stage("search").main(cfg)
    assert "0 of 12 runs to do" in capsys.readouterr().out and traces[0].exists()
    cfg.search.mu = 6  # a changed hyperparameter redoes the runs it affects, and only those
    stage("search").main(cfg)
    assert "4 of 12 runs to do" in capsys.readouterr().out
    assert not pd.read_parquet(tmp_path / "out" / "search" / "syn" / "kid" / "testnav" / "seed=1.parquet").equals(t)


def test_search_rejects_a_stale_table_and_bad_mode(cfg):
    cfg.benchmark.levels = 4
    with pytest.raises(ValueError, match="rerun groundtruth"):
        stage("search").main(cfg)
    cfg.search.mode = "replay"
    with pytest.raises(ValueError, match="valid choices: table, live"):
        stage("search").main(cfg)


def test_summary_and_figures_from_traces(cfg, tmp_path):
    path = tmp_path / "out" / "groundtruth" / "syn.parquet"
    table = pd.read_parquet(path)
    # a core for ssim (as a table with per-input outcomes has): the members of P* of order ≤ 2
    table["set_ssim"] = np.where(table["pareto_ssim"] & (table["order"] <= 2), "core", np.where(table["pareto_ssim"], "plausible", "out"))
    table.to_parquet(path)
    core = Space(NAMES4, 3).indices(table.loc[table["set_ssim"] == "core", list(NAMES4)].to_numpy())
    stage("search").main(cfg)
    stage("search_summary").main(cfg)
    out = tmp_path / "out" / "search_summary"
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 24 and runs["auc"].between(0, 1).all()
    t2 = pd.read_csv(out / "table2.csv", keep_default_na=False)
    assert set(t2["method"]) == {"testnav", "greedy", "ga", "random"} and (t2["mark"] == "best").groupby(t2["metric"]).sum().min() >= 1
    assert "**" in (out / "table2.md").read_text()
    recovery = pd.read_csv(out / "recovery.csv")
    assert len(recovery) == 12 and (recovery["seeds"] == 2).all()
    rnd = recovery[recovery["method"] == "random"]
    assert (rnd["reached"] == 2).all() and (rnd["final_recall_mean"] == 1.0).all()  # B = 2|Θ|: Random visits all of Θ
    mine = runs[(runs["method"] == "random") & (runs["metric"] == "ssim")]["u_full"]
    assert rnd[rnd["metric"] == "ssim"]["u_full_pct"].item() == pytest.approx(100 * mine.mean() / 81)
    mono = pd.read_csv(out / "monotonicity.csv")
    assert set(mono["metric"]) == {"ssim", "kid"} and set(mono["dimension"]) >= {"all", *NAMES4}
    assert mono["delta_monotone"].between(0, 1).all()
    t3 = pd.read_csv(out / "table3.csv")
    table = pd.read_parquet(tmp_path / "out" / "groundtruth" / "syn.parquet")
    for metric in ("ssim", "kid"):
        front = table[table[f"pareto_{metric}"]]
        row = t3[t3["metric"] == metric].iloc[0]
        assert row["size"] == (front["order"] > 0).sum() and "order_0" not in t3.columns
        assert [row[f"order_{k}"] for k in range(1, 5)] == [(front["order"] == k).sum() for k in range(1, 5)]
    for (metric, method, seed), run in runs.set_index(["metric", "method", "seed"]).iterrows():  # u to the whole core
        if metric == "kid":
            assert np.isnan(run["u_core"])  # no core for kid in this table
            continue
        trace = pd.read_parquet(tmp_path / "out" / "search" / "syn" / metric / method / f"seed={seed}.parquet")
        new = trace[trace["is_new"]]  # each configuration once: the core is complete at its last member's u
        hit = np.flatnonzero(np.isin(Space(NAMES4, 3).indices(new[list(NAMES4)].to_numpy()), core))
        if len(hit) == len(core):
            assert run["u_core"] == new["u"].iloc[hit[-1]]
        else:
            assert np.isnan(run["u_core"])
    assert "Median u to the core" in (out / "recovery.md").read_text()
    assert recovery.loc[recovery["metric"] == "ssim", "core_reached"].notna().all()
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["syn"]) == {"ssim", "kid"} and "auc_mean" in metrics["syn"]["ssim"]["testnav"]
    stage("plot_recall").main(cfg)
    for name, columns in (("search_recall.png", 2), ("search_single_objective.png", 2), ("search_recall_core.png", 1)):
        height, width, _ = plt_image.imread(tmp_path / "out" / "figures" / name).shape
        assert (width > height) == (columns == 2)  # two columns (ssim, kid) of two rows; the core's: ssim only


def live_stage(tmp_path, monkeypatch, bench, **live):
    """The search stage in live mode (serial) on `bench`, a synthetic benchmark over a 3^2 lattice evaluated in this
    process, with `search.live` settings `live`: (its config, the stage module)."""
    from pipeline.benchmark import ground_truth as groundtruth, live_evaluation

    cfg = config(tmp_path, names=("noise", "shift"), levels=3, fidelity=("negmse",))
    cfg.search.mode = "live"
    cfg.search.live.update(executor="serial", **live)
    search = stage("search")
    monkeypatch.setattr(live_evaluation, "cached", lambda key, factory: bench)
    monkeypatch.setattr(groundtruth, "table_fingerprint", lambda spec, assets: "synthetic")  # its spec names no data set
    monkeypatch.setattr(search, "check_plugins", lambda spec: None)  # the config's model is not the one evaluated
    return cfg, search


def test_live_mode_writes_trace_and_ranking(tmp_path, monkeypatch):
    bench = make_benchmark(levels=3)
    calls = []

    def evaluate(theta):
        calls.append(theta)
        return type(bench).evaluate(bench, theta)

    monkeypatch.setattr(bench, "evaluate", evaluate)
    cfg, search = live_stage(tmp_path, monkeypatch, bench, methods=["testnav", "greedy"], budget=20)
    search.main(cfg)
    assert len(calls) == len(set(calls)) <= 9  # every configuration evaluated at most once across both methods
    calls.clear()
    search.main(cfg)
    assert calls == []  # a second run finds every evaluation in the live resume store
    base = tmp_path / "out" / "search_live" / "syn" / "negmse"
    trace = pd.read_parquet(base / "testnav" / "seed=0.trace.parquet")
    ranked = pd.read_parquet(base / "testnav" / "seed=0.ranked.parquet")
    assert len(trace) == 20 and len(ranked) == trace["is_new"].sum()
    front = ranked[["delta", "rho"]].to_numpy()
    assert set(ranked.index[ranked["rank"] == 0]) == set(ranked.index[pareto_mask(front)])
    assert (base / "greedy" / "seed=0.ranked.parquet").exists()


class Killed(Exception):
    """Stands in for a kill: raised by the benchmark in the middle of a run."""


def test_live_mode_resumes_an_interrupted_run_with_the_uninterrupted_trace(tmp_path, monkeypatch, capsys):
    """GP-PND's rounds of q = 4: a run stopped inside its second round keeps the first round's evaluations in the
    live resume store; the rerun computes only the rest, and its trace is the one of a run never stopped. (The same
    through submitit jobs, the first run killed as a real process: tests/scripts/test_submitit.py, slow tier.)"""
    bench = make_benchmark(levels=3)
    calls, stop = [], {"after": 6}

    def evaluate(theta):
        if len(calls) == stop["after"]:
            raise Killed
        calls.append(theta)
        return type(bench).evaluate(bench, theta)

    monkeypatch.setattr(bench, "evaluate", evaluate)
    cfg, search = live_stage(tmp_path, monkeypatch, bench, methods=["pnd"], batch_size=4)
    with pytest.raises(Killed):
        search.main(cfg)
    stop["after"] = None
    capsys.readouterr()
    search.main(cfg)
    (run,) = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"metric"')]
    assert run["method"] == "pnd" and run["computed_now"] == run["evaluated"] - 4, run  # the first round came from the store
    path = tmp_path / "out" / "search_live" / "syn" / "negmse" / "pnd" / "seed=0.trace.parquet"
    trace = pd.read_parquet(path)
    sizes = trace[trace["is_new"]].groupby("round").size()
    assert sizes.index.tolist() == list(range(1, len(sizes) + 1)) and sizes.tolist()[:2] == [4, 4]  # 8 of 9 in two rounds of q
    (tmp_path / "data" / "cache" / "store" / "search_live" / "syn.sqlite").unlink()
    search.main(cfg)  # from scratch
    timings = ["seconds_perturb", "seconds_infer", "seconds_fidelity"]  # measured anew by each run: not compared
    pd.testing.assert_frame_equal(pd.read_parquet(path).drop(columns=timings), trace.drop(columns=timings))  # the resumed run is the uninterrupted one
    assert (pd.read_parquet(path).loc[lambda t: t["is_new"], "seconds_infer"] > 0).all()  # every evaluation timed


def test_tune_selects_a_setting_and_reuses_cells(cfg, tmp_path, capsys):
    tune = stage("tune")
    tune.main(cfg)
    out = tmp_path / "out" / "tune"
    choice = json.loads((out / "choice.json").read_text())
    assert choice["eta_c"] in (1, 15) and choice["mu"] == 6 and choice["pairs"] == 2 and choice["pairs_tuned"] == ["syn/ssim", "syn/kid"]
    grid = pd.read_csv(out / "grid.csv")
    assert len(grid) == 2 and grid["selected"].sum() == 1
    assert len(pd.read_parquet(out / "grid.parquet")) == 2 * 2 * 2  # settings x pairs x seeds
    assert "0 of 2 grid cells done; 8 runs to do" in capsys.readouterr().out
    tune.main(cfg)
    assert "2 of 2 grid cells done; 0 runs to do" in capsys.readouterr().out
    cfg.search.tune.seeds = 1
    tune.main(cfg)
    assert "0 of 2 grid cells done; 4 runs to do" in capsys.readouterr().out


def compose(overrides):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        extra = [] if "search" in hydra_compose(config_name="config") else ["+search=default"]  # until config.yaml lists the group
        return hydra_compose(config_name="config", overrides=[*extra, *overrides])


def test_conf_search_group_composes_under_search():
    from pipeline.config import validate_config

    cfg = validate_config(compose(["search.eta_c=15", "search.tune.seeds=3"]))  # μ derived for 6^4: the paper's 110
    assert cfg.search.eta_c == 15 and cfg.search.eta_m == 5 and cfg.search.mu == 110 and cfg.search.budget_factor == 5
    assert cfg.search.tune.seeds == 3 and list(cfg.search.tune.mu) == [20, 50, 80, 110]


@pytest.mark.slow
def test_tune_as_a_hydra_multirun_sweep(tmp_path):
    """Each sweep job stores its own grid cell; a plain run afterwards merges them and selects."""
    space = Space(("brightness", "pixelate"), 3)
    (tmp_path / "groundtruth").mkdir()
    synthetic_table(space).to_parquet(tmp_path / "groundtruth" / "tiny.parquet")
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        extra = [] if "search" in hydra_compose(config_name="config") else ["+search=default"]
    common = ["benchmark=tiny", *extra, f"paths.outputs={tmp_path}", f"paths.data={tmp_path}/data", "workers=1", "search.budget_factor=2", "search.tune.seeds=2",
              "search.tune.eta_c=[1,15]", "search.tune.eta_m=[5]", "search.tune.mu=[4]"]
    sweep = [sys.executable, "scripts/tune.py", "-m", "hydra/launcher=joblib", f"hydra.sweep.dir={tmp_path}/sweep",
             "search.eta_c=1,15", "search.eta_m=5", "search.mu=4", *common]
    subprocess.run(sweep, cwd=ROOT, check=True, capture_output=True)
    done = subprocess.run([sys.executable, "scripts/tune.py", f"hydra.run.dir={tmp_path}/run", *common], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    assert "2 of 2 grid cells done" in done.stdout
    assert json.loads((tmp_path / "tune" / "choice.json").read_text())["mu"] == 4


def test_search_reads_the_groundtruth_stage_table_format():
    """The table written by pipeline.benchmark.ground_truth (raw evaluation -> finalize) is what search consumes."""
    from pipeline.benchmark.ground_truth import finalize, raw_table
    from pipeline.search import run_metrics, run_search
    from pipeline.search.ground_truth import GroundTruth, table_metrics, table_space

    bench = make_benchmark(levels=3)
    raw = raw_table(bench.space, {theta: values for theta, values in bench.evaluate_many([tuple(t) for t in bench.space.grid().tolist()])})
    table = finalize(raw, ["negmse", "negmax"])
    assert table_space(table) == bench.space and table_metrics(table) == ["negmse", "negmax"]
    p = GroundTruth.from_table(table, "synthetic", "negmax")
    trace = run_search("random", p.oracle, p.space, 9, seed=0)
    assert run_metrics(trace, p.pareto, p.space)["final_recall"] == 1.0
    np_delta = table.set_index(list(bench.space.names)).loc[(2, 1), ["delta_norm", "rho_negmax_norm"]].to_numpy(dtype=float)
    assert p.oracle((2, 1)) == tuple(np_delta)
