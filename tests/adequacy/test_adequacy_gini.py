"""DeepGini against its closed forms."""
import numpy as np
import pytest

from pipeline.adequacy import gini


@pytest.mark.parametrize("c", [2, 3, 10])
def test_uniform_and_one_hot(c):
    assert gini.gini_scores(np.full((3, c), 1.0 / c)) == pytest.approx([1 - 1 / c] * 3, abs=1e-12)
    assert gini.gini_scores(np.eye(c)).tolist() == [0.0] * c


def test_two_classes_and_the_set_mean():
    p = np.array([0.1, 0.5, 0.8])
    probs = np.stack([p, 1 - p], axis=1)
    assert gini.gini_scores(probs) == pytest.approx(2 * p * (1 - p), abs=1e-12)  # 1 - p² - (1-p)²
    assert gini.deepgini(probs) == pytest.approx(np.mean(2 * p * (1 - p)), abs=1e-12)
    assert gini.deepgini(np.array([[1.0, 0.0], [0.5, 0.5]])) == pytest.approx(0.25)


def test_softmax_of_logits():
    logits = np.array([[0.0, 0.0, 0.0], [1000.0, 0.0, 0.0], [np.log(3.0), 0.0, -np.inf]], dtype=np.float32)
    p = gini.softmax(logits)
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, [[1 / 3] * 3, [1, 0, 0], [0.75, 0.25, 0]], atol=1e-7)
    assert gini.deepgini(p) == pytest.approx(np.mean([2 / 3, 0.0, 1 - 0.75**2 - 0.25**2]), abs=1e-6)


def test_bad_probabilities_are_refused():
    for bad in (np.array([[0.5, 0.6]]), np.array([[-0.1, 1.1]]), np.array([0.5, 0.5]), np.array([[np.nan, 1.0]])):
        with pytest.raises(ValueError):
            gini.gini_scores(bad)
    with pytest.raises(ValueError, match="empty"):
        gini.deepgini(np.zeros((0, 3)))
