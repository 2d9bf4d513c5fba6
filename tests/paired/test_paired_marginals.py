"""Appendix C (accuracy-only identification, variance ratio) and the Eq. (9) signed decomposition."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.paired import cell_bounds, confidence_decomposition, overlap_from_accuracies, variance_ratio
from tests.paired.paired_oracle import enumerate_cell, random_cell


def test_classwise_overlap_range_equals_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(60):
        df = random_cell(rng, max_classes=3, max_size=5)
        per_class, summary = overlap_from_accuracies(df)
        classes = enumerate_cell(df, {})
        assert summary["K_lower_classwise"] == sum(ce.states[:, 4].min() for ce in classes)
        assert summary["K_upper_classwise"] == sum(ce.states[:, 4].max() for ce in classes)
        assert summary["K_lower_global"] <= summary["K_lower_classwise"] <= summary["K"]
        assert summary["K"] <= summary["K_upper_classwise"] <= summary["K_upper_global"]
        assert (per_class["pinned"] == (per_class["k_lower"] == per_class["k_upper"])).all()


def test_global_overlap_range():
    # Two classes: a = (2, 0), b = (0, 2), n = (2, 2). Classwise K = 0 exactly; globally K in [0, 2].
    df = pd.DataFrame({"y": [0, 0, 1, 1], "clean_pred": [0, 0, 0, 0], "pert_pred": [1, 1, 1, 1],
                       "clean_maxprob": 0.9, "clean_trueprob": [0.9, 0.9, 0.1, 0.1],
                       "pert_maxprob": 0.9, "pert_trueprob": [0.1, 0.1, 0.9, 0.9]})
    _, summary = overlap_from_accuracies(df)
    assert (summary["K_lower_classwise"], summary["K_upper_classwise"]) == (0, 0)
    assert (summary["K_lower_global"], summary["K_upper_global"]) == (0, 2)


def test_variance_ratio():
    df = pd.DataFrame({"y": [0, 0, 0, 0], "clean_pred": [0, 0, 0, 1], "pert_pred": [0, 0, 1, 1],
                       "clean_maxprob": [0.9, 0.8, 0.7, 0.6], "clean_trueprob": [0.9, 0.8, 0.7, 0.3],
                       "pert_maxprob": [0.9, 0.8, 0.7, 0.6], "pert_trueprob": [0.9, 0.8, 0.2, 0.3]})
    ratios = variance_ratio(df)
    c, cp = np.array([1, 1, 1, 0.0]), np.array([1, 1, 0, 0.0])
    assert ratios["C"] == pytest.approx(np.var(c - cp) / (np.var(c) + np.var(cp)))
    assert ratios["S"] == 0.0                        # identical scores on both sides: pairing removes all variance
    same = df.assign(pert_pred=df.clean_pred, pert_trueprob=df.clean_trueprob)
    assert variance_ratio(same)["M"] == 0.0
    assert np.isnan(variance_ratio(df.assign(clean_pred=0, pert_pred=0))["C"])


def _independent_dmk(df: pd.DataFrame) -> float:
    """Eq. (14) from its definition: every clean record combined with every same-class perturbed record, weight 1/n_y."""
    num = den = 0.0
    for _, g in df.groupby("y"):
        cc = (g.clean_pred == g.y).to_numpy()
        pc = (g.pert_pred == g.y).to_numpy()
        diff = g.clean_trueprob.to_numpy()[:, None] - g.pert_trueprob.to_numpy()[None, :]
        mask = cc[:, None] & pc[None, :]
        num += (diff * mask).sum() / len(g)
        den += mask.sum() / len(g)
    return num / den if den > 0 else float("nan")


def test_signed_decomposition_eq9():
    rng = np.random.default_rng(1)
    seen = 0
    for _ in range(120):
        df = random_cell(rng, max_classes=4, max_size=6)
        parts = confidence_decomposition(df)
        ind = _independent_dmk(df)
        table = cell_bounds(df, 0.5, levels=("I0", "I5")).set_index(["target", "level"])
        np.testing.assert_allclose(table.loc[("dM_k", "I0"), "independent"], ind, atol=1e-12)
        if np.isnan(parts["dM_k"]):
            assert np.isnan([parts["W"], parts["V"]]).all()
            continue
        seen += 1
        assert parts["dM_k_ind"] == pytest.approx(ind, abs=1e-12)
        assert parts["dM_k"] - parts["dM_k_ind"] == pytest.approx(parts["W"] + parts["V"], abs=1e-12)
        assert parts["dM_k"] == pytest.approx(table.loc[("dM_k", "I5"), "observed"], abs=1e-12)
    assert seen > 60
