"""The Gaussian-process surrogate of the GP-based searches (GP-PND, `pipeline.search.methods.pnd`; ε-PAL,
`pipeline.search.methods.epal`; the leave-one-out order, `pipeline.search.studies.loo_order`): amplitude·RBF(ARD) + white noise
(`AmplitudeRBFWhite`), hyperparameters by maximum marginal likelihood (`fit_gp`, scikit-learn), the exact posterior
over all of Θ updated one observation at a time (`IncrementalGP`), and the increasing warps of an objective the fits
choose among (`Warp`)."""
from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Hyperparameter, Kernel


class AmplitudeRBFWhite(Kernel):
    """scikit-learn's `ConstantKernel(a) * RBF(ℓ) + WhiteKernel(σ²)` with an anisotropic ℓ (two inputs or more), as one
    kernel: the same hyperparameters in the same order (θ = log[a, ℓ_1, …, ℓ_d, σ²], the same bounds), and the same
    values and θ-gradients bit for bit, computed by the same floating-point operations element by element
    (`tests/search/test_gp_surrogate.py` checks it against the composition).

    Why not the composition itself: on GP-PND's fits (up to 162 points, 8 inputs) scikit-learn's kernel algebra spent
    about half of each likelihood evaluation outside the arithmetic, re-deriving hyperparameter lists by introspection at
    every θ and copying the gradient stacks twice (`np.dstack` in `Product` and `Sum`). Here the squared input
    differences are kept between the evaluations of one fit (the inputs do not change) and the gradient is built once,
    in one array: the fits of a GP-PND run take about half the time, with the same hyperparameters."""

    def __init__(self, constant_value: float = 1.0, length_scale: float | np.ndarray = (1.0, 1.0), noise_level: float = 1e-2,
                 constant_value_bounds: tuple[float, float] = (1e-3, 1e3), length_scale_bounds: tuple[float, float] = (1e-2, 1e2),
                 noise_level_bounds: tuple[float, float] = (1e-6, 1.0)) -> None:
        self.constant_value = constant_value
        self.length_scale = length_scale
        self.noise_level = noise_level
        self.constant_value_bounds = constant_value_bounds
        self.length_scale_bounds = length_scale_bounds
        self.noise_level_bounds = noise_level_bounds

    @property
    def hyperparameter_constant_value(self) -> Hyperparameter:
        return Hyperparameter("constant_value", "numeric", self.constant_value_bounds)

    @property
    def hyperparameter_length_scale(self) -> Hyperparameter:
        return Hyperparameter("length_scale", "numeric", self.length_scale_bounds, len(np.atleast_1d(self.length_scale)))

    @property
    def hyperparameter_noise_level(self) -> Hyperparameter:
        return Hyperparameter("noise_level", "numeric", self.noise_level_bounds)

    @property
    def theta(self) -> np.ndarray:
        return np.log(np.hstack([self.constant_value, self.length_scale, self.noise_level]))

    @theta.setter
    def theta(self, theta: np.ndarray) -> None:
        self.constant_value, self.length_scale, self.noise_level = np.exp(theta[0]), np.exp(theta[1:-1]), np.exp(theta[-1])

    def _length_scale(self, X: np.ndarray) -> np.ndarray:
        length_scale = np.squeeze(self.length_scale).astype(float)
        if length_scale.ndim != 1 or len(length_scale) != X.shape[1] or X.shape[1] < 2:
            raise ValueError(f"length_scale must hold one value per input column (two or more), got {self.length_scale!r} "
                             f"for {X.shape[1]} columns")
        return length_scale

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None, eval_gradient: bool = False
                 ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        X = np.atleast_2d(X)
        length_scale = self._length_scale(X)
        a, noise = self.constant_value, self.noise_level
        if Y is not None:
            if eval_gradient:
                raise ValueError("the gradient is only evaluated for k(X, X) (Y=None)")
            return a * np.exp(-0.5 * cdist(X / length_scale, np.atleast_2d(Y) / length_scale, metric="sqeuclidean"))
        rbf = squareform(np.exp(-0.5 * pdist(X / length_scale, metric="sqeuclidean")))
        np.fill_diagonal(rbf, 1)
        scaled, white = a * rbf, noise * np.eye(len(X))  # each also the gradient of its log-hyperparameter
        K = scaled + white
        if not eval_gradient:
            return K
        cached = getattr(self, "_squares", None)
        if cached is None or cached[0] is not X:
            # (d, n, n): the squared differences of each input column, the RBF's ∂/∂log ℓ_k before scaling
            self._squares = cached = (X, np.ascontiguousarray(np.moveaxis((X[:, np.newaxis, :] - X[np.newaxis, :, :]) ** 2, 2, 0)))
        gradient = np.empty((len(length_scale) + 2, len(X), len(X)))
        gradient[0], gradient[-1] = scaled, white
        parts = gradient[1:-1]
        np.divide(cached[1], (length_scale ** 2)[:, np.newaxis, np.newaxis], out=parts)
        np.multiply(parts, rbf, out=parts)
        np.multiply(parts, a, out=parts)
        return K, np.ascontiguousarray(np.moveaxis(gradient, 0, 2))

    def diag(self, X: np.ndarray) -> np.ndarray:
        return np.full(len(np.atleast_2d(X)), self.constant_value + self.noise_level, dtype=float)

    def is_stationary(self) -> bool:
        return True


class IncrementalGP:
    """Exact posterior of a zero-mean GP with fixed hyperparameters over a finite set of inputs Z (all
    of Θ), conditioned on observations added one at a time.

    Keeps V = L⁻¹ K(E, Z) row by row (L the Cholesky factor of K(E, E) + noise·I) and z = L⁻¹ y, so
    the posterior mean at every input is Vᵀz and the latent variance amplitude − Σ_rows V², each
    updated in O(|Z|) after an O(u·|Z|) row. Targets are standardised with the (mean, scale) given.
    """

    def __init__(self, Z: np.ndarray, amplitude: float, length_scale: np.ndarray, noise: float, y_mean: float, y_scale: float) -> None:
        self.Z = np.asarray(Z, dtype=float) / np.asarray(length_scale, dtype=float)
        self.amplitude, self.noise, self.y_mean, self.y_scale = float(amplitude), float(noise), float(y_mean), float(y_scale)
        size = len(self.Z)
        self._V = np.zeros((min(size, 64), size))
        self._z = np.zeros(min(size, 64))
        self.n = 0
        self._sumsq = np.zeros(size)
        self._mean = np.zeros(size)

    def add(self, i: int, y: float, extra: float = 0.0) -> None:
        """Condition on the observation y at input i (each input at most once), observed with `extra` noise variance
        (standardised units) beyond the common noise term: a raced configuration's estimate (`pipeline.search.racing.racing`)."""
        n = self.n
        if n == len(self._V):
            grow = min(len(self.Z), 2 * n) - n
            self._V = np.vstack([self._V, np.zeros((grow, len(self.Z)))])
            self._z = np.concatenate([self._z, np.zeros(grow)])
        V = self._V[:n]
        row = V[:, i]
        k = self.amplitude * np.exp(-0.5 * ((self.Z - self.Z[i]) ** 2).sum(axis=1))
        pivot = math.sqrt(max(self.amplitude + self.noise + float(extra) - float(row @ row), 1e-12))
        v = (k - row @ V) / pivot
        z = ((float(y) - self.y_mean) / self.y_scale - float(row @ self._z[:n])) / pivot
        self._V[n], self._z[n] = v, z
        self.n += 1
        self._sumsq += v * v
        self._mean += v * z

    def copy(self) -> IncrementalGP:
        """An independent copy (to condition on believed values without touching this posterior)."""
        other = object.__new__(IncrementalGP)
        other.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()})
        return other

    def mean(self) -> np.ndarray:
        """Posterior mean at every input, in the targets' units."""
        return self.y_mean + self.y_scale * self._mean

    def sd(self) -> np.ndarray:
        """Predictive standard deviation of a new observation at every input (latent + noise)."""
        return self.y_scale * np.sqrt(np.clip(self.amplitude - self._sumsq, 0.0, None) + self.noise)


class Warp:
    """A strictly increasing map of one objective, w(y) = −log(y_ref − y + c) (c > 0), continued
    linearly above y_ref with the slope 1/c it has there; c = None is the identity.

    Dominance, and so P*, is unchanged by any such map. A GP is fitted to w(y): the log stretches the
    values just below the best seen (y_ref), where a min-max-normalised distance such as KID-derived ρ
    crowds most of a front within 10⁻³ of 1, and makes noise that grows with the distance even."""

    def __init__(self, y_ref: float = 0.0, offset: float | None = None) -> None:
        self.y_ref, self.offset = float(y_ref), offset

    def __call__(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        if self.offset is None:
            return y.copy()
        c = self.offset
        gap = np.maximum(self.y_ref - y, 0.0)
        return np.where(y <= self.y_ref, -np.log(gap + c), -math.log(c) + (y - self.y_ref) / c)

    def noise(self, y: np.ndarray, variance: np.ndarray) -> np.ndarray:
        """The variance of w(y) for observations y with `variance` (the delta method: w'(y)² · variance)."""
        return np.asarray(variance, dtype=float) * np.exp(2.0 * self.log_slope(y))

    def log_slope(self, y: np.ndarray) -> np.ndarray:
        """log w'(y), the Jacobian term of the likelihood of y under a GP on w(y)."""
        y = np.asarray(y, dtype=float)
        if self.offset is None:
            return np.zeros(len(y))
        return -np.log(np.maximum(self.y_ref - y, 0.0) + self.offset)


def fit_regressor(Z: np.ndarray, y: np.ndarray, kernel: Kernel, extra: np.ndarray | None = None
                  ) -> tuple[float, GaussianProcessRegressor]:
    """scikit-learn's maximum-likelihood fit of `kernel` (L-BFGS-B from its hyperparameters) to standardised y, with
    `extra` (`fit_gp`) as per-sample noise on the standardised scale: (y's scale, the fitted regressor)."""
    scale = float(np.std(y))
    scale = scale if scale > 0 else 1.0
    alpha = 1e-10 if extra is None or not np.any(extra) else 1e-10 + np.asarray(extra, dtype=float) / scale ** 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return scale, GaussianProcessRegressor(kernel, alpha=alpha, normalize_y=True).fit(Z, y)


def fit_gp(Z: np.ndarray, y: np.ndarray, start: Kernel | None = None, extra: np.ndarray | None = None
           ) -> tuple[Kernel, dict[str, float | np.ndarray], float]:
    """Maximum-marginal-likelihood hyperparameters of amplitude·RBF(ARD) + white noise on standardised
    y (scikit-learn, L-BFGS-B from `start` or a default): the fitted kernel (a start for a later fit),
    `IncrementalGP` arguments, and the log-likelihood of y itself (scikit-learn's, of the standardised
    y, less n·log of the scale). `extra`: each observation's own noise variance beyond the white-noise term
    (y's units; scikit-learn's per-sample `alpha`, which it adds on the standardised scale)."""
    kernel = start if start is not None else AmplitudeRBFWhite(1.0, np.full(Z.shape[1], 0.5), 1e-2)
    scale, gp = fit_regressor(Z, y, kernel, extra)
    fitted = gp.kernel_
    params = {"amplitude": float(fitted.constant_value), "length_scale": np.atleast_1d(fitted.length_scale),
              "noise": float(fitted.noise_level), "y_mean": float(np.mean(y)), "y_scale": scale}
    return fitted, params, float(gp.log_marginal_likelihood_value_) - len(y) * math.log(scale)
