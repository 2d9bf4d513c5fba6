"""A comparison of two models (`pipeline.assess.compare`): from Python and from the shell, the verdict, the gate,
the saved suite, and Δ against independent oracles (the two models' own exhaustive runs, a direct forward pass of
both on the perturbed inputs, the normal approximation, and the error rate under the null by simulation).

The models are the test's own, written the way a user writes one."""
from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.assess.test_assess import WORDS, KeywordModel, ManyReviews

ROOT = Path(__file__).resolve().parents[2]
SPACE = dict(perturbations=["typo", "punctuation"], fidelity=["chrf"], levels=4)


class CommaKeywords:
    """KeywordModel that also needs the comma after the word: right on every clean review, broken by punctuation."""

    def predict_proba(self, texts):
        positive = np.array([any(f"{w}," in t for w in WORDS[:3]) for t in texts])
        return np.where(positive[:, None], [[0.8, 0.2]], [[0.3, 0.7]])


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    from pipeline.assess import compare

    folder = tmp_path_factory.mktemp("compare")
    kwargs = dict(**SPACE, outputs=folder / "out", data_root=folder / "data", executor="serial", say=lambda s: None)
    return compare(KeywordModel(), CommaKeywords(), ManyReviews(), name="pair", **kwargs), folder, kwargs


def test_delta_is_the_difference_of_the_two_models_exhaustive_ground_truths(compared):
    """Oracle: each model's own exhaustive run. Δ = (ψ_B(D) − ψ_B(θ)) − (ψ_A(D) − ψ_A(θ)) exactly, inside its interval."""
    from pipeline.assess import assess

    result, folder, kwargs = compared
    truth = {}
    for name, model in (("a", KeywordModel()), ("b", CommaKeywords())):
        run = assess(model, ManyReviews(), name=f"truth-{name}", exhaustive=True, stop_at_recall=None, **kwargs)
        truth[name] = run.groundtruth.set_index(["typo", "punctuation"])["psi"], run.summary["clean_score"]
    table = result.regressions.set_index(["typo", "punctuation"])
    expected = (truth["b"][1] - truth["b"][0]) - (truth["a"][1] - truth["a"][0])
    np.testing.assert_allclose(table["Delta"], expected.loc[table.index], atol=1e-12)
    assert ((table["Delta_lo"] <= expected.loc[table.index] + 1e-12) & (expected.loc[table.index] <= table["Delta_hi"] + 1e-12)).all()
    assert len(table) >= SPACE["levels"] * 2 - 1  # the identity and every singleton, at least


def test_discordant_counts_and_verdicts_match_a_direct_forward_pass(compared):
    """Oracle: both models on T_θ(D) composed here; B is significantly worse where punctuation strips its commas."""
    from pipeline.perturb.compose import compose
    from pipeline.perturb.registry import get_perturbation

    result, _, _ = compared
    texts, labels = ManyReviews().test_set()
    perturbations = [get_perturbation(p) for p in SPACE["perturbations"]]
    for _, r in result.regressions.iterrows():
        perturbed = compose(perturbations, texts, (int(r["typo"]), int(r["punctuation"])), 0)
        a = KeywordModel().predict_proba(perturbed).argmax(1) == labels
        b = CommaKeywords().predict_proba(perturbed).argmax(1) == labels
        assert (r["a_only"], r["b_only"]) == (int((a & ~b).sum()), int((~a & b).sum()))
    worse = result.regressions[result.regressions["verdict"] == "worse"]
    assert len(worse) and (worse["punctuation"] > 0).all() and (worse["band_lo"] > 0).all()
    assert result.regression and result.summary["verdict"]["line"].startswith("REGRESSION: B is worse")
    assert result.summary["significant"]["worse"] == len(worse)


def test_the_comparison_writes_its_files_and_page_where_the_user_is(compared):
    result, folder, _ = compared
    out = folder / "out" / "runs" / "pair"
    assert sorted(p.name for p in out.iterdir()) == ["chrf.trace.parquet", "figures", "front.csv", "index.html",
                                                      "regressions.csv", "summary.json"]
    assert sorted(p.name for p in (out / "figures").iterdir()) == ["fronts.png", "progress.png", "regressions.png"]
    documented = (ROOT / "docs" / "outputs.md").read_text().split("## A comparison of two models")[1].split("\n## ")[0]
    for p in [*out.iterdir(), *(out / "figures").iterdir()]:  # docs/outputs.md names every file a comparison writes
        assert f"`{p.name.replace('chrf.', '<metric>.')}{'/' if p.is_dir() else ''}`" in documented, p.name
    pd.testing.assert_frame_equal(pd.read_csv(out / "regressions.csv"), result.regressions, check_dtype=False)
    summary = json.loads((out / "summary.json").read_text())
    cost = summary["model_evaluations"]
    assert cost["baseline"] == cost["model"] and cost["both"] == 2 * cost["model"] and 0 < cost["model"] <= 16 * 120
    page = (out / "index.html").read_text()
    assert html.escape(summary["verdict"]["line"], quote=False) in page and "A says" in page
    assert "<ins>" in page or "<del>" in page  # the gallery's texts with their edits marked
    singletons = result.regressions[result.regressions["order"] == 1]
    assert len(singletons) == 2 * (SPACE["levels"] - 1)  # every perturbation alone, evaluated up front


def test_the_same_model_against_itself_gives_no_regression(compared):
    from pipeline.assess import assert_no_regression, compare

    _, folder, kwargs = compared
    same = compare(KeywordModel(), KeywordModel(), ManyReviews(), name="same", **kwargs)
    assert (same.regressions["Delta"] == 0).all() and (same.regressions["verdict"] == "tie").all()
    assert not same.regression and same.summary["verdict"]["line"].startswith("no regression")
    assert assert_no_regression(same).startswith("no regression")
    assert assert_no_regression(folder / "out" / "runs" / "same").startswith("no regression")


def test_the_pytest_helper_fails_on_a_regression_and_follows_its_floor_and_tolerance(compared):
    from pipeline.assess import assert_no_regression

    result, folder, _ = compared
    with pytest.raises(AssertionError, match="^REGRESSION: B is worse"):
        assert_no_regression(result)
    with pytest.raises(AssertionError, match="^REGRESSION"):
        assert_no_regression(folder / "out" / "runs" / "pair")
    assert assert_no_regression(result, min_fidelity=101.0).startswith("no regression: none of 0")  # nothing in scope
    assert assert_no_regression(result, tolerance=1.0).startswith("no regression")  # Δ ≤ 1 always


def test_a_replay_evaluates_exactly_the_saved_configurations(compared):
    """A saved suite: the earlier comparison's front and regressions, on a new model B, and no search."""
    from pipeline.assess import compare

    result, folder, kwargs = compared
    saved = {tuple(r) for r in pd.concat([pd.read_csv(folder / "out" / "runs" / "pair" / f)[["typo", "punctuation"]]
                                          for f in ("front.csv", "regressions.csv")]).to_numpy()}
    replay = compare(KeywordModel(), KeywordModel(), ManyReviews(), name="replay", replay=str(folder / "out" / "runs" / "pair"), **kwargs)
    assert {tuple(r) for r in replay.regressions[["typo", "punctuation"]].to_numpy()} == saved
    assert replay.traces == {} and replay.summary["configurations_evaluated"] == len(saved)
    assert replay.summary["model_evaluations"]["model"] == len(saved) * 120  # no rivals in a single round: all completed


def test_without_racing_every_proposal_is_completed_with_the_same_delta(compared):
    from pipeline.assess import compare

    result, _, kwargs = compared
    full = compare(KeywordModel(), CommaKeywords(), ManyReviews(), name="full", racing=False, **kwargs)
    s = full.summary
    assert not s["racing"] and s["configurations_completed"] == s["configurations_evaluated"]
    assert s["model_evaluations"]["model"] == s["configurations_evaluated"] * 120
    both = full.regressions.merge(result.regressions, on=["typo", "punctuation"], suffixes=("", "_raced"))
    assert len(both) == len(result.regressions)
    np.testing.assert_array_equal(both["Delta"], both["Delta_raced"])


def test_bad_comparison_settings_are_refused_in_one_line(tmp_path):
    from pipeline.assess import compare
    from pipeline.config.errors import ConfigError

    kwargs = dict(**SPACE, outputs=tmp_path / "out", data_root=tmp_path / "data", executor="serial", say=lambda s: None)
    with pytest.raises(ConfigError, match=r"^assess.fail_on: 'always' — null or regression"):
        compare(KeywordModel(), CommaKeywords(), ManyReviews(), name="x", fail_on="always", **kwargs)
    with pytest.raises(ConfigError, match=r"^assess.level: 1.5 — a confidence"):
        compare(KeywordModel(), CommaKeywords(), ManyReviews(), name="x", level=1.5, **kwargs)
    with pytest.raises(ConfigError, match=r"^assess.replay: .* the folder of an earlier run"):
        compare(KeywordModel(), CommaKeywords(), ManyReviews(), name="x", replay=str(tmp_path), **kwargs)
    with pytest.raises(ConfigError, match=r"^baseline._target_: .*predict_proba\(\) or predict\(\)"):
        compare(object(), CommaKeywords(), ManyReviews(), name="x", **kwargs)
    assert not (tmp_path / "out" / "runs").exists()


def exchangeable(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes of two equally good models: both right on 72% of the inputs, both wrong on 18%, and on the 10% where
    they disagree either one is right with equal chance."""
    u = rng.random(shape)
    both, split = u < 0.72, (u >= 0.90)
    a = both | (split & (u < 0.95))
    b = both | (split & (u >= 0.95))
    return a, b


def test_the_bands_hold_the_family_wise_error_under_the_null():
    """Oracle: simulation. A and B exchangeable (each input's discordance a fair coin): over 300 data sets of 20
    configurations the chance that any is called worse or better stays near 1 − level, and the marginal interval
    matches the normal approximation Δ ± 1.96·sd/√n at large n."""
    from pipeline.assess.regressions import regression_table

    rng = np.random.default_rng(7)
    n, m, wrong = 200, 20, 0
    for _ in range(300):
        a, b = exchangeable(rng, (m, n))
        table = regression_table(a, b, np.ones(n), np.ones(n), resamples=400, seed=int(rng.integers(1 << 30)))
        wrong += (table["verdict"] != "tie").any()
    assert wrong / 300 <= 0.09  # 0.05 nominal; the binomial sd of 300 draws is 0.013
    a, b = exchangeable(rng, (1, 4000))
    table = regression_table(a, b, np.ones(4000), np.ones(4000), resamples=4000)
    d = (1.0 - b[0]) - (1.0 - a[0])
    half = 1.96 * d.std() / np.sqrt(4000)
    assert abs(table["Delta_lo"][0] - (d.mean() - half)) < 0.15 * half and abs(table["Delta_hi"][0] - (d.mean() + half)) < 0.15 * half


EXTERNAL = '''import numpy as np


class Constant:
    """Always class 0: never changes its answer, so it loses nothing under any perturbation."""

    def __init__(self, num_classes):
        self.num_classes = num_classes

    def predict_proba(self, images):
        return np.eye(self.num_classes)[np.zeros(len(images), dtype=int)]


class Lookup:
    """Right on exactly the clean test images (looked up by their bytes), class 0 on anything else."""

    def __init__(self, num_classes, data_dir):
        with np.load(f"{data_dir}/splits.npz") as z:
            self.known = {x.tobytes(): int(y) for x, y in zip(z["test_x"], z["test_y"])}
        self.num_classes = num_classes

    def predict_proba(self, images):
        return np.eye(self.num_classes)[[self.known.get(x.tobytes(), 0) for x in images]]
'''


def test_the_shell_gate_exits_with_the_verdict(tmp_path):
    """`scripts/assess.py ... model@baseline=<model> assess.fail_on=regression`: exit 1 and the one-line verdict when
    B regresses (a lookup table of the clean images against a constant), exit 0 for a model against itself."""
    (tmp_path / "user_pkg").mkdir()
    (tmp_path / "user_pkg" / "__init__.py").write_text("")
    (tmp_path / "user_pkg" / "models.py").write_text(EXTERNAL)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    common = [sys.executable, str(ROOT / "scripts" / "assess.py"), "benchmark=tiny", "fidelity=[ssim]", "workers=1",
              "model@baseline=external", "baseline._target_=user_pkg.models.Constant", "+baseline.num_classes=10",
              "model=external", "+model.num_classes=10", "assess.fail_on=regression"]
    worse = subprocess.run([*common, "run=worse", "model._target_=user_pkg.models.Lookup"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
    assert worse.returncode == 1, worse.stderr
    assert worse.stdout.strip().splitlines()[-1].startswith("REGRESSION: B is worse than the baseline at ")
    summary = json.loads((tmp_path / "outputs" / "runs" / "worse" / "summary.json").read_text())
    assert summary["clean_accuracy"]["model"] == 1.0 and summary["model"] == "external (_target_=user_pkg.models.Lookup)" and summary["verdict"]["regression"]
    same = subprocess.run([*common, "run=same", "model._target_=user_pkg.models.Constant"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert same.returncode == 0, same.stderr
    assert same.stdout.strip().splitlines()[-1].startswith("no regression: none of 9 configurations")
    assert not (ROOT / "outputs" / "runs" / "worse").exists()
