"""Recall@P*, AUC-Recall@P* and per-run metrics on hand-made traces with known answers (TestNav §4.1)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.search import auc_recall, recall_by_budget, recall_by_unique, recall_curve, run_metrics
from pipeline.front.space import Space


def hand_trace(space: Space, thetas: list[tuple[int, ...]]) -> pd.DataFrame:
    """A trace as the ledger writes it, for a given proposal sequence (objectives irrelevant here)."""
    seen, rows = set(), []
    for b, theta in enumerate(thetas, start=1):
        new = theta not in seen
        seen.add(theta)
        rows.append({"b": b, **dict(zip(space.names, theta)), "is_new": new, "u": len(seen), "delta": 0.0, "rho": 0.0})
    return pd.DataFrame(rows)


def test_recall_curve_by_hand():
    # |Θ| = 4, P* = {0, 2}; visiting 0, 1, 2, 3 gives r = (1/2, 1/2, 1, 1)
    r = recall_curve([0, 1, 2, 3], [0, 2], 4)
    np.testing.assert_allclose(r, [0.5, 0.5, 1.0, 1.0])
    # AUC = (1/4) [ (.5+.5)/2 + (.5+1)/2 + (1+1)/2 ] = 0.5625
    assert auc_recall(r) == pytest.approx(0.5625)


def test_recall_keeps_last_value_when_a_run_stops_early():
    r = recall_curve([2], [0, 2], 4)
    np.testing.assert_allclose(r, [0.5, 0.5, 0.5, 0.5])
    assert auc_recall(r) == pytest.approx(0.375)  # (1/4) * 3 * 0.5
    np.testing.assert_allclose(recall_curve([], [0, 2], 3), [0, 0, 0])


def test_recall_curve_accepts_theta_tuples_and_rows():
    order = [(0, 1), (1, 1), (0, 0)]
    front = [(0, 0), (1, 1)]
    expected = [0.0, 0.5, 1.0, 1.0]
    np.testing.assert_allclose(recall_curve(order, front, 4), expected)
    np.testing.assert_allclose(recall_curve(np.array(order), np.array(front), 4), expected)


def test_auc_of_perfect_and_worst_orders():
    n, front = 10, [0, 1]
    best = recall_curve(list(range(n)), front, n)
    worst = recall_curve(list(range(n))[::-1], front, n)
    # best: r = (.5, 1, 1, …, 1): AUC = (1/10)(0.75 + 8) ; worst: r = (0, …, 0, .5, 1): AUC = (1/10)(0.25 + 0.75)
    assert auc_recall(best) == pytest.approx(0.875)
    assert auc_recall(worst) == pytest.approx(0.1)


@pytest.mark.parametrize("args, match", [
    (([0, 0, 1], [0], 3), "unique"),
    (([0, 1], [], 3), "empty"),
    (([0, 1, 2, 3], [0], 3), "Θ"),
])
def test_recall_curve_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        recall_curve(*args)


def test_run_metrics_on_a_trace_with_cache_hits():
    space = Space(("p", "q"), 2)  # indices: (0,0)=0 (0,1)=1 (1,0)=2 (1,1)=3
    pareto = np.array([False, True, False, True])
    trace = hand_trace(space, [(0, 1), (0, 0), (0, 1), (0, 0), (1, 1), (1, 0)])
    np.testing.assert_allclose(recall_by_budget(trace, pareto, space), [0.5, 0.5, 0.5, 0.5, 1, 1])
    np.testing.assert_allclose(recall_by_unique(trace, pareto, space), [0.5, 0.5, 1, 1])
    m = run_metrics(trace, pareto, space)
    assert m["u_full"] == 3 and m["b_full"] == 5  # third unique configuration, fifth proposal
    assert m["final_recall"] == 1.0 and m["unique"] == 4 and m["proposals"] == 6
    assert m["auc"] == pytest.approx((0.5 + 0.75 + 1.0) / 4)


def test_run_metrics_not_reached_is_nan():
    space = Space(("p", "q"), 2)
    pareto = np.array([False, True, False, True])
    m = run_metrics(hand_trace(space, [(0, 1), (0, 0), (0, 0)]), pareto, space)
    assert m["final_recall"] == 0.5
    assert np.isnan(m["u_full"]) and np.isnan(m["b_full"])
    assert m["auc"] == pytest.approx(0.375)
