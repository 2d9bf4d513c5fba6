"""Oracles (table lookups, cached live calls) and the budget accounting of TestNav Algorithm 1."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.search import Ledger, LiveOracle, TableOracle
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table


@pytest.fixture
def space():
    return Space(NAMES4[:2], 3)


def test_table_oracle_looks_up_the_row_of_each_configuration(space):
    table = synthetic_table(space).sample(frac=1.0, random_state=1)  # row order must not matter
    oracle = TableOracle.from_table(table, space, delta="delta_norm", rho="rho_ssim_norm")
    for row in table.itertuples(index=False):
        theta = tuple(getattr(row, n) for n in space.names)
        assert oracle(theta) == (row.delta_norm, row.rho_ssim_norm)
    thetas = np.array([[2, 1], [0, 0], [2, 1]])
    expected = [table.set_index(list(space.names)).loc[tuple(t), ["delta_norm", "rho_ssim_norm"]].to_numpy(float) for t in thetas]
    np.testing.assert_array_equal(oracle.evaluate_batch(thetas), np.array(expected))


def test_table_oracle_rejects_incomplete_tables(space):
    table = synthetic_table(space)
    with pytest.raises(ValueError, match="once"):
        TableOracle.from_table(table.iloc[1:], space, "delta_norm", "rho_ssim_norm")
    with pytest.raises(ValueError, match="once"):
        TableOracle.from_table(pd.concat([table, table.iloc[:1]]), space, "delta_norm", "rho_ssim_norm")
    with pytest.raises(ValueError, match="rho_lpips_norm"):
        TableOracle.from_table(table, space, "delta_norm", "rho_lpips_norm")
    with pytest.raises(ValueError, match="outside the space"):
        TableOracle.from_table(table, space, "delta_norm", "rho_ssim_norm")((0, 3))


def test_live_oracle_caches_and_counts_calls():
    calls = []

    def evaluate(theta):
        calls.append(theta)
        return sum(theta) / 4, 1 - max(theta) / 2

    oracle = LiveOracle.one_at_a_time(evaluate)
    out = oracle.evaluate_batch(np.array([[1, 2], [0, 0], [1, 2]]))
    np.testing.assert_allclose(out, [[0.75, 0.0], [0.0, 1.0], [0.75, 0.0]])
    assert oracle((0, 0)) == (0.0, 1.0)
    assert calls == [(1, 2), (0, 0)] and oracle.calls == 2
    assert all(isinstance(v, int) for v in calls[0])


def test_live_oracle_from_benchmark_dict_and_bad_values():
    batches = []
    oracle = LiveOracle.from_benchmark(lambda ts: batches.append(ts) or [{"delta": 0.2 * t[0], "rho_kid": -0.1, "psi": 0.7} for t in ts], "kid")
    assert oracle((1, 1)) == (0.2, -0.1)
    np.testing.assert_allclose(oracle.evaluate_batch(np.array([[2, 0], [1, 1], [3, 0], [2, 0]])), [[0.4, -0.1], [0.2, -0.1], [0.6, -0.1], [0.4, -0.1]])
    assert batches == [[(1, 1)], [(2, 0), (3, 0)]]  # one call per batch, with only its uncached configurations, once each
    with pytest.raises(ValueError, match="rho_ssim"):
        LiveOracle.from_benchmark(lambda ts: [{"delta": 0.2}], "ssim")((0, 0))
    with pytest.raises(ValueError, match="1 answers for 2"):
        LiveOracle(lambda ts: [(0.0, 0.0)]).evaluate_batch(np.array([[0, 0], [1, 0]]))
    with pytest.raises(ValueError, match="non-finite"):
        LiveOracle.one_at_a_time(lambda t: (float("nan"), 0.0))((0, 1))


def test_ledger_counts_every_proposal_and_only_new_configurations(space):
    calls = []
    oracle = LiveOracle.one_at_a_time(lambda t: (calls.append(t) or float(t[0]), float(t[1])))
    ledger = Ledger(oracle, space, budget=7)
    ledger.propose(np.array([[0, 1], [2, 2], [0, 1]]))  # the repeat inside one batch is a cache hit
    ledger.propose(np.array([[2, 2]]))
    values = ledger.propose(np.array([[1, 0], [0, 1], [2, 0], [1, 1], [1, 2]]))  # only 3 fit in B = 7
    assert len(values) == 3 and ledger.exhausted and ledger.remaining == 0
    assert len(ledger.propose(np.array([[0, 0]]))) == 0
    trace = ledger.trace()
    assert list(trace.columns) == ["b", *space.names, "round", "is_new", "u", "delta", "rho"]
    assert trace["b"].tolist() == list(range(1, 8))
    assert trace["is_new"].tolist() == [True, True, False, False, True, False, True]
    assert trace["u"].tolist() == [1, 2, 2, 2, 3, 3, 4]
    assert (trace["u"] <= trace["b"]).all()
    assert calls == [(0, 1), (2, 2), (1, 0), (2, 0)]  # the oracle saw each configuration once
    np.testing.assert_array_equal(trace[list(space.names)].to_numpy()[-1], [2, 0])
    np.testing.assert_array_equal(trace[["delta", "rho"]].to_numpy()[2], [0.0, 1.0])


def test_rounds_hold_at_most_q_new_configurations_and_each_call_starts_one(space):
    batches = []
    oracle = LiveOracle(lambda ts: batches.append(list(ts)) or [(float(t[0]), float(t[1])) for t in ts])
    ledger = Ledger(oracle, space, budget=20, batch_size=2)
    ledger.propose(np.array([[0, 0], [0, 1], [0, 0], [1, 1], [2, 2]]))  # 4 new: rounds 1, 1, (hit) 1, 2, 2
    ledger.propose(np.array([[0, 1]]))                                  # only a hit: no evaluation, the last round
    ledger.propose(np.array([[2, 0]]))                                  # a new call: round 3
    trace = ledger.trace()
    assert trace["round"].tolist() == [1, 1, 1, 2, 2, 2, 3]
    assert batches == [[(0, 0), (0, 1)], [(1, 1), (2, 2)], [(2, 0)]]   # one oracle batch per round, at most q each
    for _, rows in trace[trace["is_new"]].groupby("round"):
        assert len(rows) <= 2
    with pytest.raises(ValueError, match="batch size q"):
        Ledger(oracle, space, 5, batch_size=0)


def test_estimates_are_carried_forward_in_the_trace(space):
    ledger = Ledger(LiveOracle.one_at_a_time(lambda t: (0.0, 0.0)), space, budget=5)
    with pytest.raises(ValueError, match="no proposal"):
        ledger.estimate(0.5)
    ledger.propose(np.array([[0, 0], [1, 0]]))
    ledger.estimate(0.25)
    ledger.propose(np.array([[2, 0]]))
    assert ledger.last_estimate == 0.25
    ledger.propose(np.array([[0, 1]]))
    ledger.estimate(0.75)
    trace = ledger.trace()
    assert np.isnan(trace["est_recall"].iloc[0]) and trace["est_recall"].tolist()[1:] == [0.25, 0.25, 0.75]


def test_ledger_rejects_bad_budget_and_clashing_names(space):
    oracle = LiveOracle.one_at_a_time(lambda t: (0.0, 0.0))
    with pytest.raises(ValueError, match="at least 1"):
        Ledger(oracle, space, 0)
    with pytest.raises(ValueError, match="clash"):
        Ledger(oracle, Space(("u", "q"), 2), 3)


def test_progress_hears_each_round_once_with_its_front_and_estimate(space):
    from pipeline.front.pareto import pareto_mask
    from pipeline.search import run_search

    table = synthetic_table(space)
    oracle = TableOracle.from_table(table, space, delta="delta_norm", rho="rho_ssim_norm")
    heard: list[dict] = []
    trace = run_search("pnd", oracle, space, budget=space.size, seed=0, batch_size=2, progress=heard.append)
    assert [h["round"] for h in heard] == list(range(1, int(trace["round"].max()) + 1))
    for h in heard:
        done = trace[trace["round"] <= h["round"]]
        assert h["u"] == int(done["u"].max())
        new = done[done["is_new"]]
        assert h["front"] == int(pareto_mask(new[["delta", "rho"]].to_numpy()).sum())
    estimates = [h["est_recall"] for h in heard if not np.isnan(h["est_recall"])]
    assert estimates and estimates[-1] == trace["est_recall"].iloc[-1]
