"""Racing over inputs (issue 30, `pipeline.search.racing.racing`): slices, the paired bound against a direct computation, the
rule never stopping a configuration the bound leaves on the front, the cost columns, and a raced run's front."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

from pipeline.front.pareto import pareto_mask
from pipeline.search import RacingOracle, TableOracle, run_search
from pipeline.search.scoring.cost import completed_share, evaluations_to_complete
from pipeline.search.ledger import Ledger
from pipeline.search.racing.live_racing import LiveRacingOracle
from pipeline.search.surrogate.gp_surrogate import IncrementalGP
from pipeline.search.racing.racing import Race, input_order, paired_bounds, slice_ends
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

SPACE = Space(("p0", "p1", "p2"), 4)  # 64 configurations


def wide_table(n: int = 120, seed: int = 0) -> tuple[np.ndarray, UnitOutcomes]:
    """δ = 0.05·(3·θ_0 + 2·θ_1 + θ_2) and ρ = 1 − (θ_0 + θ_1 + θ_2)/9: among configurations of one total level (one
    ρ) the heavier on θ_0 dominate, and distinct δ differ by ≥ 0.05, 6 inputs of 120. θ fails the first n·δ(θ)
    inputs of one fixed shuffled list (nested failure sets: wide, paired margins); fidelity is ρ on every input."""
    grid = SPACE.grid()
    weighted = 0.05 * (grid @ np.array([3.0, 2.0, 1.0]))
    rho = 1.0 - grid.sum(axis=1) / 9.0
    fails = np.random.default_rng(seed).permutation(n)
    outcomes = np.ones((SPACE.size, n))
    for i, d in enumerate(weighted):
        outcomes[i, fails[: round(d * n)]] = 0.0
    delta = 1.0 - outcomes.mean(axis=1)
    units = UnitOutcomes(outcomes, np.ones(n), np.repeat(rho[:, None], n, axis=1))
    return np.column_stack([delta, rho]), units


def test_slices_grow_geometrically_to_n():
    assert slice_ends(360, 30, 2.0).tolist() == [30, 60, 120, 240, 360]
    assert slice_ends(40, 30, 2.0).tolist() == [30, 40]
    assert slice_ends(20, 30, 2.0).tolist() == [20]
    with pytest.raises(ValueError, match="growth > 1"):
        slice_ends(100, 10, 1.0)
    order = input_order(50, 3)
    assert sorted(order.tolist()) == list(range(50)) and order.tolist() == input_order(50, 3).tolist()


def test_paired_bound_is_the_adjusted_mean_minus_z_standard_errors():
    """Against the formula computed directly on the augmented sample (two pseudo-observations ±1)."""
    rng = np.random.default_rng(1)
    theta = rng.integers(0, 2, 40).astype(float)
    rivals = rng.integers(0, 2, (3, 40)).astype(float)
    bound, mean, var = paired_bounds(theta, rivals, n=200, z=2.0)
    for k in range(3):
        d = np.concatenate([theta - rivals[k], [1.0, -1.0]])
        se = np.sqrt(d.var(ddof=1) * (1 - 40 / 200) / len(d))
        assert bound[k] == pytest.approx(d.mean() - 2.0 * se)
        assert mean[k] == pytest.approx((theta - rivals[k]).mean())
        assert var[k] == pytest.approx(se ** 2)
    # at m = n the finite-population correction leaves nothing to estimate
    assert paired_bounds(theta, rivals, n=40)[2] == pytest.approx(np.zeros(3))


def test_a_configuration_is_stopped_only_when_the_bound_says_it_is_dominated():
    """Replaying the races of a run in its order (q = 1: the rivals of θ are the configurations completed before it),
    with the bound recomputed at every slice: a stopped θ stops at the first slice where some rival (ρ' ≥ ρ, δ' above
    the least completed δ) has a bound > 0; a completed θ has no such slice before n."""
    objectives, units = wide_table(n=90, seed=2)
    oracle = RacingOracle(objectives, SPACE, units, seed=0, first=10, growth=2.0)
    trace = run_search("random", oracle, SPACE, SPACE.size, seed=4)
    order, ends, n = oracle.race.order, oracle.race.ends, oracle.race.n
    rivals: list[int] = []
    stopped = 0
    for i, inputs in zip(SPACE.indices(trace[list(SPACE.names)].to_numpy()), trace["inputs"]):
        least = min(objectives[rivals, 0]) if rivals else np.inf
        usable = [r for r in rivals if objectives[r, 1] >= objectives[i, 1] and objectives[r, 0] > least]
        first_stop = next((int(e) for e in ends[:-1] if usable and (paired_bounds(
            units.outcomes[i, order[:e]], units.outcomes[usable][:, order[:e]], n, oracle.race.z)[0] > 0).any()), n)
        assert inputs == first_stop, (i, inputs, first_stop)
        if inputs == n:
            rivals.append(int(i))
        else:
            stopped += 1
    assert stopped > 10  # the replay saw stops


def test_the_ledger_counts_model_evaluations():
    objectives, units = wide_table(n=60)
    full = run_search("random", TableOracle(objectives, SPACE, units), SPACE, 80, seed=1)
    assert (full["inputs"] == np.where(full["is_new"], 60, 0)).all()
    assert full["evaluations"].iloc[-1] == full["u"].iloc[-1] * 60
    raced = RacingOracle(objectives, SPACE, units, first=10)
    trace = run_search("random", raced, SPACE, 80, seed=1)
    assert trace["evaluations"].iloc[-1] == len(raced.spent_pairs()) < trace["u"].iloc[-1] * 60
    assert (trace.loc[~trace["is_new"], "inputs"] == 0).all()
    plain = run_search("random", TableOracle(objectives, SPACE), SPACE, 80, seed=1)
    assert "inputs" not in plain and "evaluations" not in plain  # n unknown: no cost columns, the trace of before


def test_the_ledger_refuses_the_outcomes_of_a_stopped_configuration():
    objectives, units = wide_table(n=120)
    ledger = Ledger(RacingOracle(objectives, SPACE, units, first=10), SPACE, 64)
    ledger.propose(SPACE.grid()[np.random.default_rng(4).permutation(SPACE.size)])
    partial = np.flatnonzero(~ledger.complete(np.arange(SPACE.size)))
    assert len(partial)
    with pytest.raises(ValueError, match="stopped by racing"):
        ledger.inputs_of(partial[:1])
    assert (ledger.variance(partial)[:, 0] > 0).all() and (ledger.variance(partial)[:, 1] == 0).all()


def test_a_raced_run_finds_the_front_of_a_full_run_on_a_table_with_wide_margins():
    """Through all of Θ, the front of what racing completed is P*, as the full run's is, for less."""
    objectives, units = wide_table(n=120)
    truth = set(np.flatnonzero(pareto_mask(objectives)))
    for method in ("pnd", "random"):
        full = run_search(method, TableOracle(objectives, SPACE, units), SPACE, SPACE.size, seed=0)
        raced = run_search(method, RacingOracle(objectives, SPACE, units, first=15), SPACE, SPACE.size, seed=0)
        members = np.zeros(SPACE.size, dtype=bool)
        members[list(truth)] = True
        assert completed_share(full, members, SPACE, 120) == 1.0 and completed_share(raced, members, SPACE, 120) == 1.0
        done = raced[raced["inputs"] == 120]
        assert set(SPACE.indices(done[list(SPACE.names)].to_numpy())[pareto_mask(done[["delta", "rho"]].to_numpy())]) == truth
        assert raced["evaluations"].iloc[-1] < full["evaluations"].iloc[-1]
        assert evaluations_to_complete(raced, members, SPACE, 120) <= raced["evaluations"].iloc[-1]


def test_a_live_race_answers_what_the_table_race_answers():
    """LiveRacingOracle on a benchmark that answers from the table's outcomes (labels all 1: right = 1) gives the
    answers, costs and completed values of RacingOracle on the same table, asking each input once."""
    objectives, units = wide_table(n=60)
    asked: list[tuple[int, int]] = []

    def evaluate_slices(asks):
        out = []
        for theta, rows, fidelity in asks:
            i = SPACE.index(theta)
            asked.extend((i, r) for r in rows)
            answer = {"prediction": units.outcomes[i, rows].astype(int).tolist()}
            if fidelity:
                answer["rho_phi"] = float(objectives[i, 1])
            out.append(answer)
        return out

    live = LiveRacingOracle(evaluate_slices, SPACE, np.ones(60, dtype=int), clean_score=1.0, metric="phi", first=10)
    table = RacingOracle(objectives, SPACE, units, first=10)
    a = run_search("random", live, SPACE, SPACE.size, seed=2, batch_size=4)
    b = run_search("random", table, SPACE, SPACE.size, seed=2, batch_size=4)
    pd.testing.assert_frame_equal(a.drop(columns=["seconds_perturb", "seconds_infer", "seconds_fidelity"]), b)
    assert len(asked) == len(set(asked)) == a["evaluations"].iloc[-1]
    theta = next(iter(live.values))
    assert live.values[theta]["delta"] == pytest.approx(objectives[SPACE.index(theta), 0])


def test_incremental_gp_with_observation_noise_is_the_exact_posterior():
    """IncrementalGP.add with extra noise per observation against scikit-learn's posterior with a per-sample alpha."""
    rng = np.random.default_rng(0)
    Z = rng.random((30, 2))
    idx = [3, 7, 11, 19, 25]
    y = rng.normal(size=5)
    extra = np.array([0.0, 0.3, 0.0, 1.2, 0.05])
    amplitude, length, noise = 1.5, np.array([0.4, 0.7]), 0.01
    gp = IncrementalGP(Z, amplitude, length, noise, y_mean=0.0, y_scale=1.0)
    for i, v, e in zip(idx, y, extra):
        gp.add(i, float(v), float(e))
    kernel = ConstantKernel(amplitude, "fixed") * RBF(length, "fixed")
    ref = GaussianProcessRegressor(kernel, alpha=noise + extra, optimizer=None).fit(Z[idx], y)
    mean, sd = ref.predict(Z, return_std=True)
    np.testing.assert_allclose(gp.mean(), mean, atol=1e-9)
    np.testing.assert_allclose(gp.sd(), np.sqrt(sd ** 2 + noise), atol=1e-9)


def test_a_race_without_rivals_completes_everything():
    race = Race(20, first=5)
    out = race.run([0, 1], lambda i: 0.5, lambda asks: [np.zeros(len(rows)) for _, rows in asks])
    assert [(r.inputs, r.complete) for r in out] == [(20, True), (20, True)]


def test_a_live_trace_records_the_seconds_of_each_evaluation():
    """From a benchmark's timings: each new configuration's seconds (a race: summed over its slices), 0 for a hit."""
    objectives, units = wide_table(n=60)

    def evaluate_slices(asks):
        return [{"prediction": units.outcomes[SPACE.index(t), rows].astype(int).tolist(), "seconds_infer": 0.5 * len(rows),
                 "seconds_perturb": 1.0, **({"rho_phi": float(objectives[SPACE.index(t), 1])} if f else {})}
                for t, rows, f in asks]

    live = LiveRacingOracle(evaluate_slices, SPACE, np.ones(60, dtype=int), clean_score=1.0, metric="phi", first=10)
    trace = run_search("random", live, SPACE, 80, seed=2)
    new = trace["is_new"].to_numpy()
    np.testing.assert_allclose(trace.loc[new, "seconds_infer"], 0.5 * trace.loc[new, "inputs"])
    slices = {10: 1, 20: 2, 40: 3, 60: 4}  # first 10, then 20, 40, 60: one perturbation per slice
    np.testing.assert_allclose(trace.loc[new, "seconds_perturb"], [slices[int(k)] for k in trace.loc[new, "inputs"]])
    assert (trace.loc[~new, ["seconds_perturb", "seconds_infer", "seconds_fidelity"]] == 0).all().all()
