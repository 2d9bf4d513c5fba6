"""Successive halving over inputs: its schedule and cost in closed form, exact on a table with wide margins,
seeded, and never evaluating a configuration on an input twice."""
from __future__ import annotations

import numpy as np

from pipeline.front.pareto import pareto_mask
from pipeline.search.methods.pareto_bandit import evaluations_to_recover
from pipeline.search.methods.successive_halving import rungs, successive_halving

N = 24


def wide_margin_table() -> tuple[np.ndarray, np.ndarray]:
    """(36, N, 2) per-input rewards and P*: arms 0-2 trade one objective for the other with the same value on every
    input; each of the other 33 has every per-input value at least 0.2 below one of them on both objectives."""
    rng = np.random.default_rng(4)
    front = np.array([[0.9, 0.3], [0.6, 0.6], [0.3, 0.9]])
    rewards = np.empty((36, N, 2))
    rewards[:3] = front[:, None, :]
    for arm in range(3, 36):
        rewards[arm] = front[arm % 3] - rng.uniform(0.2, 0.3, (N, 2))
    return rewards, np.array([0, 1, 2])


def table_sampler(rewards: np.ndarray, calls: list[tuple[np.ndarray, int, int]] | None = None):
    def sample(arms: np.ndarray, start: int, stop: int) -> np.ndarray:
        if calls is not None:
            calls.append((np.array(arms), start, stop))
        return rewards[arms, start:stop]

    return sample


def test_the_schedule_keeps_a_fraction_and_ends_at_n() -> None:
    assert rungs(1296, 200) == [(1296, 10), (432, 30), (144, 90), (48, 200)]
    assert rungs(36, N, r0=3, eta=2) == [(36, 3), (18, 6), (9, 12), (5, 24)]
    assert rungs(10, 5, r0=8) == [(10, 5)]


def test_wide_margins_give_the_exact_front_at_the_closed_form_cost() -> None:
    rewards, front = wide_margin_table()
    calls: list[tuple[np.ndarray, int, int]] = []
    result = successive_halving(table_sampler(rewards, calls), 36, N, r0=3, eta=2)
    assert result.answer.tolist() == front.tolist()
    cost = 36 * 3 + 18 * (6 - 3) + 9 * (12 - 6) + 5 * (24 - 12)  # Σ survivors × inputs added
    assert result.evaluations == cost == 276 == result.pulls.sum()
    assert result.declared["evaluations"].tolist() == [cost] * 3
    assert evaluations_to_recover(result.declared, front) == cost
    pulled = [(int(arm), i) for arms, start, stop in calls for arm in arms for i in range(start, stop)]
    assert len(pulled) == len(set(pulled)) == cost  # each configuration's inputs are a prefix, none twice
    assert sorted(np.bincount(result.pulls, minlength=N + 1).nonzero()[0].tolist()) == [3, 6, 12, 24]


def test_one_rung_at_n_is_the_exhaustive_front() -> None:
    rewards = np.random.default_rng(2).integers(0, 3, (30, 8, 2)) / 2
    result = successive_halving(table_sampler(rewards), 30, 8, r0=8)
    assert result.evaluations == 30 * 8
    assert result.answer.tolist() == np.flatnonzero(pareto_mask(rewards.mean(axis=1))).tolist()


def test_it_is_seeded() -> None:
    rewards = np.ones((60, 12, 2))  # every configuration ties: only the generator picks the survivors
    runs = [successive_halving(table_sampler(rewards), 60, 12, r0=2, eta=3, seed=seed) for seed in (0, 0, 1)]
    assert runs[0].answer.tolist() == runs[1].answer.tolist() and (runs[0].pulls == runs[1].pulls).all()
    assert runs[0].answer.tolist() != runs[2].answer.tolist()
    assert len(runs[0].answer) == rungs(60, 12, r0=2, eta=3)[-1][0] == 7
