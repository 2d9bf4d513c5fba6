"""The per-input layer of the synthetic families (issue 29, item 5): its means are the table's δ and ρ, its inputs
are shared by the configurations (paired, correlated), a clear member of P* is in the core, and it is seeded."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.front.membership import bootstrap_membership
from pipeline.search.studies.synthetic import (
    DEFAULT_SPACE,
    FAMILIES,
    METRIC,
    N_INPUTS,
    SET_FIDELITY,
    _failures,
    synthetic_confidence,
    synthetic_inputs,
    synthetic_table,
)
from pipeline.front.space import Space

SMALL = Space(("a", "b", "c"), 4)


def minmax(v: np.ndarray) -> np.ndarray:
    return (v - v.min()) / (v.max() - v.min())


@pytest.mark.parametrize("family", FAMILIES)
def test_means_reproduce_the_tables_delta_and_rho(family: str) -> None:
    """mean_i (c_i − o_θi) is δ(θ) and mean_i f_θi is ρ(θ) (min-max normalised as the table is; the continuous families
    are on the table's scale already), so the bootstrap's front on the point estimates is the table's P*; rugged's
    outcomes are 0/1 counts on its own m inputs."""
    for seed in (0, 1, 1000):
        table, inputs = synthetic_table(family, seed), synthetic_inputs(family, seed)
        outcomes, clean, fidelity = inputs.outcomes, inputs.clean, inputs.fidelity
        n = outcomes.shape[1]
        assert outcomes.shape == (DEFAULT_SPACE.size, n) and clean.shape == (n,)
        assert ((outcomes >= 0) & (outcomes <= 1)).all()
        delta = (clean[None, :] - outcomes).mean(axis=1)
        np.testing.assert_allclose(minmax(delta), table["delta_norm"], rtol=0, atol=1e-12)
        if family == "rugged":
            assert 40 <= n < 400 and set(np.unique(outcomes)) <= {0.0, 1.0}
        else:
            assert n == N_INPUTS
            np.testing.assert_allclose(delta, table["delta_norm"], rtol=0, atol=1e-12)
        if family in SET_FIDELITY:
            np.testing.assert_array_equal(fidelity, table["rho_norm"])
            fidelity = np.unique(fidelity, return_inverse=True)[1].astype(float)  # its order, which rounding cannot tie
        else:
            assert fidelity.shape == outcomes.shape and (fidelity <= 1).all()
            np.testing.assert_allclose(fidelity.mean(axis=1), table["rho_norm"], rtol=0, atol=1e-12)
        point = bootstrap_membership(outcomes, clean, fidelity, B=1)["on_front"].to_numpy()
        np.testing.assert_array_equal(point, table["pareto"])  # the bootstrap's front on the point estimates is P*


def test_failures_fall_on_the_hardest_inputs_with_exact_counts() -> None:
    """Without per-configuration noise the failure sets are nested along the shared difficulty, each θ failing exactly
    its expected count (the next input in part)."""
    score = np.tile([0.3, 2.0, -1.0, 1.1, 0.0], (3, 1))  # hardest first: inputs 1, 3, 0, 4, 2
    x = _failures(np.array([0.0, 2.5, 4.0]), score)
    np.testing.assert_array_equal(x, [[0, 0, 0, 0, 0], [0.5, 1, 0, 1, 0], [1, 1, 0, 1, 1]])


def test_configurations_share_their_hard_inputs() -> None:
    """The latent difficulty is shared: two configurations failing about half the inputs fail mostly the same ones
    (independent failures would correlate near 0)."""
    inputs = synthetic_inputs("smooth", 0)
    losses = 1 - inputs.outcomes
    middle = losses[(losses.mean(axis=1) > 0.4) & (losses.mean(axis=1) < 0.6)]
    corr = np.corrcoef(middle)[np.triu_indices(len(middle), 1)]
    assert len(middle) >= 10 and corr.mean() > 0.5


@pytest.mark.parametrize("family", FAMILIES)
def test_a_clear_member_has_pi_one_and_a_clear_loser_pi_zero(family: str) -> None:
    """The configuration of highest fidelity keeps every input intact (ρ = 1), so nothing reaches its fidelity in any
    resample: π = 1, in the core. One that another configuration beats by 0.15 on both normalised objectives (on δ
    alone where ρ is a set statistic, held fixed) is never on the front: π = 0."""
    table = synthetic_confidence(family, 2)
    pi = table[f"pi_{METRIC}"].to_numpy()
    top = int(table["rho_norm"].idxmax())
    assert table["rho_norm"].iloc[top] == 1.0 and pi[top] == 1.0 and table[f"set_{METRIC}"].iloc[top] == "core"
    d, r = table["delta_norm"].to_numpy(), table["rho_norm"].to_numpy()
    rho_gap = 0.0 if family in SET_FIDELITY else 0.15
    beaten = ((d[None, :] >= d[:, None] + 0.15) & (r[None, :] >= r[:, None] + rho_gap)).any(axis=1)
    assert beaten.sum() >= (0 if family == "long_front" else 50)  # long_front's objectives conflict along one severity
    assert (pi[beaten] == 0).all()
    assert set(table[f"set_{METRIC}"]) <= {"core", "plausible", "out"}
    np.testing.assert_array_equal(table[f"set_{METRIC}"] == "core", pi >= 0.95)


def test_seeded_and_the_table_untouched() -> None:
    """A (family, seed) gives the same confidence columns every call and another seed others; the table's own columns
    are `synthetic_table`'s, bit for bit."""
    first, again = synthetic_confidence("rugged", 5, SMALL), synthetic_confidence("rugged", 5, SMALL)
    pd.testing.assert_frame_equal(first, again)
    table = synthetic_table("rugged", 5, SMALL)
    pd.testing.assert_frame_equal(first[list(table.columns)], table)
    assert list(first.columns) == [*table.columns, f"pi_{METRIC}", f"set_{METRIC}"]
    assert not np.array_equal(first[f"pi_{METRIC}"], synthetic_confidence("rugged", 6, SMALL)[f"pi_{METRIC}"])
    a, b = synthetic_inputs("crowded", 5, SMALL, n=30), synthetic_inputs("crowded", 5, SMALL, n=30)
    np.testing.assert_array_equal(a.outcomes, b.outcomes)


def test_n_and_its_limits() -> None:
    assert synthetic_inputs("smooth", 0, SMALL, n=50).outcomes.shape == (SMALL.size, 50)
    with pytest.raises(ValueError, match="rugged.*own m"):
        synthetic_inputs("rugged", 0, n=50)
    with pytest.raises(ValueError, match="at least 1"):
        synthetic_inputs("smooth", 0, n=0)
