"""Synthetic ground-truth tables in the `groundtruth` stage's format, for the search tests."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from pipeline.front.pareto import pareto_mask
from pipeline.front.space import Space

NAMES4 = ("speckle_noise", "glass_blur", "brightness", "pixelate")


def minmax(v: np.ndarray) -> np.ndarray:
    return (v - v.min()) / (v.max() - v.min())


def synthetic_table(space: Space, metrics: Sequence[str] = ("ssim", "kid"), seed: int = 0, noise: float = 0.03) -> pd.DataFrame:
    """δ grows smoothly with the levels (unequal weights per dimension), ρ falls with them (a different
    weighting per metric), plus noise: a broad, non-trivial front."""
    rng = np.random.default_rng(seed)
    g = space.grid().astype(float) / (space.levels - 1)
    w = np.linspace(1.0, 0.4, space.n_dims)
    delta = np.clip((g**2 @ w) / w.sum() + noise * rng.standard_normal(len(g)), 0, None)
    df = pd.DataFrame(space.grid(), columns=list(space.names))
    df["order"] = Space.order(space.grid())
    df["accuracy"] = 0.9 - delta
    df["delta"] = delta
    df["delta_norm"] = minmax(delta)
    for k, m in enumerate(metrics):
        wm = np.roll(w, k + 1)
        rho = 1 - (g @ wm / wm.sum()) ** (0.6 + 0.3 * k) + noise * rng.standard_normal(len(g))
        df[f"rho_{m}"] = rho
        df[f"rho_{m}_norm"] = minmax(rho)
        df[f"pareto_{m}"] = pareto_mask(df[["delta_norm", f"rho_{m}_norm"]].to_numpy())
    return df


def general_non_domination_probability(mean: np.ndarray, sd: np.ndarray, front: np.ndarray) -> np.ndarray:
    """`pipeline.search.acquisition.nondomination.non_domination_probability` by its general formula only, the step branch
    taken element by element (`np.where`): the reference its no-step path must match bit for bit."""
    from scipy.special import ndtr

    if len(front) == 0:
        return np.ones(len(mean))
    front = front[np.argsort(front[:, 0], kind="stable")]
    with np.errstate(divide="ignore", invalid="ignore"):
        def cdf(edge, mu, s):
            return np.where(s[:, None] > 0, ndtr((edge[None, :] - mu[:, None]) / s[:, None]), (mu[:, None] <= edge[None, :]) * 1.0)
        below, above = cdf(front[:, 0], mean[:, 0], sd[:, 0]), 1.0 - cdf(front[:, 1], mean[:, 1], sd[:, 1])
    return np.clip((np.diff(below, axis=1, prepend=0.0) * above).sum(axis=1) + (1.0 - below[:, -1]), 0.0, 1.0)


def general_undominated_count(mean: np.ndarray, sd: np.ndarray, points: np.ndarray) -> float:
    """`pipeline.search.acquisition.nondomination.undominated_count` by its general formula only (as above)."""
    from scipy.special import ndtr

    with np.errstate(divide="ignore", invalid="ignore"):
        z = (mean[:, None, :] - points[None, :, :]) / sd[:, None, :]
    beats = np.where(sd[:, None, :] > 0, ndtr(z), (mean[:, None, :] > points[None, :, :]) * 1.0)
    return float(np.exp(np.log1p(-np.clip(beats.prod(axis=2), 0.0, 1.0 - 1e-12)).sum(axis=0)).sum())


def kernel_composition(amplitude: float, length_scale: np.ndarray, noise: float):
    """scikit-learn's `ConstantKernel * RBF + WhiteKernel` with GP-PND's bounds: the oracle of
    `pipeline.search.surrogate.gp_surrogate.AmplitudeRBFWhite` (its test, and part (6) of perf/bench_search.py)."""
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    return ConstantKernel(amplitude, (1e-3, 1e3)) * RBF(length_scale, (1e-2, 1e2)) + WhiteKernel(noise, (1e-6, 1.0))
