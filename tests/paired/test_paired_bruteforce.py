"""Every identified interval against brute-force enumeration of all within-class bijections, on random
small cells with ties, threshold equality, empty overlap, unequal class sizes and single-record classes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.paired import cell_bounds, natural_difference_bound, policy_analysis
from tests.paired.paired_oracle import (
    LEVELS,
    additive_mean,
    additive_range,
    enumerate_cell,
    hl_events,
    policy_oracle,
    random_cell,
    ratio_range,
)

GRID = np.round(np.arange(0.2, 1.01, 0.1), 2)
LAMS = np.round(np.linspace(0.0, 1.0, 11), 10)


def _cells(seed: int, count: int, **kw):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        df = random_cell(rng, **kw)
        tau = float(rng.choice(GRID))
        tau_p = tau if rng.random() < 0.5 else float(rng.choice(GRID))
        yield df, tau, tau_p


def _rows(table: pd.DataFrame) -> dict:
    """(target, level) -> (lower, upper, observed) as plain floats."""
    cols = table[["target", "level", "lower", "upper", "observed"]].to_numpy(dtype=object)
    return {(t, lv): np.array([lo, hi, obs], dtype=float) for t, lv, lo, hi, obs in cols}


def _check_cell(df: pd.DataFrame, tau: float, tau_p: float, stats: dict) -> None:
    rows = _rows(cell_bounds(df, tau, tau_p))
    classes = enumerate_cell(df, hl_events(tau, tau_p))
    n = len(df)
    for level in LEVELS:
        for target in ("H", "L"):
            lo, hi = additive_range(classes, lambda ce, t=target: ce.events[t], level)
            np.testing.assert_allclose(rows[(target, level)][:2], [lo / n, hi / n], atol=1e-12, err_msg=f"{target} {level}")
        np.testing.assert_allclose(rows[("dM_k", level)][:2], ratio_range(classes, level), atol=1e-12, err_msg=f"dM_k {level}")
    # Observed values lie inside every interval; intervals nest I5 within Ik within I0.
    for target in ("H", "L", "dM_k"):
        (lo0, hi0, obs), (lok, hik, _), (lo5, hi5, _) = (rows[(target, lv)] for lv in LEVELS)
        if np.isnan(lok):
            stats["undefined"] += 1
            continue
        assert lo0 <= lok + 1e-12 and lok <= lo5 + 1e-12 and lo5 <= obs + 1e-12, target
        assert obs <= hi5 + 1e-12 and hi5 <= hik + 1e-12 and hik <= hi0 + 1e-12, target
    # Theorem 1: L and dM_k endpoints are identical at Ik and I5 (checked on the brute-force values).
    for values in (lambda ce: ce.events["L"], lambda ce: ce.k_num):
        np.testing.assert_allclose(additive_range(classes, values, "Ik"), additive_range(classes, values, "I5"), atol=1e-12)
    (lok, hik, _), (lo5, hi5, _) = rows[("H", "Ik")], rows[("H", "I5")]
    stats["h_narrower"] += (hi5 - lo5) < (hik - lok) - 1e-12
    stats["k_zero"] += bool(np.isnan(rows[("dM_k", "Ik")][0]))


def test_cell_bounds_equal_brute_force_on_random_cells():
    stats = {"undefined": 0, "h_narrower": 0, "k_zero": 0}
    for df, tau, tau_p in _cells(0, 125):
        _check_cell(df, tau, tau_p, stats)
    for df, tau, tau_p in _cells(1, 125, max_classes=2, max_size=6, n_labels=3):
        _check_cell(df, tau, tau_p, stats)
    # The random cells exercise the interesting cases: zero overlap and strict five-state narrowing of H.
    assert stats["k_zero"] > 0 and stats["h_narrower"] > 0, stats


@pytest.mark.parametrize("seed", [2, 3])
def test_policy_quantities_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    narrower = 0
    for _ in range(60):
        df = random_cell(rng, max_classes=3, max_size=5, n_labels=3)
        tau0 = float(rng.choice(GRID))
        taus = np.sort(rng.choice(GRID, 5))[::-1]
        res = policy_analysis(df, tau0, taus, lams=LAMS)
        costs = res["costs"].set_index(["level", "lam", "policy"]).sort_index()
        comps = res["comparisons"].set_index(["level", "lam", "policy", "other"]).sort_index()
        oracle = policy_oracle(df, tau0, taus, LAMS)
        for level in LEVELS:
            o = oracle[level]
            part = costs.xs(level, level="level")
            for name in ("lower", "upper", "mean"):
                got = part[name].to_numpy().reshape(len(LAMS), 5).T
                np.testing.assert_allclose(got, o[name], atol=1e-12, err_msg=f"{name} {level}")
            # Lemma 1: the joint maximum equals the maximum over the capped separate count intervals.
            np.testing.assert_allclose(o["upper"], o["capped"], atol=1e-12)
            shared = comps.xs(level, level="level")["d_shared"].to_numpy().reshape(len(LAMS), 20)
            jj, oo = np.nonzero(~np.eye(5, dtype=bool))
            np.testing.assert_allclose(shared, o["d_plus"][jj, oo, :].T, atol=1e-12, err_msg=f"D+ {level}")
        narrower += int((costs.xs("I5", level="level")["upper"] < costs.xs("Ik", level="level")["upper"] - 1e-12).any())
    assert narrower > 0


def test_natural_cost_corollary1_brute_force():
    """Corollary 1: J' intervals and shared difference bounds agree at Ik and I5, and equal brute force."""
    rng = np.random.default_rng(4)
    for _ in range(40):
        df = random_cell(rng, max_classes=3, max_size=5, n_labels=3)
        tau0 = float(rng.choice(GRID))
        taus = np.sort(rng.choice(GRID, 3))[::-1]
        lam = float(rng.choice(LAMS))
        res = policy_analysis(df, tau0, taus, coverages=[0.7, 0.8, 0.9], lams=[lam])
        costs, comps = res["costs"], res["comparisons"]
        n = len(df)
        wrong_acc = np.array([((df.pert_pred != df.y) & (df.pert_maxprob >= t)).sum() / n for t in taus])
        classes = enumerate_cell(df, {f"L{j}": hl_events(tau0, t)["L"] for j, t in enumerate(taus)})
        jj, oo = np.nonzero(~np.eye(3, dtype=bool))
        for level in LEVELS:
            ranges = np.array([additive_range(classes, lambda ce, j=j: ce.events[f"L{j}"], level) for j in range(3)]) / n
            at = costs[costs.level == level]
            np.testing.assert_allclose(at["natural_lower"], lam * wrong_acc + (1 - lam) * ranges[:, 0], atol=1e-12)
            np.testing.assert_allclose(at["natural_upper"], lam * wrong_acc + (1 - lam) * ranges[:, 1], atol=1e-12)
            dmax = np.array([additive_range(classes, lambda ce, j=j, l=l: ce.events[f"L{j}"] - ce.events[f"L{l}"], level)[1]
                             for j, l in zip(jj, oo)]) / n
            want = lam * (wrong_acc[jj] - wrong_acc[oo]) + (1 - lam) * dmax
            np.testing.assert_allclose(comps[comps.level == level]["natural_d_shared"], want, atol=1e-12)
            if level == "I5":
                assert natural_difference_bound(df, tau0, taus[0], taus[1], lam, "I5") == pytest.approx(want[0], abs=1e-12)
        for col in ("natural_lower", "natural_upper"):
            np.testing.assert_allclose(costs[costs.level == "Ik"][col], costs[costs.level == "I5"][col], atol=1e-15)
        np.testing.assert_allclose(comps[comps.level == "Ik"]["natural_d_shared"],
                                   comps[comps.level == "I5"]["natural_d_shared"], atol=1e-15)


def test_feasible_mean_equals_uniform_permutation_mean():
    """The feasible-mean rule averages J over uniformly weighted feasible bijections (multiplicities kept);
    at I0 it is the class-conditional independent value."""
    rng = np.random.default_rng(5)
    for _ in range(80):
        df = random_cell(rng, max_classes=2, max_size=6, n_labels=3)
        tau = float(rng.choice(GRID))
        classes = enumerate_cell(df, hl_events(tau, tau))
        res = policy_analysis(df, tau, [tau], coverages=[0.8], lams=[1.0])["costs"].set_index("level")
        for level in LEVELS:
            assert res.loc[level, "mean"] == pytest.approx(additive_mean(classes, lambda ce: ce.events["H"], level) / len(df), abs=1e-12)
        ind = cell_bounds(df, tau).set_index(["target", "level"]).loc[("H", "I0"), "independent"]
        assert res.loc["I0", "mean"] == pytest.approx(ind, abs=1e-12)
