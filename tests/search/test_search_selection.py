"""Parent selection as a setting of TestNav (issue 11 §4): pymoo's NSGA-II default (dominance, then
crowding) and Pareto rank, then crowding, on hand-built populations."""
from __future__ import annotations

import math
import types

import numpy as np
import pandas as pd
import pytest
from pymoo.algorithms.moo.nsga2 import binary_tournament as pymoo_binary_tournament
from pymoo.core.population import Population
from pymoo.util.misc import random_permutations

from pipeline.search import METHODS, get_method, run_search
from pipeline.search.ground_truth import GroundTruth
from pipeline.search.methods.survival import rank_and_crowding
from pipeline.search.methods.variation import TOURNAMENTS, binary_tournament, dominance_tournament
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table


def winners(rule, keys: np.ndarray, n: int = 40, seed: int = 0) -> np.ndarray:
    return rule(np.asarray(keys, dtype=float), n, np.random.default_rng(seed))


# Two members, so every tournament is between them. Columns: rank, crowding, δ, ρ (maximised).
# a = (0.1, 0.9) is on the first front; b = (0.5, 0.05) is dominated by some other member (rank 1) but
# not by a: neither of the two dominates the other, and b is the less crowded.
A_VS_B = [[0, 1.0, 0.1, 0.9], [1, 2.0, 0.5, 0.05]]


def test_rank_crowding_prefers_the_better_front():
    assert (winners(binary_tournament, np.asarray(A_VS_B)[:, :2]) == 0).all()


def test_dominance_falls_through_to_crowding_when_neither_dominates():
    assert (winners(dominance_tournament, A_VS_B) == 1).all()


def test_dominance_wins_over_crowding():
    # a = (0.9, 0.1) dominates b = (0.5, 0.05), although b has the larger (infinite) crowding distance
    keys = [[0, 0.5, 0.9, 0.1], [1, np.inf, 0.5, 0.05]]
    assert (winners(dominance_tournament, keys) == 0).all()
    assert (winners(binary_tournament, np.asarray(keys)[:, :2]) == 0).all()


def test_exact_ties_are_decided_by_a_fair_coin():
    keys = [[0, 1.0, 0.5, 0.5], [0, 1.0, 0.5, 0.5]]  # identical objectives and crowding
    w = winners(dominance_tournament, keys, n=400)
    assert 150 < (w == 0).sum() < 250
    w = winners(binary_tournament, np.asarray(keys)[:, :2], n=400)
    assert 150 < (w == 0).sum() < 250


def test_both_rules_on_a_population_by_hand():
    # F (maximised); fronts: {0, 1, 2}, {3, 4}, {5}
    F = np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9], [0.45, 0.4], [0.05, 0.85], [0.04, 0.3]])
    keep, keys = rank_and_crowding(F, 6, np.random.default_rng(0))
    order = np.argsort(keep)
    keys = keys[order]
    np.testing.assert_array_equal(keys[:, 0], [0, 0, 0, 1, 1, 2])
    # crowding: the extremes of each front are infinite; member 1 sits between 0 and 2
    assert np.isinf(keys[[0, 2, 3, 4, 5], 1]).all() and np.isfinite(keys[1, 1])
    full = np.column_stack([keys, F])
    rng = np.random.default_rng(3)
    pairs = [(1, 3), (1, 4), (2, 4), (3, 5), (0, 3)]
    # by hand: 1 = (0.5, 0.5) vs 3 = (0.45, 0.4): 1 dominates 3 -> 1 under both rules.
    # 1 vs 4 = (0.05, 0.85): neither dominates; rank says 1 (front 0), dominance says 4 (crowding ∞ > finite).
    # 2 = (0.1, 0.9) vs 4: 2 dominates 4 -> 2 under both.  3 vs 5 = (0.04, 0.3): 3 dominates -> 3.
    # 0 = (0.9, 0.1) vs 3: neither dominates, both crowding ∞ -> rank says 0, dominance flips a coin.
    expected_rank = [1, 1, 2, 3, 0]
    expected_dom = [1, 4, 2, 3, None]
    for (a, b), er, ed in zip(pairs, expected_rank, expected_dom):
        sub = np.array([a, b])
        w_rank = sub[winners(binary_tournament, keys[sub], n=20, seed=int(rng.integers(1000)))]
        w_dom = sub[winners(dominance_tournament, full[sub], n=200, seed=int(rng.integers(1000)))]
        assert (w_rank == er).all(), (a, b)
        if ed is None:
            assert set(w_dom.tolist()) == {a, b}
        else:
            assert (w_dom == ed).all(), (a, b)


@pytest.mark.parametrize("rule, tournament_type", [("dominance", "comp_by_dom_and_crowding"), ("rank_crowding", "comp_by_rank_and_crowding")])
def test_every_decided_tournament_matches_pymoo(rule, tournament_type):
    # pymoo's own NSGA-II `binary_tournament` on a Population, fed the pairs our tournament draws (same
    # RNG); coarse objectives so that duplicates, ties and dominance all occur. Exact ties are coin
    # flips in both (different draws), so only decided tournaments are compared.
    rng = np.random.default_rng(5)
    F = np.round(rng.random((30, 2)), 1)
    keep, keys = rank_and_crowding(F, 30, rng)
    keys = keys[np.argsort(keep)]
    full = np.column_stack([keys, F]) if rule == "dominance" else keys
    n = 300
    ours = TOURNAMENTS[rule](full, n, np.random.default_rng(9))
    pairs = random_permutations(math.ceil(2 * n / 30), 30, random_state=np.random.default_rng(9))[: 2 * n].reshape(n, 2)
    pop = Population.new("X", np.zeros((30, 1)), "F", -F, "rank", keys[:, 0].astype(int), "crowding", keys[:, 1])
    algorithm = types.SimpleNamespace(tournament_type=tournament_type, random_state=np.random.default_rng(0))
    reference = pymoo_binary_tournament(pop, pairs, algorithm)[:, 0]
    a, b = pairs[:, 0], pairs[:, 1]
    if rule == "dominance":
        fa, fb = F[a], F[b]
        decided = ((fa >= fb).all(1) & (fa > fb).any(1)) | ((fb >= fa).all(1) & (fb > fa).any(1))
    else:
        decided = keys[a, 0] != keys[b, 0]
    decided |= keys[a, 1] != keys[b, 1]
    assert decided.sum() > 100 and (~decided).sum() > 10
    np.testing.assert_array_equal(ours[decided], reference[decided])


def test_selection_is_a_hyperparameter_with_pymoo_default():
    assert "selection" in METHODS["testnav"].hyperparameters()
    assert "selection" in METHODS["delta_only"].hyperparameters() and "selection" in METHODS["rho_only"].hyperparameters()
    assert "selection" not in METHODS["ga"].hyperparameters()  # the scalar GA compares fitness, as pymoo's GA
    assert get_method("testnav").selection == "dominance"
    assert set(TOURNAMENTS) == {"dominance", "rank_crowding"}


def test_unknown_selection_names_the_valid_choices():
    with pytest.raises(ValueError, match=r"'tournament'.*valid choices: dominance, rank_crowding"):
        get_method("testnav", selection="tournament")


def small_problem() -> GroundTruth:
    space = Space(NAMES4, 4)
    return GroundTruth.from_table(synthetic_table(space), "syn", "ssim")


def test_the_rules_give_different_testnav_runs():
    p = small_problem()
    a = run_search("testnav", p.oracle, p.space, 300, seed=0, mu=20, selection="dominance")
    b = run_search("testnav", p.oracle, p.space, 300, seed=0, mu=20, selection="rank_crowding")
    assert len(a) == len(b) == 300
    assert not a[list(p.space.names)].equals(b[list(p.space.names)])


@pytest.mark.parametrize("method", ["delta_only", "rho_only"])
def test_with_one_objective_the_rules_coincide(method):
    # One objective: a dominates b exactly when its rank is lower, and the same RNG draws are made.
    p = small_problem()
    a = run_search(method, p.oracle, p.space, 300, seed=1, mu=20, selection="dominance")
    b = run_search(method, p.oracle, p.space, 300, seed=1, mu=20, selection="rank_crowding")
    pd.testing.assert_frame_equal(a, b)
