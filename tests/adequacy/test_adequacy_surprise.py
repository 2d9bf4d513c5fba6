"""LSA against the Gaussian KDE formula evaluated directly, DSA against distances worked by hand."""
import math

import numpy as np
import pytest

from pipeline.adequacy import surprise
from pipeline.adequacy.profile import build_profile
from tests.adequacy import adequacy_oracles as oracle

# class 0 around the origin, class 1 around (3, 1); hand-made, not collinear
TRAIN = np.array([[0.0, 0.0], [1.0, 0.2], [0.1, 1.0], [-0.5, 0.4], [0.6, -0.7], [-0.2, -0.3],
                  [3.0, 1.0], [4.0, 1.5], [2.5, 2.0], [3.3, 0.1], [2.8, 1.2]])
CLASSES = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
TEST = np.array([[0.2, 0.1], [2.0, 2.0], [3.1, 1.1], [10.0, -4.0]])
PRED = np.array([0, 0, 1, 1])


def test_lsa_matches_the_kde_formula():
    got = surprise.lsa_scores(TEST, PRED, TRAIN, CLASSES)
    for x, c, value in zip(TEST, PRED, got):
        data = TRAIN[CLASSES == c].tolist()
        assert value == pytest.approx(-math.log(oracle.gaussian_kde_density(x.tolist(), data)), rel=1e-9)
    assert got[0] < got[1]  # near the class-0 cloud is less surprising than between the clouds


def test_lsa_drops_low_variance_neurons():
    constant = np.hstack([TRAIN, np.full((len(TRAIN), 1), 0.5)])  # a dead neuron, constant in training
    test = np.hstack([TEST, np.array([[0.5], [0.5], [9.0], [0.5]])])
    assert surprise.kept_neurons(constant, CLASSES, 1e-5).tolist() == [True, True, False]
    np.testing.assert_allclose(surprise.lsa_scores(test, PRED, constant, CLASSES, 1e-5),
                               surprise.lsa_scores(TEST, PRED, TRAIN, CLASSES), rtol=1e-12)
    with pytest.raises(ValueError, match="singular"):
        surprise.lsa_scores(test, PRED, constant, CLASSES, 0.0)  # kept, it makes the covariance singular


def test_variance_rule_is_per_class_and_ignores_one_trace_classes():
    t = np.array([[0.0, 1.0], [1.0, 1.0], [5.0, 2.0], [6.0, 3.0], [9.0, 9.0]])
    cls = np.array([0, 0, 1, 1, 2])  # neuron 1 is constant within class 0 only; class 2 has one trace
    assert surprise.kept_neurons(t, cls, 1e-5).tolist() == [True, False]


def test_lsa_far_input_is_finite():
    far = surprise.lsa_scores(np.array([[1e3, 1e3]]), np.array([0]), TRAIN, CLASSES)
    assert np.isfinite(far).all() and far[0] > 1e4


def test_dsa_by_hand():
    train = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 3.0], [10.0, 10.0]])
    cls = np.array([0, 0, 1, 1])
    test = np.array([[1.0, 0.0], [4.0, 3.0], [0.0, 4.0]])
    pred = np.array([0, 0, 1])
    # (1,0): nearest class 0 is (0,0) at 1; (0,0) to class 1: (0,3) at 3      -> 1/3
    # (4,3): nearest class 0 is (4,0) at 3; (4,0) to class 1: (0,3) at 5      -> 3/5
    # (0,4): nearest class 1 is (0,3) at 1; (0,3) to class 0: (0,0) at 3      -> 1/3
    expected = [1 / 3, 3 / 5, 1 / 3]
    np.testing.assert_allclose(surprise.dsa_scores(test, pred, train, cls), expected, rtol=1e-15)
    for x, c, e in zip(test.tolist(), pred.tolist(), expected):
        assert oracle.dsa(x, c, train.tolist(), cls.tolist()) == pytest.approx(e, rel=1e-15)
    profile = build_profile({"p": train}, cls)
    assert surprise.dsa({"p": test}, pred, profile, ["p"]) == pytest.approx(np.mean(expected), rel=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_dsa_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    train, cls = rng.normal(size=(40, 3)), rng.integers(0, 3, size=40)
    test, pred = rng.normal(size=(15, 3)) * 2, rng.integers(0, 3, size=15)
    got = surprise.dsa_scores(test, pred, train, cls)
    want = [oracle.dsa(x, c, train.tolist(), cls.tolist()) for x, c in zip(test.tolist(), pred.tolist())]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_set_values_are_means_over_layers_concatenated():
    profile = build_profile({"a": TRAIN[:, :1], "b": TRAIN[:, 1:]}, CLASSES)
    acts = {"a": TEST[:, :1], "b": TEST[:, 1:]}
    assert surprise.lsa(acts, PRED, profile, ["a", "b"]) == pytest.approx(
        surprise.lsa_scores(TEST, PRED, TRAIN, CLASSES).mean(), rel=1e-12)
    assert surprise.dsa(acts, PRED, profile, ["a", "b"]) == pytest.approx(
        surprise.dsa_scores(TEST, PRED, TRAIN, CLASSES).mean(), rel=1e-12)


def test_undefined_surprise_is_refused():
    with pytest.raises(ValueError, match="class 7"):
        surprise.lsa_scores(TEST[:1], np.array([7]), TRAIN, CLASSES)
    with pytest.raises(ValueError, match="class 0"):
        surprise.dsa_scores(TEST[:1], np.array([0]), TRAIN[:6], CLASSES[:6])  # no other class
    with pytest.raises(ValueError, match="integer"):
        surprise.dsa_scores(TEST, PRED.astype(float), TRAIN, CLASSES)
    with pytest.raises(ValueError, match="empty"):
        surprise.lsa({"p": np.zeros((0, 2))}, np.zeros(0, dtype=int), build_profile({"p": TRAIN}, CLASSES), ["p"])
