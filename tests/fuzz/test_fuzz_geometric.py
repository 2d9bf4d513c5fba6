import numpy as np
import pytest
from scipy.special import softmax
from sklearn.neighbors import KNeighborsRegressor

from pipeline.fuzz import compute_mri, run_campaign
from pipeline.fuzz.adapters.geometric import FEATURE_GROUPS, diabetes_split, geometric_adapter

FEATURES = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]


@pytest.fixture(scope="module")
def adapter():
    return geometric_adapter(seed=0)


@pytest.fixture(scope="module")
def data():
    split = diabetes_split(seed=0)
    (x_tr, y_tr), (x_te, y_te) = split["train"], split["test"]
    mean, std = x_tr.mean(0), x_tr.std(0)
    return (x_tr - mean) / std, y_tr, (x_te - mean) / std, y_te


def reference_predict(scales, data):
    """Nadaraya–Watson written out directly: one kernel weight per (test, train) pair."""
    a, y, b, _ = data
    logits = np.zeros((len(b), len(a)))
    for scale, feats in zip(scales, FEATURE_GROUPS.values()):
        idx = [FEATURES.index(f) for f in feats]
        logits -= ((b[:, None, idx] - a[None, :, idx]) ** 2).mean(axis=2) / (2 * scale**2)
    return softmax(logits, axis=1) @ y


def test_matches_a_direct_kernel_regression(adapter, data):
    for scales in ([1.0, 1.0, 1.0, 1.0, 1.0], [0.5, 2.0, 1e6, 0.3, 4.0]):
        error, _ = adapter.evaluate_fn(np.array(scales))
        assert error == pytest.approx(np.abs(reference_predict(scales, data) - data[3]).mean(), rel=1e-10)


def test_every_group_inactive_predicts_the_training_mean(adapter, data):
    _, y_tr, _, y_te = data
    error, _ = adapter.evaluate_fn(np.full(5, adapter.inactive_value))
    assert error == pytest.approx(np.abs(y_te - y_tr.mean()).mean(), rel=1e-9)


def test_an_inactive_group_is_removed(adapter, data):
    # ℓ = 10⁶ for a group gives the model built without that group's features at all.
    scales = np.array([0.5, 1.0, 1e6, 2.0, 1.0])
    a, y, b, y_te = data
    keep = [f for g, fs in zip(FEATURE_GROUPS, FEATURE_GROUPS.values()) if g != "blood_pressure" for f in fs]
    logits = np.zeros((len(b), len(a)))
    for scale, feats in zip(scales[[0, 1, 3, 4]], [FEATURE_GROUPS[g] for g in ("demographics", "bmi", "cholesterol", "glucose_triglycerides")]):
        idx = [FEATURES.index(f) for f in feats]
        logits -= ((b[:, None, idx] - a[None, :, idx]) ** 2).mean(axis=2) / (2 * scale**2)
    without = np.abs(softmax(logits, axis=1) @ y - y_te).mean()
    assert "bp" not in keep and adapter.evaluate_fn(scales)[0] == pytest.approx(without, rel=1e-9)


def test_tiny_length_scales_make_a_nearest_neighbour_lookup(adapter, data):
    a, y, b, y_te = data
    weights = np.concatenate([[1 / np.sqrt(len(fs))] * len(fs) for fs in FEATURE_GROUPS.values()])
    order = [FEATURES.index(f) for fs in FEATURE_GROUPS.values() for f in fs]
    knn = KNeighborsRegressor(n_neighbors=1).fit(a[:, order] * weights, y)
    expected = np.abs(knn.predict(b[:, order] * weights) - y_te).mean()
    assert adapter.evaluate_fn(np.full(5, 0.003))[0] == pytest.approx(expected, rel=1e-9)


def test_targets_are_tertile_subgroups_that_partition_the_held_out_set(adapter, data):
    error, per = adapter.evaluate_fn(np.ones(5))
    assert list(per) == list(adapter.target_names) == ["age_low", "age_mid", "age_high", "bmi_low", "bmi_mid", "bmi_high"]
    _, _, b, y_te = data
    x_te = diabetes_split(seed=0)["test"][0]
    x_tr = diabetes_split(seed=0)["train"][0]
    for col, name in ((0, "age"), (2, "bmi")):
        lo, hi = np.quantile(x_tr[:, col], [1 / 3, 2 / 3])
        sizes = [(x_te[:, col] <= lo).sum(), ((x_te[:, col] > lo) & (x_te[:, col] <= hi)).sum(), (x_te[:, col] > hi).sum()]
        assert sum(sizes) == len(y_te) and min(sizes) > 15
        weighted = sum(n * per[f"{name}_{t}"] for n, t in zip(sizes, ("low", "mid", "high"))) / len(y_te)
        assert weighted == pytest.approx(error, rel=1e-9)


def test_batched_and_single_evaluations_are_identical(adapter):
    rng = np.random.default_rng(0)
    rows = np.exp(rng.normal(0, 1.5, size=(40, 5)))
    errors, per = adapter.evaluate_batch_fn(rows)
    for k, row in enumerate(rows):
        e, p = adapter.evaluate_fn(row)
        assert e == errors[k] and all(p[t] == per[t][k] for t in p)
    a = compute_mri(np.ones(5), adapter.evaluate_fn, 60)
    b = compute_mri(np.ones(5), adapter.evaluate_fn, 60, evaluate_batch_fn=adapter.evaluate_batch_fn)
    assert a == b


def test_campaign_on_the_geometric_model(adapter):
    report = run_campaign(
        adapter.dim_names, adapter.evaluate_fn, 5, 60, 0.5, inactive_value=adapter.inactive_value,
        adversarial_tolerance=5.0, n_adversarial_steps=20, candidate_values=(0.5, 1.0, 2.0),
        evaluate_batch_fn=adapter.evaluate_batch_fn, rng=np.random.default_rng(0),
    )
    best = report.subset_results[0]
    assert best.mae < report.forward_results[0].mae  # the fitted model beats the training mean
    assert report.mri_result.mri > 0 and report.adversarial_results
    # Pareto frontier: error falls as groups are added along it.
    maes = [r.mae for r in report.pareto_results]
    assert maes == sorted(maes, reverse=True)


def test_unknown_feature_groups_are_named():
    with pytest.raises(ValueError, match="unknown: \\['weight'\\]"):
        geometric_adapter(groups={"body": ("bmi", "weight")})
