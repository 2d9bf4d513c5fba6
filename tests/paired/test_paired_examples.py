"""The paper's worked examples, Table 1 identities, Appendix F thresholds and Appendix D's tie rule."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.paired import (
    cell_bounds,
    clean_threshold,
    difference_bound,
    feasible_mean_rule,
    five_state_counts,
    minimax_regret_rule,
    policy_cost_bounds,
    policy_thresholds,
    select_policy,
)


def _records(clean, pert, y=0):
    """Records from probability vectors (one per image, class order as given), true class `y`."""
    rows = []
    for pc, pp in zip(clean, pert):
        rows.append({"y": y, "clean_pred": int(np.argmax(pc)), "clean_maxprob": max(pc), "clean_trueprob": pc[y],
                     "pert_pred": int(np.argmax(pp)), "pert_maxprob": max(pp), "pert_trueprob": pp[y]})
    return pd.DataFrame(rows)


def _interval(table, target, level):
    row = table.set_index(["target", "level"]).loc[(target, level)]
    return row["lower"], row["upper"], row["observed"]


def test_opening_example_section_3_1():
    """Two images of one class, threshold 0.8: (H, L, dM_k) is (0, 1/2, 0.3) or (1/2, 0, 0) with identical
    five-state counts, so no information level pins them down."""
    clean = [(0.9, 0.1), (0.6, 0.4)]
    pert = [(0.6, 0.4), (0.2, 0.8)]
    first = cell_bounds(_records(clean, pert), 0.8)
    second = cell_bounds(_records(clean, pert[::-1]), 0.8)
    observed = lambda t: tuple(t.set_index("target").groupby(level=0)["observed"].first()[["H", "L", "dM_k"]])  # noqa: E731
    assert observed(first) == pytest.approx((0.0, 0.5, 0.3))
    assert observed(second) == pytest.approx((0.5, 0.0, 0.0))
    pd.testing.assert_frame_equal(five_state_counts(_records(clean, pert)), five_state_counts(_records(clean, pert[::-1])))
    for table in (first, second):
        for level in ("I0", "Ik", "I5"):
            assert _interval(table, "H", level)[:2] == pytest.approx((0.0, 0.5))
            assert _interval(table, "L", level)[:2] == pytest.approx((0.0, 0.5))
            assert _interval(table, "dM_k", level)[:2] == pytest.approx((0.0, 0.3))


# Appendix A.6 (order T, A, B; accept at 0.6): one correct accepted clean record and two clean records
# wrongly labelled A; perturbed: one correct, one accepted wrong A, one rejected wrong B.
A6_CLEAN = [(0.7, 0.2, 0.1), (0.2, 0.7, 0.1), (0.3, 0.5, 0.2)]
A6_PERT_S1 = [(0.3, 0.2, 0.5), (0.1, 0.8, 0.1), (0.5, 0.3, 0.2)]   # persistent wrong answer A -> A: s=1, w=0
A6_PERT_W1 = [(0.1, 0.8, 0.1), (0.5, 0.3, 0.2), (0.3, 0.2, 0.5)]   # changed wrong answer A -> B: s=0, w=1


def test_counterexample_appendix_a6():
    s1, w1 = _records(A6_CLEAN, A6_PERT_S1), _records(A6_CLEAN, A6_PERT_W1)
    assert five_state_counts(s1)[["h", "r", "s", "w", "k"]].iloc[0].tolist() == [1, 1, 1, 0, 0]
    assert five_state_counts(w1)[["h", "r", "s", "w", "k"]].iloc[0].tolist() == [1, 1, 0, 1, 0]
    b_s1, b_w1 = cell_bounds(s1, 0.6), cell_bounds(w1, 0.6)
    assert _interval(b_s1, "H", "I5") == pytest.approx((0.0, 0.0, 0.0))
    assert _interval(b_w1, "H", "I5") == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    for table in (b_s1, b_w1):   # overlap alone (k = 0) leaves H in {0, 1}/3
        assert _interval(table, "H", "Ik")[:2] == pytest.approx((0.0, 1 / 3))
        assert np.isnan(_interval(table, "dM_k", "Ik")[0])           # K = 0: undefined, never an exception


def test_counterexample_with_positive_overlap():
    """Adding one correct accepted record to each side (k = 1) gives the same distinction over four records."""
    extra_c, extra_p = (0.9, 0.05, 0.05), (0.8, 0.1, 0.1)
    s1 = _records(A6_CLEAN + [extra_c], A6_PERT_S1 + [extra_p])
    w1 = _records(A6_CLEAN + [extra_c], A6_PERT_W1 + [extra_p])
    assert _interval(cell_bounds(s1, 0.6), "H", "I5")[:2] == pytest.approx((0.0, 0.0))
    assert _interval(cell_bounds(w1, 0.6), "H", "I5")[:2] == pytest.approx((0.25, 0.25))
    for table in (cell_bounds(s1, 0.6), cell_bounds(w1, 0.6)):
        assert _interval(table, "H", "Ik")[:2] == pytest.approx((0.0, 0.25))
        lo, hi, obs = _interval(table, "dM_k", "I5")
        assert lo <= obs <= hi and not np.isnan(obs)


def test_five_state_identities():
    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 4, n)
    df = pd.DataFrame({"y": y, "clean_pred": np.where(rng.random(n) < 0.7, y, rng.integers(0, 4, n)),
                       "pert_pred": np.where(rng.random(n) < 0.5, y, rng.integers(0, 4, n))})
    for side in ("clean", "pert"):
        df[f"{side}_maxprob"] = rng.uniform(0.3, 1, n)
        df[f"{side}_trueprob"] = np.where(df[f"{side}_pred"] == y, df[f"{side}_maxprob"], 0.1)
    counts = five_state_counts(df)
    assert (counts[["h", "r", "s", "w", "k"]].sum(axis=1) == counts["n"]).all()
    cc, pc = df.clean_pred == df.y, df.pert_pred == df.y
    assert counts["a0"].sum() == cc.sum() and counts["a1"].sum() == pc.sum()
    assert counts["F"].sum() == (df.clean_pred != df.pert_pred).sum()
    assert counts["s"].sum() == (~cc & ~pc & (df.clean_pred == df.pert_pred)).sum()


def test_thresholds_appendix_f():
    scores = np.array([0.9, 0.8, 0.8, 0.7, 0.6])
    assert clean_threshold(scores) == 0.7                   # lowest of the top round(0.8 * 5) = 4 scores
    tied = np.array([0.9, 0.8, 0.8, 0.8, 0.8])
    assert clean_threshold(tied) == 0.8                     # all ties accepted: coverage 100% > 80%
    assert (tied >= clean_threshold(tied)).mean() == 1.0
    # round(q n) with halves up: n=5 gives ranks 3, 4 (3.5), 4, 5 (4.5), 5.
    assert policy_thresholds(scores).tolist() == [0.8, 0.7, 0.7, 0.6, 0.6]
    with pytest.raises(ValueError, match="coverage"):
        policy_thresholds(scores, [0.0])
    with pytest.raises(ValueError, match="non-empty"):
        clean_threshold(np.array([]))


def test_tie_rule_appendix_d():
    cov = [0.6, 0.7, 0.8, 0.9, 1.0]
    assert select_policy([1, 1, 1, 1, 1], cov) == 2                      # nominal coverage closest to .8
    assert select_policy([0, 5, 5, 5, 0], cov) == 0                      # equally close: lower coverage
    assert select_policy([1 + 5e-13, 1, 2, 2, 2], cov) == 1              # within 1e-12 counts as tied
    assert select_policy([1 + 5e-12, 1, 2, 2, 2], cov) == 1
    assert select_policy([1 - 5e-12, 1, 2, 2, 2], cov) == 0              # beyond the tolerance: strict
    assert select_policy([3, 3], [0.8, 0.8]) == 0                        # then the lower policy index
    d = np.array([[0, 0.1], [-0.1, 0]])
    assert minimax_regret_rule(d, [0.7, 0.9]) == 1
    assert feasible_mean_rule([0.2, 0.2], [0.7, 0.9]) == 0
    with pytest.raises(ValueError):
        select_policy([1, 2], [0.8])


def test_policy_functions_validate_inputs():
    df = _records(A6_CLEAN, A6_PERT_S1)
    with pytest.raises(ValueError, match="information level"):
        policy_cost_bounds(df, 0.6, [0.5, 0.6], 0.5, "I3")
    with pytest.raises(ValueError, match="lambda"):
        difference_bound(df, 0.6, 0.5, 0.6, 1.5, "I5")
    with pytest.raises(ValueError, match="clean_pred"):
        cell_bounds(df.drop(columns="clean_pred"), 0.6)
    with pytest.raises(ValueError, match="missing value at row 1"):
        cell_bounds(df.assign(pert_maxprob=[0.5, np.nan, 0.5]), 0.6)


def test_shared_correspondence_certifies_what_separate_intervals_miss():
    """Eq. (2) can be strict. One class, two accepted correct clean records and one clean error; perturbed:
    two correct records at S' = 0.5 (switching between tau = 0.4 and 0.6) and an error at S' = 0.9.
    At lambda = 0.8 and I0, A's partners are {c, c'} or {c, error}:
    J(0.4) in {0, 0.8}/3, J(0.6) in {0.4, 1.0}/3, and J(0.4) - J(0.6) in {-0.4, -0.2}/3 < 0,
    while upper J(0.4) - lower J(0.6) = +0.4/3 leaves the ordering open."""
    df = pd.DataFrame({
        "y": [0, 0, 0], "clean_pred": [0, 0, 1], "clean_maxprob": [0.9, 0.9, 0.9], "clean_trueprob": [0.9, 0.9, 0.05],
        "pert_pred": [0, 0, 1], "pert_maxprob": [0.5, 0.5, 0.9], "pert_trueprob": [0.5, 0.5, 0.05],
    })
    table = policy_cost_bounds(df, 0.8, [0.4, 0.6], 0.8, "I0")
    assert table["lower"].tolist() == pytest.approx([0.0, 0.4 / 3])
    assert table["upper"].tolist() == pytest.approx([0.8 / 3, 1.0 / 3])      # Lemma 1: P1 = (1, 1) for tau = 0.6
    assert table["observed"].tolist() == pytest.approx([0.0, 0.4 / 3])
    assert difference_bound(df, 0.8, 0.4, 0.6, 0.8, "I0") == pytest.approx(-0.2 / 3)
    assert difference_bound(df, 0.8, 0.6, 0.4, 0.8, "I0") == pytest.approx(0.4 / 3)
    # The observed overlap k = 2 forces both partners to be correct: Ik pins both costs.
    ik = policy_cost_bounds(df, 0.8, [0.4, 0.6], 0.8, "Ik")
    assert ik["lower"].tolist() == pytest.approx(ik["upper"].tolist())
    assert difference_bound(df, 0.8, 0.4, 0.6, 0.8, "Ik") == pytest.approx(-0.4 / 3)
