"""GP-PND (issue 11 §5) and the lattice-monotonicity measurement, on small hand-made tables with known answers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

from pipeline.front.pareto import pareto_mask
from pipeline.search import METHODS, LiveOracle, TableOracle, run_metrics, run_search
from pipeline.search.ground_truth import GroundTruth
from pipeline.search.studies.monotonicity import edge_monotonicity, lattice_edges, table_monotonicity
from pipeline.search.surrogate.gp_surrogate import IncrementalGP, Warp
from pipeline.search.acquisition.nondomination import non_domination_probability, undominated_count
from pipeline.search.methods.pnd import ParetoProbability, domination_margin, lattice_design
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, general_non_domination_probability, general_undominated_count, synthetic_table

# A perfectly monotone 4^3 table, δ = θ·w and ρ = 1 − θ·v (both linear, unnormalised), w = (3, 2, 1),
# v = (1, 2, 3): a level of dimension 0 buys 3 of δ for 1 of ρ, of dimension 1 2 for 2, of dimension 2
# 1 for 3. The best δ for any loss of ρ fills dimension 0 first, then 1, then 2, so P* is the chain below.
CHAIN = [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (3, 1, 0), (3, 2, 0), (3, 3, 0), (3, 3, 1), (3, 3, 2), (3, 3, 3)]


def chain_problem() -> tuple[Space, TableOracle, np.ndarray]:
    space = Space(("x", "y", "z"), 4)
    grid = space.grid()
    objectives = np.column_stack([grid @ np.array([3.0, 2.0, 1.0]), 1.0 - grid @ np.array([1.0, 2.0, 3.0])])
    pareto = np.zeros(space.size, dtype=bool)
    pareto[space.indices(np.array(CHAIN))] = True
    return space, TableOracle(objectives, space), pareto


def test_the_chain_is_the_pareto_set():
    _, oracle, pareto = chain_problem()
    np.testing.assert_array_equal(pareto_mask(oracle.objectives), pareto)


@pytest.mark.parametrize("seed", range(5))
def test_recovers_the_chain_within_half_of_theta(seed):
    # Random Search needs 64·10/11 ≈ 58 configurations on average for these 10; GP-PND, 16 of them
    # fixed by its initial design, needs at most 32.
    space, oracle, pareto = chain_problem()
    trace = run_search("pnd", oracle, space, 5 * space.size, seed)
    m = run_metrics(trace, pareto, space)
    assert m["u_full"] <= 32 and m["b_full"] == m["u_full"]


def test_every_proposal_is_new_and_the_run_stops_at_theta():
    space, oracle, _ = chain_problem()
    trace = run_search("pnd", oracle, space, 5 * space.size, seed=0)
    assert len(trace) == space.size and trace["is_new"].all()
    assert trace["u"].tolist() == trace["b"].tolist()
    assert sorted(space.indices(trace[list(space.names)].to_numpy()).tolist()) == list(range(space.size))
    for budget in (5, 20):  # inside and after the initial design
        short = run_search("pnd", oracle, space, budget, seed=0)
        assert len(short) == budget and short["is_new"].all()
        pd.testing.assert_frame_equal(short, trace.iloc[:budget][list(short.columns)])  # est_recall starts after the design


def test_deterministic_per_seed_and_different_across_seeds():
    space = Space(NAMES4[:3], 4)
    table = synthetic_table(space)
    oracle = TableOracle.from_table(table, space)
    a, b = (run_search("pnd", oracle, space, 40, seed=3) for _ in range(2))
    pd.testing.assert_frame_equal(a, b)
    c = run_search("pnd", oracle, space, 40, seed=4)
    assert not a[list(space.names)].equals(c[list(space.names)])


@pytest.mark.parametrize("names, levels", [(("x",), 2), (("x", "y"), 2), (("x",), 5)])
def test_tiny_spaces(names, levels):
    space = Space(names, levels)
    oracle = TableOracle(np.random.default_rng(0).random((space.size, 2)), space)
    trace = run_search("pnd", oracle, space, 100, seed=0)
    assert len(trace) == space.size and trace["is_new"].all()


def test_registered_with_only_the_stopping_rule():
    assert METHODS["pnd"] is ParetoProbability and ParetoProbability.hyperparameters() == ("stop_at_recall",)
    assert ParetoProbability.label == "GP-PND"


def test_lattice_design():
    space = Space(("x", "y", "z"), 3)
    design = [space.theta(i) for i in lattice_design(space)]
    assert design == [(0, 0, 0), (2, 2, 2), (1, 0, 0), (2, 0, 0), (0, 1, 0), (0, 2, 0), (0, 0, 1), (0, 0, 2)]
    assert [Space(("x",), 2).theta(i) for i in lattice_design(Space(("x",), 2))] == [(0,), (1,)]


def test_non_domination_probability_by_hand():
    front = np.array([[0.5, 0.5]])
    # at the front point with equal spreads: dominated iff X ≤ .5 and Y ≤ .5, probability 1/4
    assert non_domination_probability([[0.5, 0.5]], [[0.1, 0.1]], front)[0] == pytest.approx(0.75)
    assert non_domination_probability([[0.9, 0.9]], [[0.01, 0.01]], front)[0] == pytest.approx(1.0)
    assert non_domination_probability([[0.1, 0.1]], [[0.01, 0.01]], front)[0] == pytest.approx(0.0)
    # zero spread: a step; a tie with a front point counts as dominated
    p = non_domination_probability([[0.6, 0.4], [0.4, 0.4], [0.5, 0.5]], np.zeros((3, 2)), front)
    np.testing.assert_array_equal(p, [1.0, 0.0, 0.0])
    assert non_domination_probability([[0.0, 0.0]], [[1.0, 1.0]], np.zeros((0, 2)))[0] == 1.0
    # two front points: P = P(X ≤ .2)P(Y > .8) + P(.2 < X ≤ .6)P(Y > .4) + P(X > .6)
    front = np.array([[0.6, 0.4], [0.2, 0.8]])  # any order
    mu, s = np.array([0.4, 0.6]), np.array([0.15, 0.2])
    cx = norm.cdf([0.2, 0.6], mu[0], s[0])
    expected = cx[0] * norm.sf(0.8, mu[1], s[1]) + (cx[1] - cx[0]) * norm.sf(0.4, mu[1], s[1]) + (1 - cx[1])
    assert non_domination_probability(mu[None], s[None], front)[0] == pytest.approx(expected)


def test_non_domination_probability_against_sampling():
    rng = np.random.default_rng(0)
    front = np.array([[0.1, 0.9], [0.3, 0.8], [0.5, 0.6], [0.8, 0.2]])
    mean, sd = np.array([[0.45, 0.65], [0.2, 0.85], [0.7, 0.3]]), np.array([[0.1, 0.05], [0.05, 0.1], [0.2, 0.2]])
    for m, s, p in zip(mean, sd, non_domination_probability(mean, sd, front)):
        x = rng.normal(m, s, size=(200_000, 2))
        dominated = ((front[None, :, 0] >= x[:, None, 0]) & (front[None, :, 1] >= x[:, None, 1])).any(axis=1)
        assert p == pytest.approx(1 - dominated.mean(), abs=0.005)


@pytest.mark.parametrize("seed", range(5))
def test_positive_spreads_give_the_bits_of_the_general_formulas(seed):
    """The no-step paths GP-PND takes (every sd > 0) compute the same floating-point operations as the
    general formulas: the same bits, so traces do not depend on which path ran."""
    rng = np.random.default_rng(seed)
    n, k = rng.integers(1, 700), rng.integers(1, 40)
    mean, sd, front = rng.normal(size=(n, 2)), rng.uniform(1e-3, 2.0, size=(n, 2)), rng.normal(size=(k, 2))
    np.testing.assert_array_equal(non_domination_probability(mean, sd, front), general_non_domination_probability(mean, sd, front))
    assert undominated_count(mean, sd, front) == general_undominated_count(mean, sd, front)
    sd[0, 1] = 0.0  # one step: the general path, still the formulas' values
    np.testing.assert_array_equal(non_domination_probability(mean, sd, front), general_non_domination_probability(mean, sd, front))
    assert undominated_count(mean, sd, front) == general_undominated_count(mean, sd, front)


@pytest.mark.parametrize("q", [1, 3])
def test_the_carried_posterior_changes_no_pick(monkeypatch, q):
    """A round's first pick reads the posterior the previous round's recall estimate computed; recomputing
    it instead must give the same trace, bit for bit."""
    space = Space(NAMES4, 4)
    oracle = GroundTruth.from_table(synthetic_table(space, seed=4), "syn", "ssim").oracle
    carried = run_search("pnd", oracle, space, 120, seed=2, batch_size=q)
    fresh_round = ParetoProbability._round
    monkeypatch.setattr(ParetoProbability, "_round", lambda self, *a: fresh_round(self, *a[:5], None))
    pd.testing.assert_frame_equal(run_search("pnd", oracle, space, 120, seed=2, batch_size=q), carried)


def test_domination_margin_by_hand():
    front = np.array([[0.2, 0.8], [0.6, 0.4]])
    np.testing.assert_allclose(domination_margin([[0.7, 0.1], [0.3, 0.3], [0.1, 0.1], [0.3, 0.5]], front), [0.1, -0.1, -0.3, 0.1])
    assert domination_margin([[0.0, 0.0]], np.zeros((0, 2)))[0] == np.inf


def test_incremental_gp_matches_scikit_learn():
    rng = np.random.default_rng(1)
    Z = rng.random((30, 3))
    y = np.sin(3 * Z[:, 0]) + Z[:, 1] ** 2 + 0.05 * rng.standard_normal(30)
    train = [4, 17, 0, 22, 9, 11, 28, 3]
    amplitude, length, noise = 1.7, np.array([0.4, 0.9, 2.0]), 0.03
    kernel = ConstantKernel(amplitude) * RBF(length) + WhiteKernel(noise)
    reference = GaussianProcessRegressor(kernel, optimizer=None, normalize_y=True).fit(Z[train], y[train])
    mean, sd = reference.predict(Z, return_std=True)
    gp = IncrementalGP(Z, amplitude, length, noise, float(y[train].mean()), float(y[train].std()))
    for i in train:
        gp.add(i, y[i])
    np.testing.assert_allclose(gp.mean(), mean, rtol=1e-6, atol=1e-8)
    test = np.setdiff1d(np.arange(30), train)  # scikit-learn's std includes the white noise at every input
    np.testing.assert_allclose(gp.sd()[test], sd[test], rtol=1e-6)


def test_warp_is_increasing_and_continuous():
    y = np.linspace(-0.5, 1.5, 2001)
    w = Warp(1.0, 0.01)
    assert (np.diff(w(y)) > 0).all()
    assert w(np.array([1.0]))[0] == pytest.approx(-np.log(0.01))
    eps = 1e-7
    for y0 in (0.3, 0.999):  # log w' is the Jacobian term of the likelihood
        slope = (w(np.array([y0 + eps]))[0] - w(np.array([y0 - eps]))[0]) / (2 * eps)
        assert np.log(slope) == pytest.approx(w.log_slope(np.array([y0]))[0], rel=1e-4)
    np.testing.assert_array_equal(Warp(1.0, None)(y), y)
    np.testing.assert_array_equal(Warp(1.0, None).log_slope(y), np.zeros(len(y)))


def test_monotonicity_of_a_monotone_table():
    space, oracle, _ = chain_problem()
    m = edge_monotonicity(oracle.objectives, space)
    assert m["dimension"].tolist() == ["x", "y", "z", "all"]
    assert m["edges"].tolist() == [48, 48, 48, 144]  # ℓ^(n−1)·(ℓ−1) per dimension
    assert (m[["delta_monotone", "rho_monotone", "both_monotone"]] == 1.0).all().all()
    assert (m[["delta_violation_max", "rho_violation_max", "delta_violation_mean", "rho_violation_mean"]] == 0.0).all().all()


def test_monotonicity_by_hand():
    space = Space(("p", "q"), 2)  # (0,0)=0 (0,1)=1 (1,0)=2 (1,1)=3
    # edges of p: 0->2, 1->3; of q: 0->1, 2->3
    delta = np.array([0.0, 0.5, 0.2, 0.3])  # p: 0->2 up, 1->3 falls by 0.2; q: 0->1 up, 2->3 up
    rho = np.array([1.0, 0.8, 0.9, 0.95])   # p: 0->2 down, 1->3 rises by 0.15; q: 0->1 down, 2->3 rises by 0.05
    m = edge_monotonicity(np.column_stack([delta, rho]), space).set_index("dimension")
    assert m.loc["p", "delta_monotone"] == 0.5 and m.loc["q", "delta_monotone"] == 1.0
    assert m.loc["p", "rho_monotone"] == 0.5 and m.loc["q", "rho_monotone"] == 0.5
    assert m.loc["p", "both_monotone"] == 0.5 and m.loc["q", "both_monotone"] == 0.5
    assert m.loc["all", "both_monotone"] == 0.5 and m.loc["all", "edges"] == 4
    assert m.loc["p", "delta_violation_max"] == pytest.approx(0.2) and m.loc["all", "rho_violation_max"] == pytest.approx(0.15)
    assert m.loc["all", "rho_violation_mean"] == pytest.approx(0.1)
    loose = edge_monotonicity(np.column_stack([delta, rho]), space, tol=0.1).set_index("dimension")
    assert loose.loc["all", "delta_monotone"] == 0.75 and loose.loc["all", "rho_monotone"] == 0.75
    np.testing.assert_array_equal(lattice_edges(space, 0)[1], [2, 3])


def test_monotonicity_errors_and_table_form():
    space = Space(("p", "q"), 3)
    with pytest.raises(ValueError, match=r"\(9, 2\)"):
        edge_monotonicity(np.zeros((8, 2)), space)
    with pytest.raises(ValueError, match="tol"):
        edge_monotonicity(np.zeros((9, 2)), space, tol=-1)
    with pytest.raises(ValueError, match="dimension 2"):
        lattice_edges(space, 2)
    t = table_monotonicity(synthetic_table(Space(NAMES4, 3)), "syn", "kid")
    assert t[["benchmark", "metric"]].drop_duplicates().values.tolist() == [["syn", "kid"]] and len(t) == 5


@pytest.mark.parametrize("q", [1, 4])
def test_est_recall_uses_only_what_was_evaluated(q):
    """Scramble the values of every configuration the run did not evaluate: the run, its estimates included,
    must not change (so the estimate reads nothing a user without the ground truth would not have)."""
    space = Space(NAMES4, 4)
    table = synthetic_table(space, seed=2)
    oracle = TableOracle.from_table(table, space)
    trace = run_search("pnd", oracle, space, 80, seed=1, batch_size=q)
    assert trace["est_recall"].notna().sum() > 20
    evaluated = space.indices(trace[list(space.names)].to_numpy())
    hidden = np.setdiff1d(np.arange(space.size), evaluated)
    scrambled = oracle.objectives.copy()
    scrambled[hidden] = np.random.default_rng(0).permutation(scrambled[hidden])[:, ::-1]  # shuffled, δ and ρ swapped
    again = run_search("pnd", TableOracle(scrambled, space), space, 80, seed=1, batch_size=q)
    pd.testing.assert_frame_equal(again, trace)


def test_est_recall_tracks_the_true_recall_and_ends_at_one():
    space = Space(NAMES4, 4)
    problem = GroundTruth.from_table(synthetic_table(space, seed=3), "syn", "ssim")
    trace = run_search("pnd", problem.oracle, space, space.size, seed=0)
    est = trace["est_recall"].to_numpy()
    true = np.cumsum(trace["is_new"].to_numpy() & problem.pareto[space.indices(trace[list(space.names)].to_numpy())]) / problem.pareto.sum()
    assert est[-1] == 1.0 and true[-1] == 1.0  # nothing left unevaluated: the estimate is certain
    known = ~np.isnan(est)
    assert np.corrcoef(est[known], true[known])[0, 1] > 0.8


def test_batches_and_the_stopping_rule():
    space = Space(NAMES4, 4)
    problem = GroundTruth.from_table(synthetic_table(space, seed=3), "syn", "ssim")
    calls = []
    oracle = LiveOracle(lambda ts: calls.append(len(ts)) or problem.oracle.evaluate_batch(np.array(ts)).tolist())
    trace = run_search("pnd", oracle, space, space.size, seed=0, batch_size=4, stop_at_recall=0.9)
    assert max(calls) <= 4 and len(calls) == trace["round"].iloc[-1]  # one oracle batch of at most q per round
    assert trace["round"].is_monotonic_increasing and trace.groupby("round").size().max() <= 4
    est = trace["est_recall"].to_numpy()
    assert est[-1] >= 0.9 and (np.nan_to_num(est[:-4]) < 0.9).all()  # it stops in the round the estimate reaches 0.9
    assert len(trace) < space.size
    with pytest.raises(ValueError, match="stop_at_recall"):
        run_search("pnd", oracle, space, 10, seed=0, stop_at_recall=1.5)


def test_fits_start_afresh_so_a_degenerate_optimum_does_not_stick():
    """The development table interacting-2 (pipeline.search.studies.synthetic): warm-started from the previous fit, the δ GP
    fell at 48 evaluations into an all-noise optimum (length scales at their lower bound) and stayed there, and the last
    members of P*, near the all-maximum corner, came at u = 1,293 of 1,296. Every fit from the default start: u = 117."""
    from pipeline.search.ground_truth import table_space
    from pipeline.search.studies.synthetic import synthetic_table as generated

    table = generated("interacting", 2)
    space = table_space(table)
    oracle = TableOracle.from_table(table, space, delta="delta_norm", rho="rho_norm")
    pareto = np.zeros(space.size, dtype=bool)
    pareto[space.indices(table.loc[table["pareto"], list(space.names)].to_numpy())] = True
    trace = run_search("pnd", oracle, space, 400, seed=0)
    assert run_metrics(trace, pareto, space)["u_full"] <= 200
