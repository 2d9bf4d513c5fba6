import numpy as np
import pytest
import torch
from torch.func import functional_call

from pipeline.fuzz import run_campaign
from pipeline.fuzz.adapters.weights import ScaledSequential, chain_of, weights_adapter
from pipeline.models.cnn import predict_proba, to_tensor

NAMES = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias")


@pytest.fixture(scope="module")
def adapter(tiny_cnn, digits):
    return weights_adapter(tiny_cnn, *digits["test"])


def test_dimensions_are_the_parameter_tensors(adapter, tiny_cnn):
    assert adapter.dim_names == NAMES
    assert len(adapter.dim_names) == len(list(tiny_cnn.parameters()))
    assert adapter.inactive_value == 0.0 and adapter.operating_point == (1.0,) * 8


def test_unit_scales_are_the_trained_model(adapter, tiny_cnn, digits):
    x, y = digits["test"]
    error, per = adapter.evaluate_fn(np.ones(8))
    wrong = predict_proba(tiny_cnn, x).argmax(1) != y
    assert error == pytest.approx(wrong.mean())
    assert per["digit_7"] == pytest.approx(wrong[y == 7].mean())
    assert sum(per[f"digit_{c}"] * (y == c).sum() for c in range(10)) / len(y) == pytest.approx(error)


def test_removing_the_last_weight_predicts_the_class_of_the_largest_bias(adapter, tiny_cnn, digits):
    _, y = digits["test"]
    scales = np.ones(8)
    scales[NAMES.index("linear2.weight")] = 0.0
    c = int(tiny_cnn.head.bias.argmax())
    error, per = adapter.evaluate_fn(scales)
    assert error == pytest.approx(1 - (y == c).mean()) and per[f"digit_{c}"] == 0.0


def test_scaling_the_whole_last_layer_changes_no_prediction(adapter):
    # argmax(c·(Wh + b)) = argmax(Wh + b) for c > 0: an exact invariance of the classifier.
    base = adapter.evaluate_fn(np.ones(8))
    for c in (0.05, 3.0, 400.0):
        scales = np.ones(8)
        scales[[6, 7]] = c
        assert adapter.evaluate_fn(scales) == base


def test_cached_chain_matches_scaled_copies_of_the_model(tiny_cnn, digits):
    x = to_tensor(digits["test"][0])
    runner = ScaledSequential(chain_of(tiny_cnn), x)
    slots = runner.tensors()
    rng = np.random.default_rng(0)
    for scales in np.exp(rng.normal(0, 0.3, size=(6, 8))):
        params = {n: p.detach() * float(s) for (n, p), s in zip(tiny_cnn.named_parameters(), scales)}
        with torch.no_grad():
            reference = functional_call(tiny_cnn, params, (x,))
        got = runner.logits({slot: float(s) for slot, s in zip(slots, scales)})
        torch.testing.assert_close(got, reference, rtol=1e-4, atol=1e-4)


def test_results_do_not_depend_on_evaluation_order(tiny_cnn, digits):
    rng = np.random.default_rng(1)
    rows = np.where(rng.random((12, 8)) < 0.3, 0.0, np.exp(rng.normal(0, 0.5, (12, 8))))
    rows[6:] = rows[:6] * np.array([1, 1, 1, 1, 1, 1, 2, 2])  # share upstream layers with earlier rows
    a = [weights_adapter(tiny_cnn, *digits["test"]).evaluate_fn(r) for r in rows]  # fresh caches each
    shared = weights_adapter(tiny_cnn, *digits["test"])
    b = [shared.evaluate_fn(r) for r in rows[::-1]][::-1]
    assert a == b
    before = [p.detach().clone() for p in tiny_cnn.parameters()]
    shared.evaluate_fn(np.zeros(8))
    assert all(torch.equal(p, q) for p, q in zip(before, tiny_cnn.parameters()))


def test_campaign_ranks_weight_tensors_first(adapter):
    report = run_campaign(
        adapter.dim_names, adapter.evaluate_fn, 2, 12, 0.2, inactive_value=0.0, adversarial_tolerance=0.1,
        n_adversarial_steps=6, operating_point=adapter.operating_point, frontier="none", directional=False,
    )
    top = {s.dim_name for s in report.sensitivity_results[:4]}
    assert top == {n for n in NAMES if n.endswith("weight")}  # removing a weight tensor blinds the network
    assert all(s.mae_without > 0.5 for s in report.sensitivity_results[:4])
    assert report.operating_point == [1.0] * 8


def test_wrong_number_of_scales_is_named(adapter):
    with pytest.raises(ValueError, match="expected 8 scales"):
        adapter.evaluate_fn(np.ones(3))
