"""The MRI of a quadratic loss surface (chapter 9, §9.7.1 and exercise 9.3), derived correctly.

Near a minimum, L(θ* + δ) − L(θ*) = ½ δᵀHδ ≥ 0, so ω = ½ δᵀHδ. With δ = σz, z ~ N(0, I) and the
eigenvalues λ_j of H, ω = (σ²/2) Σ_j λ_j u_j² with u = Qᵀz ~ N(0, I), whence

    E[ω]  = (σ²/2) tr(H)
    E[ω²] = (σ⁴/4) (tr(H)² + 2 tr(H²)),   Var[ω] = (σ⁴/2) tr(H²).

§9.7.1 gives E[ω²] = (σ²/2) tr(H) (that is E[ω]) and concludes MRI ∝ √tr(H). In fact every statistic
in the MRI is a quantile or mean of ω, and ω scales linearly with H and with σ², so
MRI(cH) = c·MRI(H) and MRI ∝ σ²: the MRI grows with tr(H) itself, not its square root. For H = λI_d
the population MRI is exactly c(σ, w, d)·tr(H) (see `isotropic_mri_constant`). Under the chapter's
multiplicative perturbation, δ is the perturbation of log θ and H is the Hessian in log-coordinates,
diag(θ*) ∇²L diag(θ*) at a minimum.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import stats

from pipeline.fuzz.mri import check_weights


def _hessian(hessian: np.ndarray) -> np.ndarray:
    h = np.asarray(hessian, dtype=float)
    if h.ndim != 2 or h.shape[0] != h.shape[1] or not np.allclose(h, h.T):
        raise ValueError(f"the Hessian must be a symmetric square matrix, got shape {h.shape}")
    if np.linalg.eigvalsh(h).min() < -1e-12 * max(1.0, np.abs(h).max()):
        raise ValueError("the Hessian at a minimum must be positive semi-definite; it has a negative eigenvalue")
    return h


def quadratic_omega_moments(hessian: np.ndarray, scale: float) -> tuple[float, float]:
    """(E[ω], E[ω²]) for ω = ½ δᵀHδ, δ ~ N(0, σ²I): ((σ²/2) tr H, (σ⁴/4)(tr(H)² + 2 tr(H²)))."""
    h = _hessian(hessian)
    s2 = float(scale) ** 2
    tr, tr2 = float(np.trace(h)), float(np.trace(h @ h))
    return s2 / 2 * tr, s2**2 / 4 * (tr**2 + 2 * tr2)


def isotropic_mri_constant(n_dims: int, scale: float, weights: Sequence[float] = (0.5, 0.3, 0.2)) -> float:
    """c with population MRI = c·tr(H) for H = λI_d: (σ²/2)(w0 + (w1 q₀.₇₅(χ²_d) + w2 q₀.₉₅(χ²_d))/d).

    Here ω = (σ²λ/2) χ²_d, so mean = (σ²λ/2) d and P_p = (σ²λ/2) q_p(χ²_d), with tr(H) = λd.
    """
    if int(n_dims) < 1:
        raise ValueError(f"n_dims must be at least 1, got {n_dims}")
    w = check_weights(weights)
    d = int(n_dims)
    chi2 = stats.chi2(d)
    return float(scale) ** 2 / 2 * (w[0] + (w[1] * chi2.ppf(0.75) + w[2] * chi2.ppf(0.95)) / d)
