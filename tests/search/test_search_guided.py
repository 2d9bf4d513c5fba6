"""Adequacy-guided searches (§4.4, Fig. 4): δ-only's loop on another objective, scored on the true (δ, ρ)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.plugins.catalog import ADEQUACY
from pipeline.search import METHODS, TableOracle, run_search
from pipeline.search.methods.guided import AdequacyGuided
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table

SPACE = Space(NAMES4[:3], 5)


def _table() -> pd.DataFrame:
    table = synthetic_table(SPACE)
    grid = table[list(SPACE.names)].to_numpy()
    table["adequacy_nac"] = -np.abs(grid - np.array([1, 3, 2])).sum(axis=1)  # peaks at θ = (1, 3, 2)
    return table


def test_every_adequacy_metric_is_a_registered_method():
    for name, label in ((n, ADEQUACY.facts(n)["label"]) for n in ADEQUACY):
        cls = METHODS[name]
        assert issubclass(cls, AdequacyGuided) and cls.label == label and cls.guide == f"adequacy_{name}"
        assert cls.hyperparameters() == METHODS["delta_only"].hyperparameters()


def test_a_guide_equal_to_delta_reproduces_delta_only():
    table = _table()
    truth = TableOracle.from_table(table, SPACE, delta="delta_norm", rho="rho_ssim_norm")
    a = run_search("delta_only", truth, SPACE, 300, seed=4, mu=20)
    b = run_search("nac", TableOracle.from_table(table, SPACE, delta="delta_norm", rho="rho_ssim_norm"), SPACE, 300, seed=4, mu=20,
                   truth=truth)
    pd.testing.assert_frame_equal(a, b)


def test_the_guide_is_pursued_and_the_trace_records_the_true_objectives():
    table = _table()
    truth = TableOracle.from_table(table, SPACE, delta="delta_norm", rho="rho_ssim_norm")
    guided = TableOracle.from_table(table, SPACE, delta="adequacy_nac", rho="rho_ssim_norm")
    trace = run_search("nac", guided, SPACE, 200, seed=0, mu=10)
    thetas = trace[list(SPACE.names)].to_numpy()
    assert (thetas == [1, 3, 2]).all(axis=1).any(), "the maximum of the guide is reached"
    assert trace["delta"].max() == pytest.approx(0.0)  # without truth the trace holds the guide (≤ 0 here)
    recorded = run_search("nac", guided, SPACE, 200, seed=0, mu=10, truth=truth)
    np.testing.assert_array_equal(recorded[list(SPACE.names)].to_numpy(), thetas)  # the same search ...
    np.testing.assert_array_equal(recorded[["delta", "rho"]].to_numpy(), truth.objectives[SPACE.indices(thetas)])  # ... true (δ, ρ)
