"""The chapter's own setting: a geometric model with one length scale per feature group.

A Nadaraya–Watson kernel regressor on scikit-learn's bundled diabetes data (442 patients, 10 baseline
variables, disease progression after one year). The kernel between patients x and x' is

    K(x, x') = exp(−½ Σ_g D_g(x, x') / ℓ_g²),   D_g = mean over the group's features of (x_f − x'_f)²

on features standardised with the training split's statistics, and the prediction is the K-weighted
mean of the training targets. ℓ_g = 10⁶ multiplies group g's distances by 10⁻¹²: the group no longer
moves any weight, which is exactly the chapter's inactive sentinel; with every group inactive the
model predicts the training mean. Small ℓ_g makes the model a nearest-neighbour lookup along g, so the
error has an interior minimum in every length scale (bias against variance) and both scan directions
of the threshold search have something to find.

Error = MAE on the held-out split. Targets = MAE on the held-out patients in each tertile of age and of
BMI (tertile edges from the training split): `age_low`, `age_mid`, `age_high`, `bmi_low`, `bmi_mid`,
`bmi_high`. The batched callback scores many parameter vectors in one vectorised pass; the single
callback is a batch of one, so the two agree exactly.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numba
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from pipeline.fuzz.adapters import Adapter
from pipeline.fuzz.evaluator import single_from_batch

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "demographics": ("age", "sex"),
    "bmi": ("bmi",),
    "blood_pressure": ("bp",),
    "cholesterol": ("s1", "s2", "s3", "s4"),  # total, LDL, HDL, total/HDL
    "glucose_triglycerides": ("s5", "s6"),  # log triglycerides, blood sugar
}
INACTIVE = 1e6


def _nadaraya_watson(inv2: np.ndarray, distances: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Predictions (m, T) for half inverse squared scales inv2 (m, G), distances (T, N, G), targets (N,).

    Compiled with numba: fused so that no (m, T, N) array is ever formed (numpy's vectorised form is
    memory-bound here), and row by row so that a row's result never depends on the other rows of the
    batch (a BLAS product may round a row differently in a batch than alone). Rows run in parallel.
    """
    m, g_count = inv2.shape
    t_count, n_count = distances.shape[0], distances.shape[1]
    out = np.empty((m, t_count))
    for r in numba.prange(m):
        logits = np.empty(n_count)
        for t in range(t_count):
            top = -np.inf
            for n in range(n_count):
                s = 0.0
                for g in range(g_count):
                    s -= inv2[r, g] * distances[t, n, g]
                logits[n] = s
                if s > top:
                    top = s
            num = 0.0
            den = 0.0
            for n in range(n_count):
                w = np.exp(logits[n] - top)  # a softmax over training patients
                num += w * y[n]
                den += w
            out[r, t] = num / den
    return out


_nw_serial = numba.njit(cache=True)(_nadaraya_watson)
_nw_parallel = numba.njit(parallel=True, cache=True)(_nadaraya_watson)
PARALLEL_MIN_ROWS = 16  # below this, starting the thread pool costs more than it saves


class KernelRegressor:
    """Nadaraya–Watson regression with one length scale per feature group, vectorised over scales."""

    def __init__(self, x_train: np.ndarray, y_train: np.ndarray, x_eval: np.ndarray, groups: Sequence[Sequence[int]]):
        mean, std = x_train.mean(axis=0), x_train.std(axis=0)
        std = np.where(std > 0, std, 1.0)
        a, b = (x_train - mean) / std, (x_eval - mean) / std
        # D[t, n, g]: mean squared standardised difference over group g between eval t and train n.
        self.distances = np.ascontiguousarray(
            np.stack([((b[:, None, g] - a[None, :, g]) ** 2).mean(axis=2) for g in map(list, groups)], axis=2)
        )
        self.y_train = np.ascontiguousarray(y_train, dtype=float)

    @property
    def n_groups(self) -> int:
        return self.distances.shape[2]

    def predict(self, length_scales: np.ndarray) -> np.ndarray:
        """Predictions (m, n_eval) for an (m, n_groups) matrix of length scales."""
        scales = np.atleast_2d(np.asarray(length_scales, dtype=float))
        if scales.shape[1] != self.n_groups:
            raise ValueError(f"expected {self.n_groups} length scales per row, got {scales.shape[1]}")
        if not (scales > 0).all():
            raise ValueError(f"length scales must be positive, got {scales[~(scales > 0)][:3]}")
        kernel = _nw_parallel if len(scales) >= PARALLEL_MIN_ROWS else _nw_serial
        return kernel(np.ascontiguousarray(0.5 / scales**2), self.distances, self.y_train)


def diabetes_split(seed: int = 0, test_fraction: float = 0.2) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Raw (unscaled) diabetes features and targets, split into train and held-out."""
    if not 0 < float(test_fraction) < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    bunch = load_diabetes(scaled=False)
    x_tr, x_te, y_tr, y_te = train_test_split(bunch.data, bunch.target, test_size=test_fraction, random_state=seed)
    return {"train": (x_tr, y_tr), "test": (x_te, y_te)}


def tertile_groups(x_train: np.ndarray, x_test: np.ndarray, columns: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Masks of held-out patients in each tertile (edges from the training split) of each column."""
    masks = {}
    for name, col in columns.items():
        lo, hi = np.quantile(x_train[:, col], [1 / 3, 2 / 3])
        v = x_test[:, col]
        masks[f"{name}_low"], masks[f"{name}_mid"], masks[f"{name}_high"] = v <= lo, (v > lo) & (v <= hi), v > hi
    return masks


def geometric_adapter(
    seed: int = 0, test_fraction: float = 0.2, groups: Mapping[str, Sequence[str]] | None = None,
    candidate_values: Sequence[float] = (0.25, 0.5, 1.0, 2.0),
) -> Adapter:
    """The kernel regressor on diabetes as an Adapter (dimensions = feature groups, params = ℓ_g)."""
    groups = dict(FEATURE_GROUPS if groups is None else groups)
    features = list(load_diabetes().feature_names)
    unknown = sorted({f for fs in groups.values() for f in fs} - set(features))
    if unknown or not groups:
        raise ValueError(f"feature groups must name diabetes features {features}; unknown: {unknown}")
    split = diabetes_split(seed, test_fraction)
    (x_tr, y_tr), (x_te, y_te) = split["train"], split["test"]
    model = KernelRegressor(x_tr, y_tr, x_te, [[features.index(f) for f in fs] for fs in groups.values()])
    masks = tertile_groups(x_tr, x_te, {"age": features.index("age"), "bmi": features.index("bmi")})

    def evaluate_batch(length_scales: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        abs_err = np.abs(model.predict(length_scales) - y_te)
        # Row by row: numpy reduces a 2-D array's rows in a batch-size dependent order.
        errors = np.array([row.mean() for row in abs_err])
        return errors, {name: np.array([row[m].mean() for row in abs_err]) for name, m in masks.items()}

    return Adapter(
        name="geometric", dim_names=tuple(groups), evaluate_fn=single_from_batch(evaluate_batch),
        evaluate_batch_fn=evaluate_batch, inactive_value=INACTIVE, candidate_values=tuple(float(v) for v in candidate_values),
        operating_point=None, target_names=tuple(masks), error_name="MAE",
    )
