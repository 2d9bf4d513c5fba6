"""Membership with confidence (issue 29, item 2): the paired bootstrap's π against brute-force enumeration of
every resample on tiny n, on constructed cases with known answers, and its stratification, seeding and
set-level fidelity path."""
from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from pipeline.front.pareto import pareto_mask
from pipeline.front.membership import _draw_counts, bootstrap_membership, exact_membership, front_margin
from pipeline.front.pareto import front_mask


def brute_pi(outcomes: np.ndarray, clean: np.ndarray, fidelity: np.ndarray, strata: np.ndarray | None = None) -> np.ndarray:
    """π by enumerating every tuple of drawn indices (n_s^n_s per stratum, equally likely), fronts by `pareto_mask`."""
    n = len(clean)
    strata = np.zeros(n, dtype=int) if strata is None else np.asarray(strata)
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    hits, total = np.zeros(len(outcomes)), 0
    for draw in product(*(product(g, repeat=len(g)) for g in groups)):
        idx = np.concatenate(draw)
        delta = np.maximum((clean[idx] - outcomes[:, idx]).sum(axis=1) / n, 0.0)
        rho = fidelity[:, idx].sum(axis=1) / n if fidelity.ndim == 2 else fidelity
        hits += pareto_mask(np.column_stack([delta, rho]))
        total += 1
    return hits / total


def tiny_case(seed: int, m: int = 6, n: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0/1 outcomes and fidelity on a 1/8 grid: sums are exact, and ties (in δ, in ρ, whole points) are common."""
    rng = np.random.default_rng(seed)
    clean = (rng.random(n) < 0.8).astype(float)
    outcomes = (rng.random((m, n)) < 0.5).astype(float)
    fidelity = rng.integers(0, 9, (m, n)) / 8
    return outcomes, clean, fidelity


def test_front_mask_matches_pareto_mask_with_many_ties():
    rng = np.random.default_rng(3)
    delta, rho = rng.integers(0, 5, (200, 12)).astype(float), rng.integers(0, 5, (200, 12)).astype(float)
    got = front_mask(delta, rho)
    for k in range(len(delta)):
        np.testing.assert_array_equal(got[k], pareto_mask(np.column_stack([delta[k], rho[k]])))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_pi_equals_brute_force_enumeration(seed):
    outcomes, clean, fidelity = tiny_case(seed)
    np.testing.assert_allclose(exact_membership(outcomes, clean, fidelity), brute_pi(outcomes, clean, fidelity), atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_pi_equals_brute_force_enumeration_stratified(seed):
    outcomes, clean, fidelity = tiny_case(seed, n=6)
    strata = np.array(["a", "b", "a", "b", "b", "a"])
    np.testing.assert_allclose(exact_membership(outcomes, clean, fidelity, strata=strata),
                               brute_pi(outcomes, clean, fidelity, strata), atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bootstrap_pi_within_binomial_tolerance_of_exact(seed):
    outcomes, clean, fidelity = tiny_case(seed)
    B = 20_000
    exact = brute_pi(outcomes, clean, fidelity)
    pi = bootstrap_membership(outcomes, clean, fidelity, B=B, seed=seed)["pi"].to_numpy()
    assert np.all(np.abs(pi - exact) <= 4.5 * np.sqrt(exact * (1 - exact) / B) + 1e-12)
    assert ((exact > 0) & (exact < 1)).any()  # not degenerate: some π lies strictly between 0 and 1


def test_clear_member_has_pi_one_and_dominated_configuration_pi_zero():
    rng = np.random.default_rng(5)
    n = 40
    clean = np.ones(n)
    outcomes = np.vstack([np.ones(n), np.zeros(n), (rng.random((3, n)) < 0.5).astype(float)])  # θ0, member, others
    fidelity = np.vstack([np.ones(n), np.full(n, 0.9), rng.uniform(0.1, 0.8, (3, n))])
    outcomes[3] = 1.0  # never degrades and has lower fidelity than the member on every input
    out = bootstrap_membership(outcomes, clean, fidelity, B=500, seed=1)
    np.testing.assert_array_equal(out["pi"], [1.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out["set"], ["core", "core", "out", "out", "out"])
    np.testing.assert_array_equal(out["on_front"], [True, True, False, False, False])
    assert out.loc[1, "delta_lo"] == out.loc[1, "delta_hi"] == 1.0


def test_identical_configurations_share_the_front():
    outcomes, clean, fidelity = tiny_case(7)
    outcomes, fidelity = np.vstack([outcomes, outcomes[2]]), np.vstack([fidelity, fidelity[2]])  # a duplicate of θ2
    out = bootstrap_membership(outcomes, clean, fidelity, B=2000, seed=0)
    assert out.loc[2, "pi"] == out.loc[6, "pi"]
    assert out.loc[2, "on_front"] == out.loc[6, "on_front"]
    exact = exact_membership(outcomes, clean, fidelity)
    assert exact[2] == exact[6]
    np.testing.assert_allclose(exact[:6], exact_membership(outcomes[:6], clean, fidelity[:6]), atol=1e-12)  # a twin never pushes out


def test_tie_on_point_estimates_splits():
    # C fails inputs 0, 1; D fails 2, 3; same fidelity: tied at the point estimates, both on P*. In a resample C
    # is on the front iff it draws no more of {0, 1} than of {2, 3}: π = 1/2 + P(two of each)/2 = 1/2 + (6/16)/2.
    clean = np.ones(4)
    outcomes = np.array([[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0]], dtype=float)
    fidelity = np.array([np.ones(4), np.full(4, 0.5), np.full(4, 0.5)])
    np.testing.assert_allclose(exact_membership(outcomes, clean, fidelity), [1.0, 0.6875, 0.6875])
    out = bootstrap_membership(outcomes, clean, fidelity, B=20_000, seed=0)
    assert out["on_front"].tolist() == [True, True, True]
    assert out["pi"].iloc[1:].sub(0.6875).abs().max() < 4.5 * np.sqrt(0.6875 * 0.3125 / 20_000)
    assert out["set"].tolist() == ["core", "plausible", "plausible"]


def test_stratified_resamples_keep_each_stratum_size():
    strata = np.array([2, 0, 1, 0, 2, 2, 1, 0, 0, 2])
    counts = _draw_counts(np.unique(strata, return_inverse=True)[1], 500, np.random.default_rng(0))
    for s in np.unique(strata):
        np.testing.assert_array_equal(counts[:, strata == s].sum(axis=1), np.sum(strata == s))
    assert (counts[:, strata == 0] != 1).any()  # it does resample within the stratum


def test_one_input_per_stratum_fixes_every_resample():
    outcomes, clean, fidelity = tiny_case(4, n=8)
    out = bootstrap_membership(outcomes, clean, fidelity, strata=np.arange(8), B=50, seed=0)
    np.testing.assert_array_equal(out["pi"], out["on_front"].astype(float))
    np.testing.assert_allclose(out["delta_lo"], out["delta"])
    np.testing.assert_allclose(out["delta_hi"], out["delta"])


def test_same_seed_same_output_other_seed_other_draws():
    outcomes, clean, fidelity = tiny_case(2, m=8, n=30)
    strata = np.arange(30) % 3
    first = bootstrap_membership(outcomes, clean, fidelity, strata=strata, B=300, seed=11)
    again = bootstrap_membership(outcomes, clean, fidelity, strata=strata, B=300, seed=11)
    other = bootstrap_membership(outcomes, clean, fidelity, strata=strata, B=300, seed=12)
    assert first.equals(again)
    assert not first["pi"].equals(other["pi"])


def test_set_level_fidelity_is_held_fixed():
    outcomes, clean, fidelity = tiny_case(1)
    kid = fidelity.mean(axis=1)  # one number per θ
    np.testing.assert_allclose(exact_membership(outcomes, clean, kid), brute_pi(outcomes, clean, kid), atol=1e-12)
    constant = np.repeat(kid[:, None], len(clean), axis=1)  # the same ρ on every input: resampling cannot move it
    fixed = bootstrap_membership(outcomes, clean, kid, B=1000, seed=3)
    spread = bootstrap_membership(outcomes, clean, constant, B=1000, seed=3)
    np.testing.assert_array_equal(fixed["pi"], spread["pi"])
    np.testing.assert_allclose(fixed["rho"], kid)


def test_point_estimates_and_front_agree_with_pareto_mask():
    rng = np.random.default_rng(9)
    m, n = 60, 25
    clean = (rng.random(n) < 0.9).astype(float)
    outcomes = (rng.random((m, n)) < rng.uniform(0.3, 0.9, (m, 1))).astype(float)
    fidelity = rng.uniform(0, 1, (m, n)) ** rng.uniform(0.5, 3, (m, 1))
    out = bootstrap_membership(outcomes, clean, fidelity, B=200, seed=0, level=0.9, core=0.9, plausible=0.2)
    np.testing.assert_allclose(out["delta"], np.maximum(clean.mean() - outcomes.mean(axis=1), 0), atol=1e-12)
    np.testing.assert_allclose(out["rho"], fidelity.mean(axis=1), atol=1e-12)
    np.testing.assert_array_equal(out["on_front"], pareto_mask(out[["delta", "rho"]].to_numpy()))
    expected = np.where(out["pi"] >= 0.9, "core", np.where(out["pi"] >= 0.2, "plausible", "out"))
    np.testing.assert_array_equal(out["set"], expected)
    assert (out["delta_lo"] <= out["delta_hi"]).all()
    assert list(out.columns) == ["delta", "rho", "pi", "delta_lo", "delta_hi", "on_front", "set"]


def test_front_margin_by_hand():
    n = 10
    # θ0 (0, 1) top fidelity; θ1 (0.5, 0.6); θ2 (0.3, 0.7); θ3 (0.2, 0.6) dominated by θ1; θ4 = θ1 (a twin)
    delta = np.array([0.0, 0.5, 0.3, 0.2, 0.5])
    rho = np.array([1.0, 0.6, 0.7, 0.6, 0.6])
    # θ1: rivals with ρ ≥ 0.6 are θ0, θ2, θ3, θ4: best δ 0.5 (its twin) → 0; θ2: rival θ0 → 3 inputs
    np.testing.assert_array_equal(front_margin(delta, rho, n), [np.inf, 0.0, 3.0, -3.0, 0.0])
    assert front_margin(np.array([2 / 3, 1 / 3]), np.array([0.5, 0.6]), 3)[0] == 1.0  # whole inputs count exactly


@pytest.mark.parametrize("kwargs, match", [
    ({"clean": np.ones(3)}, "clean"),
    ({"fidelity": np.ones((2, 3))}, "fidelity"),
    ({"strata": np.zeros(3)}, "strata"),
    ({"B": 0}, "B"),
    ({"level": 1.0}, "level"),
    ({"core": 0.5, "plausible": 0.6}, "thresholds"),
    ({"outcomes": np.full((4, 5), np.nan)}, "NaN"),
])
def test_bad_input_is_rejected(kwargs, match):
    args = {"outcomes": np.ones((4, 5)), "clean": np.ones(5), "fidelity": np.ones((4, 5))} | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_membership(**args)


def test_exact_enumeration_refuses_large_n():
    with pytest.raises(ValueError, match="exact enumeration"):
        exact_membership(np.ones((2, 12)), np.ones(12), np.ones((2, 12)), limit=10_000)
