"""The Gaussian-process surrogate of the GP-based searches (GP-PND, `pipeline.search.pnd`; ε-PAL,
`pipeline.search.epal`; the leave-one-out order, `pipeline.search.loo_order`): amplitude·RBF(ARD) + white noise,
hyperparameters by maximum marginal likelihood (`fit_gp`, scikit-learn), the exact posterior over all of Θ updated
one observation at a time (`IncrementalGP`), and the increasing warps of an objective the fits choose among (`Warp`)."""
from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Kernel, WhiteKernel


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
        (standardised units) beyond the common noise term: a raced configuration's estimate (`pipeline.search.racing`)."""
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


def fit_gp(Z: np.ndarray, y: np.ndarray, start: Kernel | None = None, extra: np.ndarray | None = None
           ) -> tuple[Kernel, dict[str, float | np.ndarray], float]:
    """Maximum-marginal-likelihood hyperparameters of amplitude·RBF(ARD) + white noise on standardised
    y (scikit-learn, L-BFGS-B from `start` or a default): the fitted kernel (a start for a later fit),
    `IncrementalGP` arguments, and the log-likelihood of y itself (scikit-learn's, of the standardised
    y, less n·log of the scale). `extra`: each observation's own noise variance beyond the white-noise term
    (y's units; scikit-learn's per-sample `alpha`, which it adds on the standardised scale)."""
    kernel = start if start is not None else (
        ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.full(Z.shape[1], 0.5), (1e-2, 1e2)) + WhiteKernel(1e-2, (1e-6, 1.0)))
    scale = float(np.std(y))
    scale = scale if scale > 0 else 1.0
    alpha = 1e-10 if extra is None or not np.any(extra) else 1e-10 + np.asarray(extra, dtype=float) / scale ** 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp = GaussianProcessRegressor(kernel, alpha=alpha, normalize_y=True).fit(Z, y)
    fitted = gp.kernel_
    params = {"amplitude": float(fitted.k1.k1.constant_value), "length_scale": np.atleast_1d(fitted.k1.k2.length_scale),
              "noise": float(fitted.k2.noise_level), "y_mean": float(np.mean(y)), "y_scale": scale}
    return fitted, params, float(gp.log_marginal_likelihood_value_) - len(y) * math.log(scale)
