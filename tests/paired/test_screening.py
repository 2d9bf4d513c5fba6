"""Screening library (Section 5, Appendix E): metrics against brute force, split hygiene of the scores,
resampling, identity ablation, U prefixes, TTA18 and the A3Rank adaptation (Eq. 12)."""
from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from pipeline.paired.identification.thresholds import coverage_rank
from pipeline.paired.records.table import validate_records
from pipeline.paired.records.tiers import condition_tiers
from pipeline.paired.screening.metrics import (
    auroc,
    budget_size,
    cell_metrics,
    coverage_ceiling,
    coverage_of_ceiling,
    evaluate_cells,
    failure_coverage,
    paired_cells,
    summarize_cells,
)
from pipeline.paired.screening.probes import a3rank, modal_class, probe_average
from pipeline.paired.screening.resampling import class_bootstrap, group_bootstrap
from pipeline.paired.screening.scores import (
    SCORES,
    apply_screening,
    average_draws,
    condition_matrix,
    derange_within_classes,
    fit_screening,
    identity_controls,
    image_features,
    image_scores,
    random_derangement,
    u_prefix,
)
from pipeline.perturb.tta import TTA18, rotate, tta18, tta_transform


# --------------------------------------------------------------------------------------------------
# brute-force references
# --------------------------------------------------------------------------------------------------
def _auroc_pairs(risk, failed) -> float:
    pos, neg = risk[failed], risk[~failed]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    return float(np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg]))


def _coverage_orders(risk, failed, qs) -> np.ndarray:
    """Per budget, the mean over every tie-breaking order (each permutation of the images as the secondary
    sort key) of the share of failures among the top k = max(1, floor(q n + 1/2)) images."""
    n = len(risk)
    ks = [max(1, math.floor(q * n + 0.5)) for q in np.atleast_1d(qs)]
    found = np.zeros(len(ks))
    orders = 0
    for perm in itertools.permutations(range(n)):
        order = np.lexsort((np.array(perm), -np.asarray(risk)))
        cum = np.cumsum(failed[order])
        found += [cum[k - 1] for k in ks]
        orders += 1
    return found / orders / failed.sum()


def _small_cells(rng, count, n_max=7):
    for _ in range(count):
        n = int(rng.integers(1, n_max + 1))
        yield rng.integers(0, 3, n).astype(float), rng.random(n) < 0.5


# --------------------------------------------------------------------------------------------------
# AUROC, coverage, ceilings
# --------------------------------------------------------------------------------------------------
def test_auroc_hand_examples():
    assert auroc([3, 2, 1], [True, False, False]) == 1.0
    assert auroc([1, 2, 3], [True, False, False]) == 0.0
    # failures {2, 1}, non-failures {2, 0}: pairs (2>2 tie .5, 2>0 1, 1<2 0, 1>0 1) -> 2.5 / 4
    assert auroc([2, 1, 2, 0], [1, 1, 0, 0]) == 0.625
    assert math.isnan(auroc([1, 2], [True, True]))
    assert math.isnan(auroc([1, 2], [False, False]))


def test_auroc_matches_pairs_and_sklearn():
    rng = np.random.default_rng(1)
    for risk, failed in _small_cells(rng, 300, n_max=12):
        expected = _auroc_pairs(risk, failed)
        got = auroc(risk, failed)
        if math.isnan(expected):
            assert math.isnan(got)
            continue
        assert got == pytest.approx(expected, abs=1e-12)
        assert got == pytest.approx(roc_auc_score(failed, risk), abs=1e-12)


def test_coverage_hand_example_with_cut_tie():
    # q n = 0.4 * 5 = 2: image 0 (failed) and one of three tied images (one failed): 1 + 1/3 of 3 failures.
    risk, failed = np.array([3, 2, 2, 2, 1.0]), np.array([1, 1, 0, 0, 1], bool)
    assert failure_coverage(risk, failed, 0.4) == pytest.approx(4 / 9)
    assert _coverage_orders(risk, failed, 0.4)[0] == pytest.approx(4 / 9)
    assert failure_coverage(risk, failed, 0.2) == pytest.approx(1 / 3)        # k = 1: image 0 only
    assert failure_coverage(risk, failed, 1.0) == 1.0
    assert math.isnan(failure_coverage(risk, np.zeros(5, bool), 0.2))


def test_coverage_matches_every_tie_breaking_order():
    rng = np.random.default_rng(2)
    qs = (0.1, 0.2, 0.3, 0.5)
    for risk, failed in _small_cells(rng, 120):
        got = [failure_coverage(risk, failed, q) for q in qs]
        if not failed.any():
            assert np.isnan(got).all()
            continue
        np.testing.assert_allclose(got, _coverage_orders(risk, failed, qs), atol=1e-12)


def test_budget_rounds_halves_up_like_thresholds():
    assert budget_size(25, 0.1) == 3                     # 2.5 -> 3 (Python's round(2.5) == 2)
    assert budget_size(5, 0.1) == 1 and budget_size(4, 0.1) == 1     # 0.5 -> 1; 0.4 -> 0 -> at least 1
    for n in range(1, 400):
        for q in (0.1, 0.2, 0.3):
            assert budget_size(n, q) == coverage_rank(q, n)
    # 25 images with strictly decreasing risk: k = 3 finds the three failures at ranks 1, 2, 3
    risk, failed = -np.arange(25.0), np.zeros(25, bool)
    failed[[0, 1, 2, 10]] = True
    assert failure_coverage(risk, failed, 0.1) == 0.75


def test_ceiling_and_fraction_of_ceiling():
    assert coverage_ceiling(10, 3, 0.2) == pytest.approx(2 / 3)   # k = 2
    assert coverage_ceiling(10, 3, 0.3) == 1.0                    # k = 3
    assert coverage_ceiling(10, 1, 0.05) == 1.0                   # k = max(1, round(.5)) = 1
    assert math.isnan(coverage_ceiling(10, 0, 0.2))
    risk, failed = np.array([5, 4, 3, 2, 1.0]), np.array([0, 1, 1, 1, 0], bool)
    assert coverage_of_ceiling(risk, failed, 0.4) == pytest.approx((1 / 3) / (2 / 3))
    # a perfect ranking attains the ceiling; random ranking (all tied) covers k/n, i.e. p of the ceiling
    assert coverage_of_ceiling(-np.arange(5.0), failed[[1, 2, 3, 0, 4]], 0.4) == 1.0
    assert coverage_of_ceiling(np.zeros(5), failed, 0.4) == pytest.approx(failed.mean())


def test_weighted_metrics_equal_the_expanded_multiset():
    rng = np.random.default_rng(3)
    for risk, failed in _small_cells(rng, 80, n_max=9):
        w = rng.integers(0, 4, size=(3, len(risk)))
        m = cell_metrics(risk, failed, w, budgets=(0.2, 0.5))
        for b in range(3):
            r, f = np.repeat(risk, w[b]), np.repeat(failed, w[b])
            ref_auc = _auroc_pairs(r, f) if len(r) else float("nan")
            np.testing.assert_allclose(m["auroc"][b], ref_auc, atol=1e-12)
            for i, q in enumerate((0.2, 0.5)):
                ref = failure_coverage(r, f, q) if f.any() else float("nan")
                np.testing.assert_allclose(m["coverage"][b, i], ref, atol=1e-12)
    with pytest.raises(ValueError, match="NaN"):
        auroc([np.nan, 1], [True, False])


# --------------------------------------------------------------------------------------------------
# record fixtures
# --------------------------------------------------------------------------------------------------
def _records(rng, conditions, model="m1", group="g1", n_classes=6, per_class=5, n_dev=3, clean_wrong=(2, 9),
             base=None, harsh=None) -> pd.DataFrame:
    """One model's record table: per class n_dev dev and the rest eval images; images in `clean_wrong` are
    predicted wrong on the clean side. `base` (image -> failure tendency) makes real outcomes follow U;
    `harsh` (condition -> added failure probability) makes conditions of different tiers."""
    rows = []
    for i in range(n_classes * per_class):
        y = i // per_class
        split = "dev" if i % per_class < n_dev else "eval"
        wrong = i in clean_wrong
        clean_p = float(rng.uniform(0.3, 0.6)) if wrong else float(rng.uniform(0.5, 1.0))
        frail = rng.uniform(0, 1) if base is None else base[i]
        for cond in conditions:
            bad = rng.random() < frail + (harsh or {}).get(cond, 0.0)
            pert_true = float(rng.uniform(0.05, 0.4)) if bad else float(rng.uniform(0.5, 1.0))
            rows.append({"model": model, "group": group, "condition": cond, "image_id": f"img{i:02d}",
                         "split": split, "y": y, "clean_pred": (y + 1) % n_classes if wrong else y,
                         "clean_maxprob": clean_p if not wrong else 0.7, "clean_trueprob": clean_p,
                         "pert_pred": (y + 2) % n_classes if bad else y,
                         "pert_maxprob": 0.9 if bad else pert_true, "pert_trueprob": pert_true})
    return pd.DataFrame(rows)


SYN = [f"syn{c}" for c in range(4)]
REAL = ["es1", "es2", "es3"]
HARSH = {"es1": -0.25, "es2": 0.1, "es3": 0.45}           # mild, severe and extreme development accuracy


@pytest.fixture
def tables():
    rng = np.random.default_rng(4)
    frail = rng.uniform(0, 1, 30)
    syn = _records(rng, SYN, base=frail)
    real = _records(np.random.default_rng(5), REAL, base=frail, harsh=HARSH)
    real[["clean_pred", "clean_maxprob", "clean_trueprob"]] = (
        syn.drop_duplicates("image_id").set_index("image_id").loc[real["image_id"],
                                                                   ["clean_pred", "clean_maxprob", "clean_trueprob"]]
        .to_numpy())
    real["clean_pred"] = real["clean_pred"].astype(np.int64)
    validate_records(syn, 6)
    validate_records(real, 6)
    return syn, real


# --------------------------------------------------------------------------------------------------
# scores and split hygiene
# --------------------------------------------------------------------------------------------------
def test_image_features_from_own_records(tables):
    syn, _ = tables
    feats = image_features(syn).set_index("image_id")
    one = syn[syn["image_id"] == "img07"]
    assert feats.loc["img07", "U"] == pytest.approx(one["pert_trueprob"].mean())
    assert feats.loc["img07", "ret"] == pytest.approx((one["pert_pred"] == one["y"]).mean())
    assert feats.loc["img07", "S"] == one["clean_maxprob"].iloc[0]
    with pytest.raises(ValueError, match="synthetic conditions"):
        image_features(syn.iloc[1:])


def test_scores_orientation_and_eval_rows_only(tables):
    syn, real = tables
    scores = image_scores(syn, real)
    feats = image_features(syn).set_index("image_id")
    expected_ids = feats.index[(feats["split"] == "eval") & feats["clean_correct"]]
    assert sorted(scores["image_id"]) == sorted(expected_ids)
    assert set(scores["split"]) == {"eval"}
    assert not set(scores["image_id"]) & set(feats.index[feats["split"] == "dev"])
    np.testing.assert_allclose(scores["neg_S"], -scores["S"])
    np.testing.assert_allclose(scores["delta"], scores["S"] - scores["U"])
    np.testing.assert_allclose(scores["neg_ret"], -scores["ret"])
    dev = feats[feats["split"] == "dev"]
    class_mean = (dev["M"] - dev["U"]).groupby(dev["y"]).mean()
    np.testing.assert_allclose(scores["class_delta"], class_mean.loc[scores["y"]].to_numpy())
    assert np.isfinite(scores[list(SCORES)].to_numpy(float)).all()
    with pytest.raises(ValueError, match="fitted on"):
        apply_screening(fit_screening(image_features(syn), real, "dev"), image_features(syn), "dev")


def test_g_is_fitted_on_dev_rows_with_the_stated_recipe(tables):
    from sklearn.linear_model import LogisticRegression
    syn, real = tables
    feats = image_features(syn)
    fit = fit_screening(feats, real)
    dev_cc = feats[(feats["split"] == "dev") & feats["clean_correct"]]
    rows = real[real["split"] == "dev"].merge(dev_cc[["image_id", "S", "U", "ret"]], on="image_id")
    x = rows[["S", "U"]].to_numpy()
    z = (x - x.mean(0)) / x.std(0)
    ref = LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000).fit(z, rows["pert_pred"] != rows["y"])
    g = fit.predictors["g_SU"]
    np.testing.assert_allclose(g.coef, ref.coef_[0], rtol=1e-3)
    assert fit.n_rows == len(rows) == len(dev_cc) * len(REAL)


def test_dev_values_reach_eval_scores_only_through_the_fit(tables):
    syn, real = tables
    base = image_scores(syn, real).set_index("image_id")
    syn2, real2 = syn.copy(), real.copy()
    dev_syn, dev_real = syn2["split"] == "dev", real2["split"] == "dev"
    syn2.loc[dev_syn, "pert_trueprob"] = syn2.loc[dev_syn, "pert_trueprob"] * 0.5
    real2.loc[dev_real, "pert_pred"] = real2.loc[dev_real, "y"]                  # dev never fails
    real2.loc[dev_real & (real2["image_id"] < "img10"), "pert_pred"] = 5          # ...except a few
    moved = image_scores(syn2, real2).set_index("image_id")
    own = ["S", "U", "ret", "neg_S", "neg_U", "delta", "neg_ret"]
    pd.testing.assert_frame_equal(moved[own], base[own])
    for col in ("class_delta", "neg_class_U_all", "g_SU"):
        assert not np.allclose(moved[col], base[col])
    # eval-split real outcomes never enter any score
    real3 = real.copy()
    ev = real3["split"] == "eval"
    real3.loc[ev, "pert_pred"] = real3.loc[ev, "y"]
    pd.testing.assert_frame_equal(image_scores(syn, real3).set_index("image_id"), base)
    # an eval image's synthetic values move its own image-level scores only
    syn4 = syn.copy()
    syn4.loc[syn4["image_id"] == "img04", "pert_trueprob"] *= 0.5
    moved4 = image_scores(syn4, real).set_index("image_id")
    changed = (moved4[own] != base[own]).any(axis=1)
    assert list(changed.index[changed]) == ["img04"]
    fixed = ["class_delta", "neg_class_U_all", "neg_class_U_cc"]
    pd.testing.assert_frame_equal(moved4[fixed], base[fixed])


def test_split_disagreement_between_tables_raises(tables):
    syn, real = tables
    real2 = real.copy()
    real2.loc[real2["image_id"] == "img04", "split"] = "dev"
    with pytest.raises(ValueError, match="different splits"):
        image_scores(syn, real2)


def test_swapped_roles_score_dev_images(tables):
    syn, real = tables
    scores = image_scores(syn, real, fit_split="eval", score_split="dev")
    assert set(scores["split"]) == {"dev"} and len(scores) == 17       # 18 dev images, img02 clean-wrong


# --------------------------------------------------------------------------------------------------
# cells, tiers, summaries
# --------------------------------------------------------------------------------------------------
def test_evaluate_cells_against_direct_computation(tables):
    syn, real = tables
    scores = image_scores(syn, real)
    tiers = condition_tiers(real)
    cells = evaluate_cells(scores, real, ["neg_S", "neg_U"], tiers, source="ES")
    assert len(cells) == 2 * len(REAL)
    row = cells[(cells["condition"] == "es2") & (cells["score"] == "neg_U")].iloc[0]
    cell = real[(real["condition"] == "es2") & (real["split"] == "eval") & (real["clean_pred"] == real["y"])]
    merged = cell.merge(scores, on="image_id")
    failed = (merged["pert_pred"] != merged["y_x"]).to_numpy()
    assert row["n"] == len(merged) == 11 and row["n_fail"] == failed.sum()
    assert row["auroc"] == pytest.approx(auroc(merged["neg_U"], failed))
    assert row["coverage_0.2"] == pytest.approx(failure_coverage(merged["neg_U"], failed, 0.2))
    assert row["ceiling_0.2"] == pytest.approx(coverage_ceiling(11, failed.sum(), 0.2))
    assert row["p"] == pytest.approx(failed.mean())
    summary = summarize_cells(cells)
    assert set(summary["score"]) == {"neg_S", "neg_U"}
    diff = paired_cells(cells, "neg_U", "neg_S")
    assert len(diff) == len(REAL)
    with pytest.raises(ValueError, match="no score"):
        evaluate_cells(scores.iloc[1:], real, ["neg_S"])


def test_undefined_cells_are_counted_and_common_sets_shared(tables):
    syn, real = tables
    scores = image_scores(syn, real)
    real2 = real.copy()
    real2.loc[real2["condition"] == "es1", "pert_pred"] = real2.loc[real2["condition"] == "es1", "y"]
    scores["partial"] = scores["neg_U"].where(scores["y"] != 0)          # class 0 has no value
    cells = evaluate_cells(scores, real2, ["neg_U", "partial"])
    es1 = cells[cells["condition"] == "es1"]
    assert es1["auroc"].isna().all() and es1["coverage_0.2"].isna().all()
    summary = summarize_cells(cells)
    assert (summary["undefined"] == 1).all() and (summary["cells"] == 2).all()
    other = cells[cells["condition"] == "es2"]
    assert other["n"].nunique() == 1 and other["n"].iloc[0] == 11 - 2     # class 0 eval images dropped for both


def test_condition_tiers_cuts():
    rows = []
    for cond, acc in (("a", 0.4), ("b", 0.39), ("c", 0.2), ("d", 0.1)):
        for model in ("m1", "m2"):
            for i in range(100):
                ok = i < acc * 100
                rows.append({"model": model, "condition": cond, "split": "dev", "y": 0, "pert_pred": 0 if ok else 1})
    tiers = condition_tiers(pd.DataFrame(rows)).set_index("condition")["tier"]
    assert tiers.to_dict() == {"a": "mild", "b": "severe", "c": "severe", "d": "extreme"}


# --------------------------------------------------------------------------------------------------
# resampling
# --------------------------------------------------------------------------------------------------
def _cell_table(rng, n_groups=10, models_per_group=3, conditions=10):
    rows = []
    for g in range(n_groups):
        for m in range(models_per_group):
            for c in range(conditions):
                for score, shift in (("neg_S", 0.0), ("neg_U", 0.05)):
                    value = rng.uniform(0.5, 0.9) + shift + 0.01 * g
                    rows.append({"source": "ES", "model": f"g{g}m{m}", "group": f"g{g}", "condition": f"c{c}",
                                 "tier": "mild" if c < 6 else "extreme", "score": score,
                                 "auroc": np.nan if (c == 9 and m == 0) else value})
    return pd.DataFrame(rows)


def test_group_bootstrap_matches_a_loop_and_is_seeded():
    cells = _cell_table(np.random.default_rng(6))
    stats = ["neg_U", ("neg_U", "neg_S")]
    table, draws = group_bootstrap(cells, "auroc", stats, np.random.default_rng(7), n_draws=50, return_draws=True)
    assert draws.shape == (50, 4) and list(table["stat"]) == ["neg_U", "neg_U", "neg_U-neg_S", "neg_U-neg_S"]
    again, draws2 = group_bootstrap(cells, "auroc", stats, np.random.default_rng(7), n_draws=50, return_draws=True)
    np.testing.assert_array_equal(draws, draws2)
    pd.testing.assert_frame_equal(table, again)
    other = group_bootstrap(cells, "auroc", stats, np.random.default_rng(8), n_draws=50)
    assert not np.allclose(other["lo"], table["lo"])
    # the same draws by a direct loop: stack the drawn groups' defined cells, take the plain mean
    groups = sorted(cells["group"].unique())
    idx = np.random.default_rng(7).integers(0, len(groups), size=(50, len(groups)))
    wide = cells.set_index(["tier", "model", "group", "condition", "score"])["auroc"].unstack("score").reset_index()
    wide["diff"] = wide["neg_U"] - wide["neg_S"]
    for b in (0, 17, 49):
        picked = pd.concat([wide[wide["group"] == groups[i]] for i in idx[b]])
        extreme = picked[picked["tier"] == "extreme"]
        assert draws[b, 0] == pytest.approx(extreme["neg_U"].mean())   # strata sorted: extreme, mild
        assert draws[b, 2] == pytest.approx(extreme["diff"].mean())
    est = table.set_index(["stat", "tier"])["estimate"]
    assert est["neg_U", "mild"] == pytest.approx(wide.loc[wide["tier"] == "mild", "neg_U"].mean())
    assert (table["lo"] < table["hi"]).all()


def test_group_bootstrap_speed():
    cells = _cell_table(np.random.default_rng(9), conditions=30)     # 900 cells x 2 scores
    start = time.perf_counter()
    table = group_bootstrap(cells, "auroc", ["neg_S", "neg_U", ("neg_U", "neg_S")], np.random.default_rng(0))
    assert time.perf_counter() - start < 5.0
    assert len(table) == 6 and table["cells"].min() > 0


def test_class_bootstrap_matches_reweighted_cells(tables):
    syn, real = tables
    scores = image_scores(syn, real)
    tiers = condition_tiers(real)
    stats = ["neg_U", ("neg_U", "neg_S")]
    table, draws = class_bootstrap(scores, real, stats, np.random.default_rng(10), tiers, "ES", n_draws=30,
                                   return_draws=True)
    n_tiers = tiers["tier"].nunique()
    assert draws.shape == (30, n_tiers * 2 * 4) and len(table) == n_tiers * 2 * 4
    again = class_bootstrap(scores, real, stats, np.random.default_rng(10), tiers, "ES", n_draws=30)
    pd.testing.assert_frame_equal(table, again)
    # point estimates are the plain cell means of evaluate_cells
    cells = evaluate_cells(scores, real, ["neg_S", "neg_U"], tiers, "ES")
    summary = summarize_cells(cells).set_index(["tier", "score"])
    t0 = min(tiers["tier"].unique())
    est = table.set_index(["tier", "stat", "metric"])["estimate"]
    assert est[t0, "neg_U", "auroc"] == pytest.approx(summary.loc[(t0, "neg_U"), "auroc"])
    # draw 0 by explicit replication of images by their class multiplicity
    classes = np.unique(real.loc[real["split"] == "eval", "y"])
    idx = np.random.default_rng(10).integers(0, len(classes), size=(30, len(classes)))
    counts = np.bincount(idx[0], minlength=len(classes))
    t_conds = tiers.loc[tiers["tier"] == t0, "condition"]
    values = []
    for cond in t_conds:
        cell = real[(real["condition"] == cond) & (real["split"] == "eval") & (real["clean_pred"] == real["y"])]
        merged = cell.merge(scores[["image_id", "neg_U"]], on="image_id")
        reps = counts[np.searchsorted(classes, merged["y"])]
        failed = np.repeat((merged["pert_pred"] != merged["y"]).to_numpy(), reps)
        value = auroc(np.repeat(merged["neg_U"].to_numpy(), reps), failed) if len(failed) else np.nan
        values.append(value)
    col = int(np.flatnonzero((table["tier"] == t0) & (table["stat"] == "neg_U") & (table["metric"] == "auroc"))[0])
    assert draws[0, col] == pytest.approx(np.nanmean(values) if np.isfinite(values).any() else np.nan, nan_ok=True)


# --------------------------------------------------------------------------------------------------
# identity ablation
# --------------------------------------------------------------------------------------------------
def test_random_derangement_properties():
    rng = np.random.default_rng(11)
    for n in (2, 3, 5, 9):
        for _ in range(50):
            p = random_derangement(n, rng)
            assert sorted(p) == list(range(n)) and (p != np.arange(n)).all()
    assert list(random_derangement(2, rng)) == [1, 0]
    with pytest.raises(ValueError):
        random_derangement(1, rng)
    # uniform over the two derangements of three elements
    seen = [tuple(random_derangement(3, rng)) for _ in range(400)]
    assert set(seen) == {(1, 2, 0), (2, 0, 1)} and 150 < seen.count((1, 2, 0)) < 250


def test_derangement_within_classes():
    labels = np.array([0, 1, 0, 2, 1, 0, 1, 1])              # class 2 is a singleton
    perm, mask = derange_within_classes(labels, np.random.default_rng(12))
    assert list(mask) == [True, True, True, False, True, True, True, True]
    assert perm[3] == 3
    assert (perm[mask] != np.flatnonzero(mask)).all()
    assert (labels[perm] == labels).all() and sorted(perm) == list(range(len(labels)))
    again, _ = derange_within_classes(labels, np.random.default_rng(12))
    np.testing.assert_array_equal(perm, again)


def test_identity_controls_and_averaging(tables):
    syn, real = tables
    scores = image_scores(syn, real)
    ctrl = identity_controls(scores, np.random.default_rng(13), n_draws=3)
    single = ctrl.groupby("y")["y"].transform("size") == 1
    for d in range(3):
        col = ctrl[f"neg_U_derange{d}"]
        assert col[single].isna().all() and col[~single].notna().all()
        assert (col[~single] != ctrl.loc[~single, "neg_U"]).all()
        same_class = ctrl[~single].groupby("y")
        for _, g in same_class:
            assert sorted(g[f"neg_U_derange{d}"]) == sorted(g["neg_U"])
    two = ctrl[ctrl["y"] == 0]                                # two eval images: LOO mean swaps them
    assert list(two["neg_U_loo"]) == list(two["neg_U"][::-1])
    names = ["neg_S", "neg_U", "neg_U_loo", *[f"neg_U_derange{d}" for d in range(3)]]
    cells = evaluate_cells(ctrl, real, names)
    assert (cells["n"] == (~single).sum()).all()
    avg = average_draws(cells, "neg_U_derange", "neg_U_derange")
    assert set(avg["score"]) == {"neg_S", "neg_U", "neg_U_loo", "neg_U_derange"}
    es2 = cells[(cells["condition"] == "es2") & cells["score"].str.startswith("neg_U_derange")]
    got = avg[(avg["condition"] == "es2") & (avg["score"] == "neg_U_derange")]["auroc"].iloc[0]
    assert got == pytest.approx(es2["auroc"].mean())


# --------------------------------------------------------------------------------------------------
# U prefixes, TTA18, A3Rank
# --------------------------------------------------------------------------------------------------
def test_u_prefix(tables):
    x = np.array([[0.9, 0.5, 0.1, 0.3], [0.2, 0.4, 0.6, 0.8]])
    np.testing.assert_allclose(u_prefix(x, 1), [0.9, 0.2])
    np.testing.assert_allclose(u_prefix(x, 2), [0.7, 0.3])
    np.testing.assert_allclose(u_prefix(x, 2, order=[3, 2, 1, 0]), [0.2, 0.7])
    with pytest.raises(ValueError):
        u_prefix(x, 5)
    syn, _ = tables
    wide = condition_matrix(syn, conditions=SYN)
    feats = image_features(syn).set_index("image_id")
    np.testing.assert_allclose(u_prefix(wide.to_numpy(), len(SYN)), feats.loc[wide.index, "U"])


def test_tta18_list_and_transforms():
    assert len(TTA18) == len(set(TTA18)) == 18
    rng = np.random.default_rng(14)
    img = rng.integers(0, 256, size=(2, 20, 50, 3)).astype(np.uint8)
    out = tta18(img)
    assert out.shape == (18, 2, 20, 50, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(tta_transform(img, "hflip"), img[:, :, ::-1])
    s = tta_transform(img, "shift_x+5")                     # 5% of 50 = 2.5 -> 3 pixels (halves up)
    np.testing.assert_array_equal(s[:, :, 3:], img[:, :, :-3])
    np.testing.assert_array_equal(s[:, :, :3], img[:, :, 2::-1])          # symmetric reflection
    s = tta_transform(img, "shift_y-5")                     # 5% of 20 = 1 pixel up
    np.testing.assert_array_equal(s[:, :-1], img[:, 1:])
    np.testing.assert_array_equal(s[:, -1], img[:, -1])
    square = rng.random((1, 9, 9, 1))
    np.testing.assert_allclose(rotate(square, 90), np.rot90(square, 1, axes=(1, 2)), atol=1e-12)
    np.testing.assert_allclose(rotate(square, 0), square, atol=1e-12)
    np.testing.assert_allclose(tta_transform(square, "gamma0.8"), square ** 0.8)
    flat = np.full((1, 8, 8, 3), 77, np.uint8)
    for name in TTA18[:15]:
        np.testing.assert_array_equal(tta_transform(flat, name), flat)   # geometry keeps a constant image
    z = tta_transform(square, "zoom1.2")
    assert z[0, 4, 4, 0] == pytest.approx(square[0, 4, 4, 0])          # the centre stays
    np.testing.assert_allclose(tta_transform(square, "hflip_zoom1.1"),
                               tta_transform(square[:, :, ::-1], "zoom1.1"))
    with pytest.raises(ValueError):
        tta_transform(img, "rot+45x")


def test_probe_average():
    np.testing.assert_allclose(probe_average([[0.2, 0.4]]), [0.3])
    np.testing.assert_allclose(probe_average([[0.2, 0.4]], [0.9]), [0.5])


def test_a3rank_hand_example():
    v0 = np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]])
    probes = np.array([
        # image 0: p = 0; votes 0:1, 1:2, 2:1 -> m = 1
        [[0.5, 0.4, 0.1], [0.2, 0.7, 0.1], [0.3, 0.6, 0.1], [0.2, 0.2, 0.6]],
        # image 1: p = 1; votes 1:2, 0:1, 2:1 -> m = 1 = p
        [[0.1, 0.8, 0.1], [0.1, 0.6, 0.3], [0.5, 0.3, 0.2], [0.1, 0.2, 0.7]],
    ])
    # image 0: v0(p) = .6; D = {a4}: .6 - .2 = .4; S = {a1}: .5 - .4 = .1;
    # G = {a2, a3}: (.2 - .7 + .3 - .6) + (.3 - .6 + .3 - .6) = -1.4  ->  .6 - .4 + .1 - 1.4 = -1.1
    # image 1: v0(p) = .7; D = {a3, a4}: (.5 - .3) + (.7 - .2) = .7; S = G, contributions 0  ->  0.0
    np.testing.assert_allclose(a3rank(v0, probes), [-1.1, 0.0], atol=1e-12)
    np.testing.assert_array_equal(modal_class(probes), [1, 1])
    # with the clean prediction given as class 2 for image 0: D = {a1}, S = {a4}, G = {a2, a3}
    # .1 - (.5 - .1) + (.6 - .2) + [(.1 - .7 + .3 - .1) + (.1 - .6 + .3 - .1)] = .1 - .4 + .4 - .7 = -.6
    np.testing.assert_allclose(a3rank(v0[:1], probes[:1], clean_pred=[2]), [-0.6], atol=1e-12)


def test_modal_class_tie_rules():
    # two votes each for classes 0 and 1; mean maximum probability .75 vs .825 -> class 1
    a = np.array([[[0.6, 0.4], [0.9, 0.1], [0.3, 0.7], [0.05, 0.95]]])
    assert modal_class(a)[0] == 1
    # equal counts and equal mean maximum probability -> the lower class index
    b = np.array([[[0.6, 0.4], [0.9, 0.1], [0.4, 0.6], [0.1, 0.9]]])
    assert modal_class(b)[0] == 0
