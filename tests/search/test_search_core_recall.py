"""The estimate of a search's recall of the core (issue 29, item 4): K holds every core member evaluated, the
estimate reads only evaluated outcomes, it is exact where nothing is uncertain, and GP-PND stops on it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.search import TableOracle, run_search
from pipeline.search.stopping.core_recall import core_of_evaluated, estimated_core_recall, near_front
from pipeline.search.ground_truth import table_space
from pipeline.search.ledger import Ledger
from pipeline.search.studies.synthetic import METRIC, synthetic_confidence, synthetic_units
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

SMALL = Space(("p0", "p1", "p2"), 4)


def problem(family: str, seed: int, space: Space = SMALL) -> tuple[TableOracle, np.ndarray]:
    """The oracle of a generated table with its per-input layer, and its core as a mask over indices."""
    table = synthetic_confidence(family, seed, space)
    s = table_space(table)
    plain = TableOracle.from_table(table, s, delta="delta_norm", rho="rho_norm")
    core = np.zeros(s.size, dtype=bool)
    core[s.indices(table.loc[table[f"set_{METRIC}"] == "core", list(s.names)].to_numpy())] = True
    return TableOracle(plain.objectives, s, synthetic_units(family, seed, s)), core


@pytest.mark.parametrize("family", ["smooth", "rugged", "crowded"])
def test_the_core_of_the_evaluated_holds_every_core_member_evaluated(family: str) -> None:
    """π_E ≥ π_Θ resample by resample (the same resamples, fewer rivals), so C ∩ E ⊆ K for any E; and K = C at E = Θ."""
    oracle, core = problem(family, 0)
    layer, rng = oracle.inputs, np.random.default_rng(0)
    assert core.any()
    for size in (10, 30, SMALL.size):
        evaluated = np.sort(rng.choice(SMALL.size, size, replace=False)) if size < SMALL.size else np.arange(SMALL.size)
        K = evaluated[core_of_evaluated(layer.rows(evaluated))]
        assert set(np.flatnonzero(core)) & set(evaluated) <= set(K)
    np.testing.assert_array_equal(np.flatnonzero(core), K)  # E = Θ: the ground truth's own core


def test_near_front_keeps_the_front_and_drops_what_is_far_below() -> None:
    values = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.45, 0.45], [0.0, 0.0]])
    # (0.45, 0.45) is 0.05 below the front point (0.5, 0.5): near within 4 standard errors of 0.02, not of 0.01
    np.testing.assert_array_equal(near_front(values, np.full((5, 2), 0.02)), [True, True, True, True, False])
    np.testing.assert_array_equal(near_front(values, np.full((5, 2), 0.01)), [True, True, True, False, False])


def test_estimate_is_exact_without_uncertainty() -> None:
    """With sd 0 an unevaluated θ above the raised front is a core member for certain (estimate < 1), one below is
    not (estimate 1 where K survives); nothing unevaluated: 1."""
    K = np.array([[0.0, 1.0], [1.0, 0.0]])
    raised = K + 0.1
    zero = np.zeros((1, 2))
    assert estimated_core_recall(np.zeros((0, 2)), np.zeros((0, 2)), K, raised) == 1.0
    assert estimated_core_recall(np.array([[0.05, 0.05]]), zero, K, raised) == 1.0    # under the raised front
    assert estimated_core_recall(np.array([[0.5, 0.5]]), zero, K, raised) == pytest.approx(2 / 3)  # clears it: 2 of 3
    assert estimated_core_recall(np.array([[2.0, 2.0]]), zero, K, raised) == pytest.approx(0.0, abs=1e-9)     # dominates all of K, clears the bar


def test_ledger_gives_the_outcomes_of_evaluated_configurations_only() -> None:
    oracle, _ = problem("smooth", 0)
    ledger = Ledger(oracle, SMALL, 10)
    ledger.propose(np.array([[0, 0, 0], [1, 2, 3]]))
    rows = SMALL.indices(np.array([[1, 2, 3], [0, 0, 0]]))
    np.testing.assert_array_equal(ledger.inputs_of(rows).outcomes, oracle.inputs.outcomes[rows])
    with pytest.raises(ValueError, match=r"\(3, 3, 3\) has not been evaluated"):
        ledger.inputs_of(SMALL.indices(np.array([[3, 3, 3]])))


@pytest.mark.parametrize("q", [1, 4])
def test_est_core_uses_only_what_was_evaluated(q: int) -> None:
    """Scramble the objectives and the per-input outcomes of every configuration the run did not evaluate: the
    run, est_core included, does not change."""
    oracle, _ = problem("smooth", 1)
    trace = run_search("pnd", oracle, SMALL, 40, seed=1, batch_size=q)
    assert trace["est_core"].notna().sum() > 10
    hidden = np.setdiff1d(np.arange(SMALL.size), SMALL.indices(trace[list(SMALL.names)].to_numpy()))
    rng = np.random.default_rng(0)
    layer = oracle.inputs
    outcomes, fidelity = layer.outcomes.copy(), layer.fidelity.copy()
    outcomes[hidden], fidelity[hidden] = rng.random((len(hidden), outcomes.shape[1])), rng.random((len(hidden), outcomes.shape[1]))
    objectives = oracle.objectives.copy()
    objectives[hidden] = rng.permutation(objectives[hidden])[:, ::-1]
    scrambled = UnitOutcomes(outcomes, layer.clean, fidelity, layer.strata, layer.scale, layer.seed)
    again = run_search("pnd", TableOracle(objectives, SMALL, scrambled), SMALL, 40, seed=1, batch_size=q)
    pd.testing.assert_frame_equal(again, trace)


def test_gp_pnd_stops_on_the_core_estimate_and_leaves_the_rest_alone() -> None:
    """With the layer, stop_at_recall reads est_core (the run ends at the first estimate ≥ 0.95); without it the
    trace has no est_core and is the run of before."""
    oracle, core = problem("smooth", 2)
    stopped = run_search("pnd", oracle, SMALL, SMALL.size, seed=0, stop_at_recall=0.95)
    est = stopped["est_core"].to_numpy()
    assert est[-1] >= 0.95 and (est[:-1][~np.isnan(est[:-1])] < 0.95).all()
    found = set(SMALL.indices(stopped[list(SMALL.names)].to_numpy()))
    assert set(np.flatnonzero(core)) <= found  # this table's core is all found when the estimate says so
    plain = run_search("pnd", TableOracle(oracle.objectives, SMALL), SMALL, SMALL.size, seed=0)
    assert "est_core" not in plain
    full = run_search("pnd", oracle, SMALL, SMALL.size, seed=0)
    pd.testing.assert_frame_equal(full.drop(columns=["est_core", "inputs", "evaluations"]), plain)


def test_a_live_recorder_keeps_the_units_outcomes_and_fidelity() -> None:
    """`UnitRecorder` turns a benchmark's per-input answers into the layer: correctness against the labels, the
    per-input fidelity's unit means, or the set-level value; for robust pass a code problem is one unit."""
    from pipeline.search.racing.unit_outcomes import UnitRecorder

    labels = np.array([0, 1, 1, 0])
    rec = UnitRecorder(SMALL, labels, np.array([0, 1, 0, 0]), "accuracy", "ssim", seed=3)
    rec.record((1, 0, 0), {"prediction": [1, 1, 1, 0], "rho_ssim_inputs": [0.5, 1.0, 0.25, 1.0], "rho_ssim": 0.6875})
    rec.record((0, 2, 0), {"prediction": [0, 0, 1, 1], "rho_ssim_inputs": [1.0, 1.0, 1.0, 0.0], "rho_ssim": 0.75})
    layer = rec.rows(SMALL.indices(np.array([[0, 2, 0], [1, 0, 0]])))
    np.testing.assert_array_equal(layer.clean, [1, 1, 0, 1])
    np.testing.assert_array_equal(layer.outcomes, [[1, 0, 1, 0], [0, 1, 1, 1]])
    np.testing.assert_array_equal(layer.fidelity, [[1.0, 1.0, 1.0, 0.0], [0.5, 1.0, 0.25, 1.0]])
    np.testing.assert_array_equal(layer.strata, labels)
    assert layer.seed == 3 and layer.scale == (1.0, 1.0)
    code = UnitRecorder(SMALL, np.array([0, 0, 1, 1]), np.array([1, 1, 1, 0]), "robust_pass", "chrf")
    code.record((0, 0, 1), {"prediction": [1, 0, 1, 1], "rho_chrf": 0.9})  # problem 0 fails a variant, problem 1 passes
    layer = code.rows(SMALL.indices(np.array([[0, 0, 1]])))
    np.testing.assert_array_equal(layer.clean, [1, 0])
    np.testing.assert_array_equal(layer.outcomes, [[0, 1]])
    np.testing.assert_array_equal(layer.fidelity, [0.9])
