import numpy as np
import pytest

from pipeline.fuzz import (
    Evaluator,
    find_adversarial_threshold,
    find_adversarial_threshold_two_phase,
    scan_values,
    sensitivity_profile,
)
from tests.fuzz.fuzz_models import Tipping

NAMES = ["fragile_up", "fragile_down", "inert"]
STEP = 10 ** (3 / 49)  # ratio between neighbouring scan values with n_steps = 50


def test_scan_grid_is_the_chapters():
    up = scan_values(2.0, "increase", 50)
    assert up[0] == pytest.approx(2.0) and up[-1] == pytest.approx(2000.0) and len(up) == 50
    assert np.allclose(up[1:] / up[:-1], STEP)
    assert scan_values(2e-5, "decrease", 10)[-1] == pytest.approx(1e-6)  # floor at 10⁻⁶
    with pytest.raises(ValueError, match="direction"):
        scan_values(1.0, "sideways")
    with pytest.raises(ValueError, match="positive"):
        scan_values(0.0, "increase")


def test_known_tipping_points_are_found_to_the_scan_resolution():
    model = Tipping(up=5.0, down=0.2)
    up = find_adversarial_threshold(np.ones(3), 0, NAMES, model, tolerance=0.5)
    assert len(up) == 1 and up[0].direction == "increase" and up[0].target_flipped == "a"
    v = up[0].threshold_value
    assert 5.0 < v <= 5.0 * STEP * (1 + 1e-12)  # the first scan value past the tipping point
    assert up[0].threshold_ratio == pytest.approx(v) and up[0].target_delta == 1.0
    down = find_adversarial_threshold(np.ones(3), 1, NAMES, model, tolerance=0.5)
    assert [(r.direction, r.target_flipped) for r in down] == [("decrease", "b")]
    assert 0.2 / STEP * (1 - 1e-12) <= down[0].threshold_value < 0.2


def test_a_dimension_without_influence_has_no_threshold_after_the_full_scan():
    model = Tipping()
    assert find_adversarial_threshold(np.ones(3), 2, NAMES, model, tolerance=0.5, n_steps=50) == []
    assert model.calls == 1 + 2 * 49  # base + both directions scanned to the end


def test_tolerance_decides_what_counts_as_broken():
    model = Tipping()
    assert find_adversarial_threshold(np.ones(3), 0, NAMES, model, tolerance=1.0) == []  # |Δ| = 1 is not > 1


def test_batched_scan_gives_the_same_thresholds():
    for dim in range(3):
        a = find_adversarial_threshold(np.ones(3), dim, NAMES, Tipping(), tolerance=0.5)
        m = Tipping()
        b = find_adversarial_threshold(np.ones(3), dim, NAMES, m, tolerance=0.5, evaluate_batch_fn=m.batch)
        assert a == b


def _evaluations(search, model, dim, **kw):
    ev = Evaluator(model)
    out = search(np.ones(3), dim, NAMES, ev, tolerance=0.5, n_steps=50, **kw)
    return out, ev.n_evaluations


@pytest.mark.parametrize("tip", np.geomspace(1.01, 990.0, 23))
def test_two_phase_finds_the_same_threshold_with_fewer_evaluations(tip):
    uniform, n_uniform = _evaluations(find_adversarial_threshold, Tipping(up=tip), 0)
    two, n_two = _evaluations(find_adversarial_threshold_two_phase, Tipping(up=tip), 0)
    assert two == uniform and len(two) == 1
    assert n_two <= n_uniform
    # Cost: at most base + 2 × 9 coarse + one bracket of ≤ 5 fine points.
    assert n_two <= 1 + 2 * 9 + 5


def test_two_phase_saves_most_when_there_is_no_threshold():
    _, n_uniform = _evaluations(find_adversarial_threshold, Tipping(), 2)
    out, n_two = _evaluations(find_adversarial_threshold_two_phase, Tipping(), 2)
    assert out == [] and (n_uniform, n_two) == (99, 19)


def test_two_phase_can_miss_a_break_that_heals_between_coarse_points():
    # A window of failure narrower than the coarse spacing: the documented limit of the bracket.
    def window(theta):
        a = float(2.6 < theta[0] < 2.75)  # holds only the 8th scan value, 10^(21/49)
        return a, {"a": a}

    assert find_adversarial_threshold(np.ones(3), 0, NAMES, window, tolerance=0.5)
    assert find_adversarial_threshold_two_phase(np.ones(3), 0, NAMES, window, tolerance=0.5) == []


def test_sensitivity_ranks_by_delta_and_flags_negative():
    def ablation(theta):
        on = theta >= 1e5
        err = 10.0 + 3.0 * on[0] - 1.0 * on[1]
        return err, {"t": err}

    r = sensitivity_profile(np.ones(3), NAMES, ablation)
    assert [(s.dim_name, s.importance_rank, s.delta_mae, s.harmful) for s in r] == [
        ("fragile_up", 1, 3.0, False), ("inert", 2, 0.0, False), ("fragile_down", 3, -1.0, True),
    ]
    assert all(s.mae_with == 10.0 for s in r) and r[0].mae_without == 13.0
    # The inactive value is the caller's: at 10³ nothing reaches the 10⁵ switch.
    assert all(s.delta_mae == 0 for s in sensitivity_profile(np.ones(3), NAMES, ablation, inactive_value=1e3))


def test_bad_dimension_arguments_are_named():
    with pytest.raises(ValueError, match="dim 3"):
        find_adversarial_threshold(np.ones(3), 3, NAMES, Tipping())
    with pytest.raises(ValueError, match="names"):
        sensitivity_profile(np.ones(3), NAMES[:2], Tipping())
    with pytest.raises(ValueError, match="n_coarse"):
        find_adversarial_threshold_two_phase(np.ones(3), 0, NAMES, Tipping(), n_steps=5, n_coarse=6)
