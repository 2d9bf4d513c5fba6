"""`AmplitudeRBFWhite` against its oracle, scikit-learn's composition `ConstantKernel * RBF + WhiteKernel`: the same
hyperparameters, values, gradients and fits, bit for bit."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor

from pipeline.search.surrogate.gp_surrogate import AmplitudeRBFWhite, fit_gp
from tests.search.search_fixtures import kernel_composition


def problem(seed: int, n: int = 40, d: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """GP-PND's kind of inputs (levels / (ℓ − 1) and activity flags) and a rough objective."""
    rng = np.random.default_rng(seed)
    levels = rng.integers(0, 6, size=(n, d // 2))
    Z = np.hstack([levels / 5, (levels > 0).astype(float)])
    return Z, np.sin(Z @ rng.normal(size=d)) + 0.1 * rng.standard_normal(n)


def fit(kernel, Z: np.ndarray, y: np.ndarray, alpha=1e-10) -> GaussianProcessRegressor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return GaussianProcessRegressor(kernel, alpha=alpha, normalize_y=True).fit(Z, y)


def test_hyperparameters_theta_and_bounds_are_the_compositions():
    ours, theirs = AmplitudeRBFWhite(1.0, np.full(8, 0.5), 1e-2), kernel_composition(1.0, np.full(8, 0.5), 1e-2)
    assert np.array_equal(ours.theta, theirs.theta) and np.array_equal(ours.bounds, theirs.bounds)
    assert [h.n_elements for h in ours.hyperparameters] == [1, 8, 1]
    theta = np.random.default_rng(0).normal(size=10)
    ours.theta, theirs.theta = theta, theta
    assert np.array_equal(ours.theta, theirs.theta)
    assert ours.constant_value == theirs.k1.k1.constant_value and ours.noise_level == theirs.k2.noise_level
    assert np.array_equal(ours.length_scale, theirs.k1.k2.length_scale)


@pytest.mark.parametrize("seed", range(4))
def test_values_and_gradients_are_the_compositions_bit_for_bit(seed):
    Z, _ = problem(seed)
    theta = np.random.default_rng(seed).uniform(np.log(1e-2), np.log(10), 10)
    ours, theirs = AmplitudeRBFWhite(1.0, np.ones(8), 1.0), kernel_composition(1.0, np.ones(8), 1.0)
    ours.theta, theirs.theta = theta, theta
    K, gradient = ours(Z, eval_gradient=True)
    K_ref, gradient_ref = theirs(Z, eval_gradient=True)
    assert np.array_equal(K, K_ref) and np.array_equal(gradient, gradient_ref)
    assert gradient.flags.c_contiguous  # what scikit-learn's likelihood reads, laid out as np.dstack lays it out
    K2, gradient2 = ours(Z, eval_gradient=True)  # the squared differences now come from the cache
    assert np.array_equal(K2, K_ref) and np.array_equal(gradient2, gradient_ref)
    Y = Z[::3] + 0.05
    assert np.array_equal(ours(Z), theirs(Z)) and np.array_equal(ours(Z, Y), theirs(Z, Y))
    assert np.array_equal(ours.diag(Z), theirs.diag(Z))
    with pytest.raises(ValueError, match="only evaluated for k"):
        ours(Z, Y, eval_gradient=True)


@pytest.mark.parametrize("seed", range(3))
def test_maximum_likelihood_fits_are_the_compositions_bit_for_bit(seed):
    """The whole scikit-learn fit (L-BFGS-B on the likelihood and its gradient), also with per-point noise and from a
    fitted kernel as the start (ε-PAL's warm start)."""
    Z, y = problem(seed, n=60)
    alpha = 1e-10 + np.random.default_rng(seed).uniform(0, 0.05, len(y))
    for a in (1e-10, alpha):
        ours = fit(AmplitudeRBFWhite(1.0, np.full(8, 0.5), 1e-2), Z, y, a)
        theirs = fit(kernel_composition(1.0, np.full(8, 0.5), 1e-2), Z, y, a)
        assert np.array_equal(ours.kernel_.theta, theirs.kernel_.theta)
        assert ours.log_marginal_likelihood_value_ == theirs.log_marginal_likelihood_value_
        assert np.array_equal(ours.L_, theirs.L_) and np.array_equal(ours.alpha_, theirs.alpha_)
    warm = fit(ours.kernel_, Z[:45], y[:45])
    warm_ref = fit(theirs.kernel_, Z[:45], y[:45])
    assert np.array_equal(warm.kernel_.theta, warm_ref.kernel_.theta)


def test_fit_gp_reads_the_fitted_hyperparameters():
    Z, y = problem(7, n=50)
    kernel, params, loglik = fit_gp(Z, y)
    reference = fit(kernel_composition(1.0, np.full(8, 0.5), 1e-2), Z, y)
    assert params["amplitude"] == reference.kernel_.k1.k1.constant_value
    assert np.array_equal(params["length_scale"], reference.kernel_.k1.k2.length_scale)
    assert params["noise"] == reference.kernel_.k2.noise_level
    assert loglik == reference.log_marginal_likelihood_value_ - len(y) * math.log(float(np.std(y)))
    assert np.array_equal(kernel.theta, reference.kernel_.theta)


def test_a_length_scale_per_column_is_required():
    with pytest.raises(ValueError, match="one value per input column"):
        AmplitudeRBFWhite(1.0, np.ones(3))(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="two or more"):
        AmplitudeRBFWhite(1.0, 1.0)(np.zeros((4, 1)))
