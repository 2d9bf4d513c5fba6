import numpy as np
import pytest

from pipeline.fuzz import find_adversarial_threshold, scan_values
from pipeline.fuzz.adapters import stratified_subset
from pipeline.fuzz.adapters.severity import severity_adapter, step_seed
from pipeline.models.cnn import predict_proba
from pipeline.perturb.continuous import FAMILIES, apply_continuous

SEED = 3


@pytest.fixture(scope="module")
def data(digits):
    x, y = digits["test"]
    idx = stratified_subset(y, 4)
    return x[idx], y[idx]


@pytest.fixture(scope="module")
def adapter(tiny_cnn, data):
    return severity_adapter(tiny_cnn, *data, seed=SEED)


def _error(model, images, labels):
    return float((predict_proba(model, images).argmax(1) != labels).mean())


def test_stratified_subset_takes_the_first_images_of_each_class(data):
    _, y = data
    assert len(y) == 40 and all((y == c).sum() == 4 for c in range(10))
    with pytest.raises(ValueError, match="n_per_class"):
        stratified_subset(y, 0)


def test_severity_zero_is_the_clean_model(adapter, tiny_cnn, data):
    assert adapter.dim_names == FAMILIES and adapter.inactive_value == 0.0
    assert adapter.evaluate_fn(np.zeros(4))[0] == pytest.approx(_error(tiny_cnn, *data))


def test_families_compose_in_order_with_severity_independent_seeds(adapter, tiny_cnn, data):
    x, y = data
    sev = np.array([0.0, 1.5, 3.0, 0.0])  # glass blur then brightness
    expected = np.stack([
        apply_continuous(apply_continuous(img, "glass_blur", 1.5, step_seed(SEED, i, 1)), "brightness", 3.0, step_seed(SEED, i, 2))
        for i, img in enumerate(x)
    ])
    assert adapter.evaluate_fn(sev)[0] == pytest.approx(_error(tiny_cnn, expected, y))


def test_severities_above_the_table_saturate_at_five(adapter):
    assert adapter.evaluate_fn(np.array([0.0, 0.0, 7.3, 0.0])) == adapter.evaluate_fn(np.array([0.0, 0.0, 5.0, 0.0]))


def test_results_do_not_depend_on_the_cache(tiny_cnn, data):
    rows = np.array([[1.0, 0.0, 2.0, 0.5], [1.0, 0.0, 2.0, 4.0], [0.0, 0.0, 2.0, 4.0], [1.0, 0.0, 2.0, 0.5]])
    fresh = [severity_adapter(tiny_cnn, *data, seed=SEED).evaluate_fn(r) for r in rows]
    shared = severity_adapter(tiny_cnn, *data, seed=SEED)
    assert [shared.evaluate_fn(r) for r in rows] == fresh


def test_brightness_threshold_is_the_first_scan_value_that_breaks_a_digit(adapter):
    # The tester's question: how much brightness (from severity 0.05, others off) before a digit breaks?
    base = np.array([0.0, 0.0, 0.05, 0.0])
    _, clean = adapter.evaluate_fn(base)
    first = None
    for v in scan_values(0.05, "increase", 8)[1:]:  # oracle: walk the scan by hand
        _, per = adapter.evaluate_fn(np.array([0.0, 0.0, v, 0.0]))
        moved = {t: per[t] - clean[t] for t in clean if abs(per[t] - clean[t]) > 0.25}
        if moved:
            first = (v, max(moved, key=lambda t: abs(moved[t])))
            break
    assert first is not None  # full brightness breaks some digit of this weak CNN
    out = find_adversarial_threshold(base, 2, FAMILIES, adapter.evaluate_fn, tolerance=0.25, n_steps=8)
    up = [(r.threshold_value, r.target_flipped) for r in out if r.direction == "increase"]
    assert up == [first]


def test_bad_arguments_are_named(tiny_cnn, data):
    with pytest.raises(ValueError, match="families must be distinct names"):
        severity_adapter(tiny_cnn, *data, families=("fog",))
    with pytest.raises(ValueError, match="operating_severity"):
        severity_adapter(tiny_cnn, *data, operating_severity=0.0)
    with pytest.raises(ValueError, match="expected 4 finite severities"):
        severity_adapter(tiny_cnn, *data).evaluate_fn(np.ones(2))
