"""Model-level prediction (§6, App. H-I): independent counterparts against every within-class permutation,
nested leave-one-group-out ridge against a numpy re-implementation, the group-resampling interval, the
pooled real targets, and Table 28's fixed subsets. The embedded pool is small (8 models in 5 groups), so
these tests check the procedure on tiny inputs with known answers, not its statistical power."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from pipeline.paired.identification.bounds import cell_bounds
from pipeline.paired.identification.cell import as_cell
from pipeline.paired.identification.confidence import dmk_independent
from pipeline.paired.prediction.regression import ALPHAS, PROTOCOL, feature_sets, group_interval, nested_logo, prediction_tables
from pipeline.paired.prediction.summaries import cell_quantities, model_targets
from pipeline.paired.screening.subsets import prefix_subsets


def _cell(rng, sizes=(3, 2, 3), n_classes=4) -> pd.DataFrame:
    rows = []
    for y, n in enumerate(sizes):
        for _ in range(n):
            row = {"y": y}
            for side in ("clean", "pert"):
                pred = y if rng.random() < 0.6 else int(rng.integers(0, n_classes))
                s = float(rng.choice([0.4, 0.55, 0.7, 0.9]))
                row.update({f"{side}_pred": pred, f"{side}_maxprob": s,
                            f"{side}_trueprob": s if pred == y else float(rng.uniform(0.0, 0.35))})
            rows.append(row)
    return pd.DataFrame(rows)


def _paired(df: pd.DataFrame, tau: float) -> dict[str, tuple[float, float]]:
    """(numerator, denominator) of each paired summary under the table's own correspondence."""
    y = df["y"].to_numpy()
    c0, c1 = df["clean_pred"].to_numpy() == y, df["pert_pred"].to_numpy() == y
    s0, s1 = df["clean_maxprob"].to_numpy(), df["pert_maxprob"].to_numpy()
    m0, m1 = df["clean_trueprob"].to_numpy(), df["pert_trueprob"].to_numpy()
    same = df["clean_pred"].to_numpy() == df["pert_pred"].to_numpy()
    both, wrong, n = c0 & c1, ~c0 & ~c1, len(y)
    return {"F": ((~same).sum(), n), "A": (np.abs(s0 - s1).sum(), n), "k": (both.sum(), n), "SS": ((s0 * s1).sum(), n),
            "dM_k": ((m0 - m1)[both].sum(), both.sum()), "ds_s": ((s0 - s1)[wrong & same].sum(), (wrong & same).sum()),
            "ds_w": ((s0 - s1)[wrong & ~same].sum(), (wrong & ~same).sum()),
            "L_k": ((both & (s0 >= tau) & (s1 < tau)).sum(), n)}


def test_independent_counterparts_average_every_within_class_permutation():
    rng = np.random.default_rng(0)
    df = _cell(rng)
    tau = 0.6
    got = cell_quantities(df, tau, 0.8)
    classes = [np.flatnonzero(df["y"].to_numpy() == y) for y in sorted(df["y"].unique())]
    pert = [c for c in df.columns if c.startswith("pert_")]
    totals: dict[str, np.ndarray] = {}
    count = 0
    for perms in itertools.product(*(itertools.permutations(idx) for idx in classes)):
        order = np.arange(len(df))
        for idx, perm in zip(classes, perms):
            order[idx] = perm
        moved = df.copy()
        moved[pert] = df[pert].to_numpy()[order]
        for key, pair in _paired(moved, tau).items():
            totals[key] = totals.get(key, np.zeros(2)) + np.array(pair, dtype=float)
        count += 1
    assert count == 6 * 2 * 6
    for key in ("F", "A", "k", "L_k", "dM_k", "ds_s", "ds_w"):
        num, den = totals[key]
        expected = num / den if den > 0 else float("nan")
        assert got[f"{key}_ind"] == pytest.approx(expected, abs=1e-12, nan_ok=True), key
    s0, s1 = df["clean_maxprob"].to_numpy(), df["pert_maxprob"].to_numpy()
    cov = totals["SS"][0] / totals["SS"][1] - s0.mean() * s1.mean()
    assert got["Q_ind"] == pytest.approx(cov / (s0.std() * s1.std()), abs=1e-12)
    # the library's own closed forms: Eq. (14) for dM_k and Eq. (4) for L
    assert got["dM_k_ind"] == pytest.approx(dmk_independent(as_cell(df)), abs=1e-12, nan_ok=True)
    bounds = cell_bounds(df, tau).set_index(["target", "level"])
    assert got["L_k_ind"] == pytest.approx(bounds.loc[("L", "I0"), "independent"], abs=1e-12)


def test_selected_error_rate_and_pooled_targets():
    # one model, two conditions of 5 eval images; R80 takes the 4 highest S' (k = round(4) = 4)
    rows = []
    for cond, smax, wrong in (("a", [0.9, 0.8, 0.7, 0.6, 0.5], [1, 0, 0, 1, 0]), ("b", [0.9, 0.9, 0.8, 0.3, 0.2], [0, 1, 0, 1, 1])):
        for i, (s, w) in enumerate(zip(smax, wrong)):
            rows.append({"model": "m", "group": "g", "condition": cond, "image_id": f"i{i}", "split": "eval", "y": 0,
                         "clean_pred": 0, "clean_maxprob": 0.95, "clean_trueprob": 0.95, "pert_pred": w,
                         "pert_maxprob": s, "pert_trueprob": 0.1 if w else s})
    for i in range(5):
        rows.append({**rows[i], "split": "dev", "image_id": f"d{i}", "condition": "a"})
    real = pd.DataFrame(rows)
    got = model_targets(real, ["a", "b"], coverage=0.8, q=0.8).iloc[0]
    # a: top 4 by S' hold wrong flags 1,0,0,1 -> 2 errors; b: top 4 hold 0,1,0,1 -> 2 errors; pooled 4 / 8
    assert got["R"] == pytest.approx(4 / 8)
    assert got["accuracy"] == pytest.approx(5 / 10)
    # tau = clean dev threshold (all 0.95) -> accepted errors need S' >= 0.95: none
    assert got["E_tau"] == 0.0 and got["L_k"] == pytest.approx(5 / 10)   # every correct one loses acceptance


def _ridge_oof(x, y, groups, alphas):
    """Nested leave-one-group-out ridge in numpy: training medians, (ddof 0) standardisation, closed-form
    ridge with an unpenalised intercept on the probit scale; the penalty from inner leave-one-group-out MAE."""
    def fit_predict(xt, yt, xs, alpha):
        med = np.nanmedian(np.where(np.isnan(xt).all(0), 0.0, xt), axis=0) if xt.size else None
        med = np.where(np.isnan(med), 0.0, med)
        xt, xs = np.where(np.isnan(xt), med, xt), np.where(np.isnan(xs), med, xs)
        mu, sd = xt.mean(0), xt.std(0)
        sd = np.where(sd > 0, sd, 1.0)
        zt, zs = (xt - mu) / sd, (xs - mu) / sd
        t = norm.ppf(np.clip(yt, 1e-4, 1 - 1e-4))
        w = np.linalg.solve(zt.T @ zt + alpha * np.eye(zt.shape[1]), zt.T @ (t - t.mean()))
        return norm.cdf(zs @ w + t.mean())

    pred = np.zeros(len(y))
    for g in np.unique(groups):
        tr = groups != g
        maes = []
        for alpha in alphas:
            err = []
            for h in np.unique(groups[tr]):
                inner = tr & (groups != h)
                held = tr & (groups == h)
                err.extend(np.abs(fit_predict(x[inner], y[inner], x[held], alpha) - y[held]))
            maes.append(np.mean(err))
        pred[~tr] = fit_predict(x[tr], y[tr], x[~tr], alphas[int(np.argmin(maes))])
    return pred


def test_nested_logo_matches_a_numpy_reimplementation():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(11, 3))
    x[2, 1] = np.nan                                             # imputed with the training median
    y = norm.cdf(0.8 * x[:, 0] - 0.5 * np.nan_to_num(x[:, 1]) + rng.normal(0, 0.3, 11))
    groups = np.array(["a", "a", "b", "b", "b", "c", "c", "d", "d", "e", "e"])
    pred, chosen = nested_logo(x, y, groups, ALPHAS)
    np.testing.assert_allclose(pred, _ridge_oof(x, y, groups, ALPHAS), atol=1e-8)
    assert set(chosen) == {"a", "b", "c", "d", "e"} and set(chosen.values()) <= set(ALPHAS)
    with pytest.raises(ValueError, match="at least 3 groups"):
        nested_logo(x[:4], y[:4], groups[:4])


def test_group_interval():
    rng = np.random.default_rng(2)
    lo, hi = group_interval(np.full(6, 0.25), np.array([0, 0, 1, 1, 2, 2]), rng, 500)
    assert lo == pytest.approx(0.25) and hi == pytest.approx(0.25)
    # two groups with means 1 (two models) and 4 (one model): a draw's mean lies in {1, 2, 4}
    diff, groups = np.array([1.0, 1.0, 4.0]), np.array(["g", "g", "h"])
    lo, hi = group_interval(diff, groups, np.random.default_rng(3), 4000)
    assert lo == 1.0 and hi == 4.0


def test_feature_sets_nest():
    for target in ("accuracy", "R", "E_tau", "L_k"):
        sets = feature_sets(target)
        assert set(sets["B0"]) < set(sets["B1"]) < set(sets["B_ind"]) < set(sets["C1"])
        assert set(sets["C1"]) - set(sets["B_ind"]) == {"F", "A", "Q"}
        assert set(sets["B_ind+dM_k"]) - set(sets["B_ind"]) == {"dM_k"}
    assert "R" in feature_sets("R")["B1"] and "rejected_correct" in feature_sets("L_k")["B1"]
    with pytest.raises(ValueError, match="valid targets"):
        feature_sets("H")


def test_prefix_subsets_are_fixed_before_outcomes():
    names = [f"{t}-{s}" for t in "abcde" for s in (2, 4)]
    subsets = prefix_subsets(names, [1, 3, 9, 10, 12], 20, np.random.default_rng(4))
    assert subsets == prefix_subsets(names, [1, 3, 9, 10, 12], 20, np.random.default_rng(4))
    fams = pd.Series([f for f, _ in subsets]).value_counts().to_dict()
    assert fams == {"m=1": 10, "m=3": 20, "m=9": 10, "severity 2": 1, "severity 4": 1, "all": 1}   # C(10, 9) = 10
    threes = [s for f, s in subsets if f == "m=3"]
    assert len(set(threes)) == 20 and all(len(s) == 3 == len(set(s)) for s in threes)
    assert dict(subsets)["severity 4"] == (1, 3, 5, 7, 9) and dict(subsets)["all"] == tuple(range(10))


def test_prediction_tables_do_not_depend_on_the_number_of_workers():
    """The full-pool fit and the whole-group deletion refits (4 groups: 5 fits) in one process or in two give the
    same tables and errors, bit for bit, and the deletion range is taken over every group's refit."""
    rng = np.random.default_rng(3)
    models, groups = [f"m{i}" for i in range(8)], np.repeat(list("abcd"), 2)
    columns = sorted({c for t in PROTOCOL for cols in feature_sets(t).values() for c in cols})
    features = pd.DataFrame(rng.normal(size=(8, len(columns))), columns=columns).assign(model=models, group=groups)
    targets = pd.DataFrame(rng.uniform(0.05, 0.95, size=(8, len(PROTOCOL))), columns=list(PROTOCOL)).assign(model=models, group=groups)
    one = prediction_tables(features, targets, ALPHAS[2:4], 50, np.random.default_rng(0), workers=1)
    two = prediction_tables(features, targets, ALPHAS[2:4], 50, np.random.default_rng(0), workers=2)
    pd.testing.assert_frame_equal(one[1], two[1], check_exact=True)
    for name in one[0]:
        pd.testing.assert_frame_equal(one[0][name], two[0][name], check_exact=True)
    assert "B1 reduction, group deletions" in one[0]["table46"] and len(one[1]) == 8 * sum(len(feature_sets(t)) for t in PROTOCOL)
