"""Exercise 9.3: the MRI of a quadratic loss, against the closed forms (and against §9.7.1)."""
import numpy as np
import pytest
from scipy import stats

from pipeline.fuzz import compute_mri, isotropic_mri_constant, quadratic_omega_moments
from tests.fuzz.fuzz_models import Quadratic

N = 20_000


def _hessian(seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    return q @ np.diag([4.0, 2.0, 1.0, 0.25]) @ q.T  # anisotropic, off-diagonal


def _omegas(h, sigma, seed=1):
    q = Quadratic(h, np.ones(len(h)))
    r = compute_mri(np.ones(len(h)), q.single, N, sigma, rng=np.random.default_rng(seed), evaluate_batch_fn=q.batch)
    return r, r.omegas


def test_moments_of_omega_match_the_derivation_within_sampling_error():
    h, sigma = _hessian(), 0.3
    mean, second = quadratic_omega_moments(h, sigma)
    assert mean == pytest.approx(sigma**2 / 2 * np.trace(h))
    assert second == pytest.approx(sigma**4 / 4 * (np.trace(h) ** 2 + 2 * np.trace(h @ h)))
    _, w = _omegas(h, sigma)
    se_mean = np.sqrt(sigma**4 / 2 * np.trace(h @ h) / N)  # Var ω = σ⁴/2 tr(H²)
    assert abs(w.mean() - mean) < 4 * se_mean
    se_second = (w**2).std() / np.sqrt(N)
    assert abs((w**2).mean() - second) < 4 * se_second
    # §9.7.1's E[ω²] = σ²/2 tr(H) is E[ω], not E[ω²]: the sample rejects it by many standard errors.
    assert abs((w**2).mean() - sigma**2 / 2 * np.trace(h)) > 20 * se_second


def test_mri_is_linear_in_the_hessian_not_its_square_root():
    h = _hessian()
    r1, _ = _omegas(h, 0.3)
    r4, _ = _omegas(4 * h, 0.3)
    # Same draws: ω scales exactly with H, so the MRI quadruples; √tr(H) would only double it.
    assert r4.mri / r1.mri == pytest.approx(4.0, rel=1e-9)
    r_half, _ = _omegas(h, 0.15)
    assert r1.mri / r_half.mri == pytest.approx(4.0, rel=1e-9)  # and ∝ σ²


@pytest.mark.parametrize("d, lam", [(1, 2.0), (3, 0.5), (6, 1.0)])
def test_isotropic_population_mri_is_a_constant_times_the_trace(d, lam):
    sigma, w = 0.3, (0.5, 0.3, 0.2)
    c = isotropic_mri_constant(d, sigma, w)
    chi2 = stats.chi2(d)
    expected = sigma**2 * lam / 2 * (w[0] * d + w[1] * chi2.ppf(0.75) + w[2] * chi2.ppf(0.95))
    assert c * lam * d == pytest.approx(expected)
    r, _ = _omegas(lam * np.eye(d), sigma, seed=d)
    assert r.mri == pytest.approx(c * lam * d, rel=0.03)


def test_moments_reject_a_hessian_that_is_not_at_a_minimum():
    with pytest.raises(ValueError, match="semi-definite"):
        quadratic_omega_moments(np.diag([1.0, -1.0]), 0.5)
    with pytest.raises(ValueError, match="symmetric"):
        quadratic_omega_moments(np.array([[1.0, 2.0], [0.0, 1.0]]), 0.5)
