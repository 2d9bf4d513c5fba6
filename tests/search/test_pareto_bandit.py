"""The Pareto front identification bandit (Auer et al. 2016) against its guarantee on tiny i.i.d. instances, exact
on a finite population sampled to the end, and its accounting of model evaluations."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.front.pareto import dominated_by, pareto_mask
from pipeline.search.methods.pareto_bandit import (
    evaluations_to_recover,
    hoeffding_serfling_radius,
    pareto_bandit,
    units_pareto_bandit,
    units_sampler,
    units_span,
)
from pipeline.search.studies.synthetic import synthetic_table, synthetic_units
from pipeline.search.racing.unit_outcomes import UnitOutcomes

DELTA = 0.1
RUNS = 100
HORIZON = 2000  # pulls per arm an i.i.d. run may take: a broken rule fails here instead of running on


def bernoulli_sampler(means: np.ndarray, seed: int):
    """An i.i.d. sampler: independent Bernoulli rewards of the given (K, 2) means, whatever the input range."""
    rng = np.random.default_rng(seed)

    def sample(arms: np.ndarray, start: int, stop: int) -> np.ndarray:
        return (rng.random((len(arms), stop - start, 2)) < means[arms][:, None, :]).astype(float)

    return sample


def recording(sample):
    """`sample`, keeping every (arm, start, stop) it was asked for."""
    calls: list[tuple[np.ndarray, int, int]] = []

    def wrapped(arms: np.ndarray, start: int, stop: int) -> np.ndarray:
        calls.append((np.array(arms), start, stop))
        return sample(arms, start, stop)

    return wrapped, calls


def eps_pareto(means: np.ndarray, eps: float) -> set[int]:
    """P_ε: the arms i that no arm j ε-dominates (μ_j ≻ μ_i + ε)."""
    return {i for i in range(len(means)) if not dominated_by(means, means[i : i + 1] + eps)[0]}


def test_dominated_by_matches_the_pairwise_definition() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        points = rng.integers(0, 4, (rng.integers(1, 12), 2)).astype(float)  # many ties
        queries = rng.integers(-1, 5, (9, 2)).astype(float)
        own = rng.integers(-1, len(points), 9)
        expected = [any((p >= q).all() and (p > q).any() for j, p in enumerate(points) if j != o) for q, o in zip(queries, own)]
        assert dominated_by(points, queries, own).tolist() == expected
        assert dominated_by(points, points).tolist() == (~pareto_mask(points)).tolist()


def test_radius_is_exact_at_the_population_and_shrinks() -> None:
    radii = [hoeffding_serfling_radius(t, 50, 6, 2, DELTA, 1.0) for t in range(1, 51)]
    assert radii[-1] == 0.0 and bool((np.diff(radii) < 0).all())
    iid = hoeffding_serfling_radius(20, None, 6, 2, DELTA, 1.0)
    assert iid == pytest.approx(np.sqrt(np.log(4 * 6 * 2 * 400 / DELTA) / 40))
    assert radii[19] < iid and hoeffding_serfling_radius(20, None, 6, 2, DELTA, 2.0) == pytest.approx(2 * iid)


def test_iid_runs_return_the_pareto_set_with_probability_one_minus_delta() -> None:
    means = np.array([[0.9, 0.1], [0.6, 0.6], [0.1, 0.9], [0.3, 0.3], [0.25, 0.05], [0.05, 0.3]])
    truth = set(np.flatnonzero(pareto_mask(means)).tolist())
    assert truth == {0, 1, 2}
    correct, longest = 0, 0
    for seed in range(RUNS):
        result = pareto_bandit(bernoulli_sampler(means, seed), len(means), HORIZON, delta=DELTA, block=10, finite=False)
        correct += set(result.answer.tolist()) == truth
        longest = max(longest, int(result.pulls.max()))
    assert correct >= (1 - DELTA) * RUNS
    assert longest < HORIZON  # every run stopped on its own: every arm was decided


def test_eps_runs_lie_between_the_pareto_set_and_the_eps_pareto_set() -> None:
    eps = 0.25
    means = np.array([[0.8, 0.2], [0.5, 0.5], [0.47, 0.48], [0.2, 0.8], [0.15, 0.15]])  # arm 2: within ε of arm 1
    truth, relaxed = set(np.flatnonzero(pareto_mask(means)).tolist()), eps_pareto(means, eps)
    assert truth == {0, 1, 3} and relaxed == {0, 1, 2, 3}
    within = 0
    for seed in range(RUNS):
        result = pareto_bandit(bernoulli_sampler(means, seed), len(means), HORIZON, delta=DELTA, eps=eps, block=10,
                               finite=False)
        within += truth <= set(result.answer.tolist()) <= relaxed
        assert result.pulls.max() < HORIZON  # ε lets it stop although arm 2 is 0.03 from arm 1
    assert within >= (1 - DELTA) * RUNS


def test_a_population_sampled_to_the_end_gives_the_exact_pareto_set() -> None:
    # close means (quarters, so sums are exact): no radius separates them before all n inputs are in; ties,
    # a weakly dominated arm (3 by 1) and two identical arms (4, 5) test the rule of `pareto_mask`
    rng = np.random.default_rng(0)
    n, means = 24, np.array([[0.5, 0.25], [0.5, 0.5], [0.25, 0.75], [0.5, 0.25], [0.25, 0.75], [0.25, 0.75], [0.0, 1.0], [0.0, 0.5]])
    rewards = np.stack([np.column_stack([rng.permutation(np.repeat([mu[0] - 0.25, mu[0] + 0.25], n // 2)),
                                         rng.permutation(np.repeat([mu[1] - 0.25, mu[1] + 0.25], n // 2))]) for mu in means])
    result = pareto_bandit(lambda arms, start, stop: rewards[arms, start:stop], len(means), n, span=(1.5, 1.5))
    assert (result.pulls == n).all() and result.evaluations == len(means) * n
    assert result.answer.tolist() == np.flatnonzero(pareto_mask(means)).tolist() == [1, 2, 4, 5, 6]
    assert (result.declared["evaluations"] == len(means) * n).all()


def small_layer(set_level: bool) -> UnitOutcomes:
    """40 configurations on 200 inputs: 20 along a trade-off (a severity raises the failure rate and lowers the
    fidelity) and a copy of each that fails 0.35 less often at 0.35 less fidelity, dominated by a wide margin."""
    rng = np.random.default_rng(7)
    severity, copy = np.tile(np.linspace(0, 1, 20), 2), np.repeat([0.0, 0.35], 20)
    outcomes = (rng.random((40, 200)) >= (0.45 + 0.5 * severity - copy)[:, None]).astype(float)
    rho = 0.9 - 0.5 * severity**2 - copy
    fidelity = rho if set_level else np.clip(rho[:, None] + rng.normal(0, 0.05, (40, 200)), 0, 1)
    return UnitOutcomes(outcomes, np.ones(200), fidelity)


@pytest.mark.parametrize("set_level", [False, True])
def test_evaluations_are_counted_exactly_and_no_input_is_pulled_twice(set_level: bool) -> None:
    units = small_layer(set_level)
    order = np.random.default_rng(1).permutation(200)
    sample, calls = recording(units_sampler(units, order))
    result = pareto_bandit(sample, 40, 200, span=units_span(units), exact=(False, set_level), block=3)
    pulled = [(int(arm), int(order[i])) for arms, start, stop in calls for arm in arms for i in range(start, stop)]
    assert len(pulled) == len(set(pulled)) == result.evaluations == result.pulls.sum() <= 40 * 200
    assert (result.pulls[20:] < 200).all()  # every dominated copy was discarded before the end
    per_arm = np.bincount([arm for arm, _ in pulled], minlength=40)
    assert per_arm.tolist() == result.pulls.tolist()
    assert result.declared["evaluations"].is_monotonic_increasing
    assert result.declared["index"].is_unique and sorted(result.declared["index"]) == result.answer.tolist()
    means = np.column_stack([(1 - units.outcomes).mean(1), units.fidelity if set_level else units.fidelity.mean(1)])
    assert result.answer.tolist() == np.flatnonzero(pareto_mask(means)).tolist()


def test_a_set_level_fidelity_is_exact_and_saves_evaluations() -> None:
    units = small_layer(True)
    order = np.arange(200)
    exact = units_pareto_bandit(units, order)
    spread = UnitOutcomes(units.outcomes, units.clean, np.repeat(units.fidelity[:, None], 200, axis=1))
    estimated = units_pareto_bandit(spread, order)  # the same values, but its ρ now carries a radius
    assert exact.answer.tolist() == estimated.answer.tolist()
    assert exact.evaluations < estimated.evaluations


def test_the_smooth_synthetic_table_is_recovered_within_its_budget() -> None:
    units, table = synthetic_units("smooth", 0), synthetic_table("smooth", 0)
    result = units_pareto_bandit(units, np.random.default_rng(0).permutation(len(units.clean)))
    front = np.flatnonzero(table["pareto"].to_numpy())
    assert result.answer.tolist() == front.tolist()
    assert result.evaluations <= units.outcomes.size
    assert evaluations_to_recover(result.declared, front) == result.declared["evaluations"].max()


def test_evaluations_to_recover_reads_the_first_row_holding_every_member() -> None:
    declared = pd.DataFrame({"evaluations": [5, 9, 9, 20], "index": [3, 1, 7, 4]})
    assert evaluations_to_recover(declared, [3]) == 5.0
    assert evaluations_to_recover(declared, [1, 3, 7]) == 9.0
    assert evaluations_to_recover(declared, [4, 3]) == 20.0
    assert np.isnan(evaluations_to_recover(declared, [3, 8]))
    assert evaluations_to_recover(declared, []) == 0.0
