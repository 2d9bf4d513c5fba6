import json

import numpy as np
import pytest

from pipeline.fuzz import (
    StructuralFuzzReport,
    batch_from_single,
    compositional_test,
    enumerate_subsets,
    pareto_frontier,
    run_campaign,
)
from tests.fuzz.fuzz_models import Additive, Quadratic

NAMES = ["a", "b", "c", "d"]
CANDIDATES = (0.5, 1.0, 2.0)


def test_enumeration_fits_each_subset_like_brute_force():
    model = Additive(cost=[5.0, 1.0, 3.0, 0.2], best=[1.0, 2.0, 0.7, 4.0])
    got = enumerate_subsets(NAMES, model, 3, candidate_values=CANDIDATES)
    assert len(got) == 4 + 6 + 4
    # Oracle: separable, so each active dimension independently takes its best candidate.
    best_part = [min((np.log(c) - np.log(b)) ** 2 for c in CANDIDATES) for b in model.best]
    for r in got:
        expected = sum(best_part[i] if i in r.dims else model.cost[i] for i in range(4))
        assert r.mae == pytest.approx(expected)
        assert [v == 1e6 for v in r.param_values] == [i not in r.dims for i in range(4)]
        assert r.dim_names == [NAMES[i] for i in r.dims] and r.n_dims == len(r.dims)
    assert [r.mae for r in got] == sorted(r.mae for r in got)


def test_pareto_frontier_matches_brute_force_domination():
    rng = np.random.default_rng(0)
    model = Additive(cost=rng.uniform(0, 3, 4), best=rng.uniform(0.3, 3, 4))
    results = enumerate_subsets(NAMES, model, None, candidate_values=CANDIDATES)
    front = pareto_frontier(results)

    def dominated(r):
        return any(o.n_dims <= r.n_dims and o.mae <= r.mae and (o.n_dims < r.n_dims or o.mae < r.mae) for o in results)

    assert {tuple(r.dims) for r in front} == {tuple(r.dims) for r in results if not dominated(r)}
    assert [r.n_dims for r in front] == sorted(r.n_dims for r in front)


def test_composition_of_additive_dimensions_is_consistent():
    model = Additive(cost=[5.0, 1.0, 3.0, 0.2], best=[1.0, 1.0, 1.0, 1.0])
    comp, forward, backward = compositional_test(np.ones(4), NAMES, model)
    assert comp.forward_order == ["a", "c", "b", "d"]  # largest gain first
    assert comp.backward_order == ["d", "b", "c", "a"]  # smallest loss first
    assert comp.consistent and comp.regressions == [] and comp.composes_well
    assert comp.forward_errors == pytest.approx([9.2, 4.2, 1.2, 0.2, 0.0])
    assert forward[0].n_dims == 0 and backward[0].n_dims == 4 and backward[-1].n_dims == 0


def test_composition_tolerates_ties_but_flags_regressions():
    # a and b carry the same information (either suffices); c helps alone; d hurts when added.
    def redundant(theta):
        on = theta != 1e6
        err = 2.0 - float(on[0] or on[1]) - 0.5 * on[2] + 0.25 * on[3]
        return err, {"t": err}

    comp, _, _ = compositional_test(np.ones(4), NAMES, redundant)
    assert comp.forward_order == ["a", "c", "b", "d"]
    assert comp.backward_order == ["d", "a", "c", "b"]  # removing d helps most; then a or b is free
    assert not comp.same_order and comp.consistent  # different but equally good subsets at every size
    assert comp.regressions == [{"dim_name": "d", "step": 4, "increase": pytest.approx(0.25)}]
    assert not comp.composes_well


def test_composition_detects_a_pair_that_only_works_together():
    # a and b are useless alone and strong together: forward addition cannot see the pair.
    def pair(theta):
        on = theta != 1e6
        err = 3.0 - 2.0 * float(on[0] and on[1]) - 1.0 * on[2]
        return err, {"t": err}

    comp, forward, backward = compositional_test(np.ones(3), NAMES[:3], pair)
    assert comp.forward_errors == [3.0, 2.0, 2.0, 0.0]
    assert comp.backward_errors[::-1] == [3.0, 3.0, 1.0, 0.0]  # {a, b} at size 2: error 1
    assert not comp.consistent and not comp.composes_well and comp.regressions == []


def _campaign(seed=0, **kw):
    q = Quadratic(np.diag([4.0, 1.0, 0.3, 0.0]), [1.0, 2.0, 0.5, 1.0])

    def evaluate(theta):
        on = theta != 1e6
        x = np.where(on & (theta > 0), theta, [1.0, 2.0, 0.5, 1.0])
        loss, _ = q.single(x)
        return loss + 2.0 * (not on[0]) + 1.0 * (not on[1]) + 0.5 * (not on[2]), {"loss": loss, "first": float(np.log(x[0]) ** 2)}

    args = dict(max_subset_dims=4, n_mri_perturbations=60, adversarial_tolerance=0.5, n_adversarial_steps=12,
                candidate_values=(0.5, 1.0, 2.0), rng=np.random.default_rng(seed), frontier="all")
    args.update(kw)
    return run_campaign(NAMES, evaluate, **args), evaluate


def test_campaign_has_six_stages_at_the_best_configuration():
    report, _ = _campaign()
    best = report.subset_results[0]
    assert report.operating_point == best.param_values
    assert best.dims == [0, 1, 2] and best.mae == pytest.approx(0.0)  # d is useless: the fit leaves it off
    assert report.pareto_results[-1].dims == [0, 1, 2]
    assert report.sensitivity_results[0].dim_name == "a"
    assert report.mri_result.n_perturbations == 60
    assert {(a.dim_name, a.direction) for a in report.adversarial_results} >= {("a", "increase"), ("a", "decrease")}
    assert not [a for a in report.adversarial_results if a.dim_name == "d"]
    assert report.composition_result.forward_order[0] == "a"
    assert len(report.forward_results) == 5 and len(report.backward_results) == 5
    assert [r.dim_name for r in report.sensitivity_results][:3] == ["a", "b", "c"]
    text = report.summary()
    for heading in ("1. Subset enumeration", "2. Pareto frontier", "3. Sensitivity", "4. Model Robustness Index",
                    "5. Adversarial thresholds", "6. Compositional testing", "CVaR_0.05"):
        assert heading in text
    assert report.n_evaluations > 0


def test_three_objective_frontier_contains_the_two_objective_one():
    report, _ = _campaign()
    pts = report.frontier
    assert len(pts) == len(report.subset_results)
    assert all(p.three_objective for p in pts if p.two_objective)
    objs = np.array([[p.n_dims, p.mae, p.mri] for p in pts])
    for p, o in zip(pts, objs):
        dominated = any((q <= o).all() and (q < o).any() for q in objs)
        assert p.three_objective == (not dominated)


def test_same_seed_same_report_and_json_round_trip():
    a, _ = _campaign(seed=5)
    b, _ = _campaign(seed=5)
    assert a.to_json() == b.to_json()
    c, _ = _campaign(seed=6)
    assert c.mri_result.perturbation_errors != a.mri_result.perturbation_errors
    loaded = StructuralFuzzReport.from_json(a.to_json())
    assert loaded.to_json() == a.to_json()
    assert loaded.summary() == a.summary()
    assert loaded.mri_result.weights == (0.5, 0.3, 0.2)
    with pytest.raises(ValueError, match="missing keys"):
        StructuralFuzzReport.from_dict({"dim_names": []})


def test_batched_campaign_equals_single_call_campaign():
    single, evaluate = _campaign(seed=2)
    batched, _ = _campaign(seed=2, evaluate_batch_fn=batch_from_single(evaluate))
    a, b = json.loads(single.to_json()), json.loads(batched.to_json())
    # A batched scan scores every value of a threshold scan at once, a single-call one stops at the
    # first break: the evaluation counts differ, nothing else does.
    assert a.pop("n_evaluations") < b.pop("n_evaluations")
    assert a == b


def test_two_phase_campaign_finds_the_same_thresholds_with_fewer_evaluations():
    uniform, _ = _campaign(seed=1)
    two, _ = _campaign(seed=1, two_phase=True, n_coarse=4)
    key = lambda r: [(a.dim_name, a.direction, a.threshold_value, a.target_flipped) for a in r.adversarial_results]  # noqa: E731
    assert key(two) == key(uniform)
    assert two.n_evaluations < uniform.n_evaluations


def test_operating_point_and_bad_arguments():
    report, _ = _campaign(operating_point=[1.0, 2.0, 0.5, 1.0], frontier="none")
    assert report.operating_point == [1.0, 2.0, 0.5, 1.0] and report.frontier == []
    with pytest.raises(ValueError, match="frontier"):
        _campaign(frontier="everything")
    with pytest.raises(ValueError, match="operating_point"):
        _campaign(operating_point=[1.0])
    with pytest.raises(ValueError, match="max_subset_dims"):
        _campaign(max_subset_dims=0)


def test_dims_with_a_non_positive_operating_value_are_skipped_not_scanned():
    report, _ = _campaign(operating_point=[1.0, 2.0, 0.0, 1.0], frontier="none")
    assert report.skipped_threshold_dims == ["c"]
    assert "skipped" in report.summary()
