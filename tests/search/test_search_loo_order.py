"""The leave-one-out order (issue 20, the limit of surrogate search): the closed form against conditioning
on every other point one at a time, and the order on tables whose answer is known."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.front.pareto import pareto_mask
from pipeline.search.studies.loo_order import loo_order_u, loo_predictive, membership_probability
from pipeline.front.space import Space


def test_loo_predictive_matches_conditioning_on_the_others():
    rng = np.random.default_rng(3)
    Z, y = rng.random((15, 3)), rng.standard_normal(15)
    amplitude, length_scale, noise = 1.7, np.array([0.4, 0.9, 2.0]), 0.05
    mean, sd = loo_predictive(Z, y, amplitude, length_scale, noise)

    def kernel(a, b):
        d = (a[:, None, :] - b[None, :, :]) / length_scale
        return amplitude * np.exp(-0.5 * (d**2).sum(axis=2))

    for i in range(len(y)):
        rest = np.delete(np.arange(len(y)), i)
        K = kernel(Z[rest], Z[rest]) + noise * np.eye(len(rest))
        k = kernel(Z[i : i + 1], Z[rest])[0]
        expect_mean = k @ np.linalg.solve(K, y[rest])
        expect_var = amplitude + noise - k @ np.linalg.solve(K, k)
        assert mean[i] == pytest.approx(expect_mean, abs=1e-8)
        assert sd[i] == pytest.approx(np.sqrt(expect_var), abs=1e-8)


def chain() -> tuple[Space, np.ndarray]:
    """A linear 4^3 table (δ = θ·(3, 2, 1), ρ = 1 − θ·(1, 2, 3)): every value follows from its neighbours."""
    space = Space(("x", "y", "z"), 4)
    grid = space.grid().astype(float)
    return space, np.column_stack([grid @ np.array([3.0, 2.0, 1.0]), 1.0 - grid @ np.array([1.0, 2.0, 3.0])])


def test_a_table_its_neighbours_predict_puts_p_star_first():
    space, objectives = chain()
    pareto = pareto_mask(objectives)
    p = membership_probability(objectives, space)
    assert loo_order_u(p, pareto) == pareto.sum() == 10
    assert p[pareto].min() > 0.5 > p[~pareto].max()


def test_a_member_that_noise_alone_made_comes_last():
    # lift an interior configuration's fidelity onto the front: nothing around it predicts that
    space, objectives = chain()
    lifted = int(space.indices(np.array([[1, 2, 1]]))[0])
    objectives[lifted, 1] += 6.0
    pareto = pareto_mask(objectives)
    assert pareto[lifted]
    p = membership_probability(objectives, space)
    assert p[lifted] == p[pareto].min()
    assert loo_order_u(p, pareto) > pareto.sum()


def test_bad_input_is_refused():
    space, objectives = chain()
    with pytest.raises(ValueError, match=r"\(64, 2\)"):
        membership_probability(objectives[:10], space)
    with pytest.raises(ValueError, match="P\\* is empty"):
        loo_order_u(np.ones(4), np.zeros(4, dtype=bool))
