"""A user's run (`pipeline.assess`): from objects in Python and from the shell, to the run's files and page.

The models here are the test's own (a keyword text classifier, a brightness-bucket image classifier), built
the way a user writes one; the oracles are a direct forward pass (the clean score) and brute force over the
exhaustive table (the front)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.front.pareto import pareto_mask

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["good", "fine", "great", "bad", "poor", "awful"]


class KeywordModel:
    """Positive (class 0) when the text holds one of the first three words, else negative."""

    def predict_proba(self, texts):
        positive = np.array([any(w in t for w in WORDS[:3]) for t in texts])
        return np.where(positive[:, None], [[0.8, 0.2]], [[0.3, 0.7]])


class Reviews:
    def test_set(self):
        texts = [f"the film was {WORDS[i % 6]} and the cast was {WORDS[(i * 5) % 6]}, review {i}." for i in range(36)]
        labels = np.array([0 if i % 6 < 3 else 1 for i in range(36)])
        return texts, labels


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from pipeline.assess import assess

    folder = tmp_path_factory.mktemp("assess")
    lines: list[str] = []
    result = assess(KeywordModel(), Reviews(), perturbations=["typo", "punctuation"], fidelity=["chrf"], name="reviews",
                    levels=4, outputs=folder / "out", data_root=folder / "data", executor="serial", exhaustive=True,
                    say=lines.append)
    return result, folder, lines


def test_clean_score_is_a_direct_forward_pass(run):
    result, _, _ = run
    texts, labels = Reviews().test_set()
    direct = float(np.mean(KeywordModel().predict_proba(texts).argmax(1) == labels))
    assert result.summary["clean_score"] == direct
    assert result.summary["n_inputs"] == 36 and result.summary["space_size"] == 16


def test_front_is_the_non_dominated_set_of_what_the_search_evaluated(run):
    result, folder, _ = run
    table = result.groundtruth
    evaluated = result.ranked["chrf"]
    keys = ["typo", "punctuation"]
    values = table.set_index(keys).loc[[tuple(r) for r in evaluated[keys].to_numpy()]]
    brute = {tuple(t) for t, on in zip(values.index, pareto_mask(values[["delta", "rho_chrf"]].to_numpy())) if on}
    front = pd.read_csv(folder / "out" / "runs" / "reviews" / "front.csv")
    assert {tuple(r) for r in front[keys].to_numpy()} == brute
    # front.csv carries the values the exhaustive table holds for the same θ
    merged = front.merge(table, on=keys, suffixes=("", "_gt"))
    np.testing.assert_allclose(merged["delta"], merged["delta_gt"])
    np.testing.assert_allclose(merged["rho_chrf"], merged["rho_chrf_gt"])
    truth = table[table["pareto_chrf"]]
    e = result.summary["exhaustive"]["chrf"]
    assert e["pareto"] == len(truth) and e["found"] == len(brute & {tuple(r) for r in truth[keys].to_numpy()})


def test_the_run_writes_its_files_and_page_and_nothing_else(run):
    result, folder, lines = run
    out = folder / "out" / "runs" / "reviews"
    assert {p.name for p in out.iterdir()} >= {"index.html", "front.csv", "summary.json", "chrf.trace.parquet",
                                             "chrf.ranked.parquet", "groundtruth.parquet", "figures"}
    assert {p.name for p in (out / "figures").iterdir()} == {"fronts.png", "alone.png", "progress.png"}
    assert [p.name for p in (folder / "out").iterdir()] == ["runs"]
    documented = (ROOT / "docs" / "outputs.md").read_text().split("## A user's run")[1]
    for p in out.iterdir():  # docs/outputs.md names every file the run writes
        assert f"`{p.name.replace('chrf.', '<metric>.')}{'/' if p.is_dir() else ''}`" in documented, p.name
    assert all(f"`{p.name}`" in documented for p in (out / "figures").iterdir())
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model_evaluations"] == summary["configurations_evaluated"] * 36
    page = (out / "index.html").read_text()
    assert "where the model breaks" in page and f"{summary['clean_score']:.4f}" in page
    assert f"{summary['metrics']['chrf']['front']} configurations on the front" in page
    assert "http://" not in page and "https://" not in page  # offline: every image inlined
    assert any(line.startswith("chrf: round   1") for line in lines)  # a line per round
    assert lines[-1].endswith(str(out / "index.html"))


def test_a_rerun_computes_nothing_again(run):
    from pipeline.assess import assess

    result, folder, _ = run
    again = assess(KeywordModel(), Reviews(), perturbations=["typo", "punctuation"], fidelity=["chrf"], name="reviews",
                   levels=4, outputs=folder / "out", data_root=folder / "data", executor="serial", say=lambda s: None)
    assert again.summary["computed_now"] == 0
    pd.testing.assert_frame_equal(again.front, result.front)


def test_a_bad_name_or_setting_is_refused_in_one_line(tmp_path):
    from pipeline.assess import assess
    from pipeline.config.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^run: 'my run' — a name"):
        assess(KeywordModel(), Reviews(), perturbations=["typo"], fidelity=["chrf"], name="my run", outputs=tmp_path)
    with pytest.raises(ConfigError, match=r"^batchsize: 4 — a setting of pipeline.assess.Settings"):
        assess(KeywordModel(), Reviews(), perturbations=["typo"], fidelity=["chrf"], name="r", outputs=tmp_path, batchsize=4)
    with pytest.raises(ConfigError, match=r"^model._target_: .*predict_proba\(\) or predict\(\)"):
        assess(object(), Reviews(), perturbations=["typo"], fidelity=["chrf"], name="r", outputs=tmp_path)
    assert not (tmp_path / "runs").exists()


MODEL = '''import numpy as np


class Brightness:
    def __init__(self, num_classes):
        self.num_classes = num_classes

    def predict_proba(self, images):
        mean = images.reshape(len(images), -1).mean(axis=1) / 255.0
        classes = np.minimum((mean * 3 * self.num_classes).astype(int), self.num_classes - 1)
        return np.eye(self.num_classes)[classes]
'''


def test_the_script_runs_a_users_plugin_into_its_run_folder(tmp_path, monkeypatch, capsys):
    """The run as its own process (the plug-in found on PYTHONPATH); the refusal of a run without a name in this
    process (`run_stage` with the script's argv: the same exit status and line)."""
    (tmp_path / "user_pkg").mkdir()
    (tmp_path / "user_pkg" / "__init__.py").write_text("")
    (tmp_path / "user_pkg" / "models.py").write_text(MODEL)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "assess.py"), "run=bright", "benchmark=tiny", "model=external",
                           "model._target_=user_pkg.models.Brightness", "+model.num_classes=10", "fidelity=[ssim]", "workers=1",
                           "paths.outputs=out"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out" / "runs" / "bright"  # where the user started it, not the tool's tree
    assert not (ROOT / "outputs" / "runs" / "bright").exists() and not (ROOT / "data" / "runs" / "bright").exists()
    assert (tmp_path / "data" / "runs" / "bright").is_dir()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["model"] == "user_pkg.models.Brightness" and summary["space_size"] == 9
    assert any(s.endswith("user_pkg/models.py") for s in summary["sources"])
    assert f"page: {out / 'index.html'}" in done.stdout and (out / "index.html").exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["runs"]
    from pipeline.stages.runner import run_stage
    from scripts import assess as script

    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / "assess.py"), "benchmark=tiny", f"paths.outputs={tmp_path}/o2"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        run_stage(script.main)
    assert refused.value.code == 2 and capsys.readouterr().err.strip().splitlines() == [
        "error: run: null — a name for the run's folders (outputs/runs/<name>/), e.g. run=my-model"]
    assert not (tmp_path / "o2").exists()


def test_the_scripts_settings_are_the_assess_node_built_by_hydra():
    """scripts/assess.py builds `Settings` by `instantiate` of the `assess` node: the keys it reads from search.live by
    interpolation follow their overrides, and a value `Settings` refuses is that key's one-line error."""
    from pipeline.assess import Settings
    from pipeline.config import validate_config
    from pipeline.config.errors import ConfigError
    from pipeline.stages.runner import compose_job
    from scripts.assess import settings_of_config

    cfg = validate_config(compose_job(["search.live.batch_size=8", "search.live.budget=40", "assess.method=random",
                                       "workers=0", "assess.exhaustive=true", "seed=3"]))
    settings = settings_of_config(cfg.assess)
    assert type(settings) is Settings
    assert (settings.method, settings.batch_size, settings.budget, settings.exhaustive, settings.seed) == ("random", 8, 40, True, 3)
    assert settings.workers == len(os.sched_getaffinity(0))  # 0: every core
    assert settings.submitit == {"timeout_min": 60} and type(settings.submitit) is dict
    assert settings_of_config(validate_config(compose_job([])).assess).method == "pnd"  # search.recommended
    with pytest.raises(ConfigError, match=r"^assess.level: 1.5 — a confidence strictly between 0 and 1"):
        settings_of_config(validate_config(compose_job(["assess.level=1.5"])).assess)


def test_front_members_carry_their_membership_probability(run):
    from pipeline.front.membership import bootstrap_membership

    result, folder, _ = run
    front = pd.read_csv(folder / "out" / "runs" / "reviews" / "front.csv")
    assert ((front["pi"] >= 0.95) == (front["set"] == "core")).all()
    assert (front["delta_lo"] <= front["delta"] + 1e-12).all() and (front["delta"] <= front["delta_hi"] + 1e-12).all()
    assert result.summary["metrics"]["chrf"]["front_in_core"] == int((front["set"] == "core").sum())
    # the same bootstrap on outcomes recomputed here from the model itself (chrF is a corpus statistic: held fixed)
    from pipeline.perturb.compose import compose
    from pipeline.perturb.registry import get_perturbation

    texts, labels = Reviews().test_set()
    families = [get_perturbation(p) for p in ("typo", "punctuation")]
    evaluated = result.ranked["chrf"].sort_values("b")
    thetas = [tuple(int(v) for v in r) for r in evaluated[["typo", "punctuation"]].to_numpy()]
    outcomes = np.array([KeywordModel().predict_proba(compose(families, texts, t, 0)).argmax(1) == labels for t in thetas], float)
    clean = (KeywordModel().predict_proba(texts).argmax(1) == labels).astype(float)
    expected = bootstrap_membership(outcomes, clean, evaluated["rho"].to_numpy(), strata=labels, B=1000, seed=0)
    pis = dict(zip(thetas, expected["pi"]))
    assert [pis[(int(a), int(b))] for a, b in front[["typo", "punctuation"]].to_numpy()] == front["pi"].tolist()


def test_the_live_search_estimates_its_recall_of_the_core(run):
    """GP-PND reads the per-input outcomes of what it evaluated (the run's model, accuracy): its trace, progress lines
    and summary carry est_core, the estimate its stopping rule reads."""
    result, _, lines = run
    trace = result.traces["chrf"]
    assert trace["est_core"].notna().any() and trace["est_core"].dropna().between(0, 1).all()
    assert result.summary["metrics"]["chrf"]["est_core"] == float(trace["est_core"].iloc[-1])
    assert any("est_core" in line for line in lines)


class ManyReviews:
    def test_set(self):
        texts = [f"the film was {WORDS[i % 6]}, review {i}." for i in range(120)]  # one keyword: typos break it
        labels = np.array([0 if i % 6 < 3 else 1 for i in range(120)])
        return texts, labels


def test_a_run_races_over_the_inputs_and_reports_what_it_saved(tmp_path):
    """By default a run races (accuracy): configurations a completed one dominates with confidence stop early. The
    summary counts distinct (configuration, input) evaluations, what full evaluation would have cost and the saving;
    every front member was completed and carries its exact values (the exhaustive table's); a rerun computes
    nothing, and a run without racing pays n a configuration."""
    from pipeline.assess import assess

    kwargs = dict(perturbations=["typo", "punctuation"], fidelity=["chrf"], levels=4, outputs=tmp_path / "out",
                  data_root=tmp_path / "data", executor="serial", say=lambda s: None, stop_at_recall=None)
    raced = assess(KeywordModel(), ManyReviews(), name="raced", exhaustive=True, **kwargs)
    s, trace = raced.summary, raced.traces["chrf"]
    assert s["racing"] and s["saved_by_racing"] > 0
    assert s["model_evaluations"] == trace["evaluations"].iloc[-1] == s["full_evaluation_cost"] - s["saved_by_racing"]
    assert s["share_of_exhaustive"] == s["model_evaluations"] / (16 * 120)
    assert (trace.loc[trace["inputs"] < 120, "is_new"]).all() and (trace["inputs"] < 120).any()
    table = raced.groundtruth.set_index(["typo", "punctuation"])
    front = raced.front
    assert len(front) and all(trace.loc[(trace["typo"] == a) & (trace["punctuation"] == b), "inputs"].iloc[0] == 120
                              for a, b in front[["typo", "punctuation"]].to_numpy())
    np.testing.assert_allclose(front["delta"], table.loc[[tuple(r) for r in front[["typo", "punctuation"]].to_numpy()], "delta"])
    page = (tmp_path / "out" / "runs" / "raced" / "index.html").read_text()
    assert f"{s['saved_by_racing']:,} model evaluations saved" in page
    again = assess(KeywordModel(), ManyReviews(), name="raced", **kwargs)
    assert again.summary["computed_now"] == 0 and again.summary["model_evaluations"] == s["model_evaluations"]
    full = assess(KeywordModel(), ManyReviews(), name="full", racing=False, **kwargs)
    assert not full.summary["racing"] and full.summary["model_evaluations"] == full.summary["configurations_evaluated"] * 120
