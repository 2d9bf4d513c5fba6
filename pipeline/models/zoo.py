"""A zoo of small image classifiers with class probabilities, for paired prediction records.

Each entry is a spec `{name, family, kind, ...}`; `family` is the model's statistical group (for group
resampling, as the ten fixed groups of the paired-evaluations paper). Kinds:

* ``cnn``: the embedded SmallCNN (`pipeline.models.cnn`), options width, seed, epochs;
* ``mlp``, ``logreg``, ``forest``, ``knn``: scikit-learn estimators on grey, block-averaged features
  (`feature_size` x `feature_size`, default 8: the digits' native resolution), with their usual options.

Every model exposes `fit(images, labels)` and `predict_proba(images) -> (N, n_classes)` on uint8
(N, H, W, 3) images.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pipeline.models.cnn import predict_proba as cnn_predict_proba
from pipeline.models.cnn import train_cnn
from pipeline.registry import Registry


def grey_features(images: np.ndarray, size: int = 8) -> np.ndarray:
    """(N, H, W, 3) uint8 → (N, size*size) grey block means in [0, 1] (H and W must be multiples of size)."""
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) uint8 images, got {images.dtype} {images.shape}")
    n, h, w, _ = images.shape
    if h % size or w % size:
        raise ValueError(f"image size {h}x{w} is not a multiple of feature_size {size}")
    grey = images.mean(axis=3) / 255.0
    return grey.reshape(n, size, h // size, size, w // size).mean(axis=(2, 4)).reshape(n, size * size)


@dataclass
class SklearnModel:
    """A scikit-learn classifier on grey block features; probabilities cover every training class."""

    estimator: Any
    feature_size: int = 8
    n_classes: int = field(default=0, init=False)

    def fit(self, images: np.ndarray, labels: np.ndarray) -> "SklearnModel":
        self.n_classes = int(labels.max()) + 1
        self.estimator.fit(grey_features(images, self.feature_size), labels)
        return self

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        proba = self.estimator.predict_proba(grey_features(images, self.feature_size))
        out = np.zeros((len(images), self.n_classes))
        out[:, self.estimator.classes_] = proba
        return out


@dataclass
class CNNModel:
    """The embedded SmallCNN trained with Adam (`pipeline.models.cnn.train_cnn`)."""

    width: int = 32
    seed: int = 0
    epochs: int = 10
    module: Any = field(default=None, init=False)

    def fit(self, images: np.ndarray, labels: np.ndarray) -> "CNNModel":
        self.module = train_cnn(images, labels, seed=self.seed, width=self.width, epochs=self.epochs)
        return self

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        return cnn_predict_proba(self.module, images)


def _mlp(hidden: int = 64, seed: int = 0, max_iter: int = 400, feature_size: int = 8) -> SklearnModel:
    est = make_pipeline(StandardScaler(), MLPClassifier((hidden,), max_iter=max_iter, random_state=seed))
    return SklearnModel(est, feature_size)


def _logreg(C: float = 1.0, max_iter: int = 2000, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter)), feature_size)


def _forest(n_estimators: int = 100, seed: int = 0, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1), feature_size)


def _knn(n_neighbors: int = 5, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(KNeighborsClassifier(n_neighbors=n_neighbors), feature_size)


KINDS: Registry[Callable[..., Any]] = Registry("zoo model kind")
for _kind, _factory in {"cnn": CNNModel, "mlp": _mlp, "logreg": _logreg, "forest": _forest, "knn": _knn}.items():
    KINDS.register(_kind, _factory)


def build_model(spec: dict) -> Any:
    """An unfitted zoo model from `{name, family, kind, **options}`."""
    spec = dict(spec)
    for key in ("name", "family", "kind"):
        if key not in spec:
            raise ValueError(f"zoo model spec {spec} lacks {key!r}; a spec needs name, family and kind")
    spec.pop("name"), spec.pop("family")
    kind = spec.pop("kind")
    factory = KINDS.get(kind)
    try:
        return factory(**spec)
    except TypeError as err:
        raise ValueError(f"bad options {spec} for zoo model kind {kind!r}: {err}") from None


def check_zoo(specs: list[dict]) -> None:
    """Model names must be unique."""
    names = [s.get("name") for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"zoo model names must be unique; repeated: {dupes}")
