"""A zoo of small classifiers with class probabilities, for paired prediction records.

Each entry is a spec `{name, family, kind, ...}`; `family` is the model's statistical group (for group
resampling, as the ten fixed groups of the paired-evaluations paper). Image kinds (modality "vision",
inputs uint8 (N, H, W, 3) images):

* ``cnn``: the embedded SmallCNN (`pipeline.models.cnn`), options width, seed, epochs;
* ``mlp``, ``logreg``, ``forest``, ``knn``: scikit-learn estimators on grey, block-averaged features
  (`feature_size` x `feature_size`, default 8: the digits' native resolution), with their usual options.

Text kinds (modality "text", inputs a list of strings):

* ``minilm_logreg``, ``minilm_mlp``, ``minilm_knn``: scikit-learn estimators on the frozen all-MiniLM-L6-v2
  sentence embedding (`pipeline.models.text_encoder`, the encoder of the text benchmark's model);
* ``tfidf_logreg``, ``tfidf_nb``: logistic regression / multinomial naive Bayes on TF-IDF word uni- and
  bigrams (sublinear term frequency) — models that see the surface words, not an encoder's embedding, so
  the zoo holds families that respond differently to synonyms and typos.

Every model exposes `fit(inputs, labels)` and `predict_proba(inputs) -> (N, n_classes)`; the catalog
(`pipeline.plugins.catalog.ZOO_KINDS`) names each kind and says which inputs it takes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import MultinomialNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pipeline.plugins.catalog import ZOO_KINDS as KINDS


def grey_features(images: np.ndarray, size: int = 8) -> np.ndarray:
    """(N, H, W, 3) uint8 → (N, size*size) grey block means in [0, 1] (H and W must be multiples of size)."""
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) uint8 images, got {images.dtype} {images.shape}")
    n, h, w, _ = images.shape
    if h % size or w % size:
        raise ValueError(f"image size {h}x{w} is not a multiple of feature_size {size}")
    grey = images.mean(axis=3) / 255.0
    return grey.reshape(n, size, h // size, size, w // size).mean(axis=(2, 4)).reshape(n, size * size)


def sentence_embeddings(texts: Sequence[str]) -> np.ndarray:
    """(N, 384) all-MiniLM-L6-v2 sentence embeddings through the process-wide encoder (cached per text)."""
    from pipeline.models.text_encoder import default_encoder

    return default_encoder().embed(list(texts))


@dataclass
class SklearnModel:
    """A scikit-learn classifier on `features(inputs)`; probabilities cover every training class."""

    estimator: Any
    features: Callable[[Any], Any]
    n_classes: int = field(default=0, init=False)

    def fit(self, inputs: Any, labels: np.ndarray) -> "SklearnModel":
        self.n_classes = int(labels.max()) + 1
        self.estimator.fit(self.features(inputs), labels)
        return self

    def predict_proba(self, inputs: Any) -> np.ndarray:
        proba = self.estimator.predict_proba(self.features(inputs))
        out = np.zeros((len(inputs), self.n_classes))
        out[:, self.estimator.classes_] = proba
        return out


def _grey(size: int) -> Callable[[np.ndarray], np.ndarray]:
    return partial(grey_features, size=size)


def _texts(texts: Sequence[str]) -> list[str]:
    return list(texts)


@dataclass
class CNNModel:
    """The embedded SmallCNN trained with Adam (`pipeline.models.cnn.train_cnn`)."""

    width: int = 32
    seed: int = 0
    epochs: int = 10
    module: Any = field(default=None, init=False)

    def fit(self, images: np.ndarray, labels: np.ndarray) -> "CNNModel":
        from pipeline.models.cnn import train_cnn  # torch loads here, not in every stage that reads records (1.4 s)

        self.module = train_cnn(images, labels, seed=self.seed, width=self.width, epochs=self.epochs)
        return self

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        from pipeline.models.cnn import predict_proba

        return predict_proba(self.module, images)


def _mlp_estimator(hidden: int, seed: int, max_iter: int) -> Any:
    return make_pipeline(StandardScaler(), MLPClassifier((hidden,), max_iter=max_iter, random_state=seed))


def _logreg_estimator(C: float, max_iter: int) -> Any:
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter))


def mlp(hidden: int = 64, seed: int = 0, max_iter: int = 400, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(_mlp_estimator(hidden, seed, max_iter), _grey(feature_size))


def logreg(C: float = 1.0, max_iter: int = 2000, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(_logreg_estimator(C, max_iter), _grey(feature_size))


def forest(n_estimators: int = 100, seed: int = 0, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1), _grey(feature_size))


def knn(n_neighbors: int = 5, feature_size: int = 8) -> SklearnModel:
    return SklearnModel(KNeighborsClassifier(n_neighbors=n_neighbors), _grey(feature_size))


def minilm_mlp(hidden: int = 64, seed: int = 0, max_iter: int = 400) -> SklearnModel:
    return SklearnModel(_mlp_estimator(hidden, seed, max_iter), sentence_embeddings)


def minilm_logreg(C: float = 1.0, max_iter: int = 2000) -> SklearnModel:
    return SklearnModel(_logreg_estimator(C, max_iter), sentence_embeddings)


def minilm_knn(n_neighbors: int = 5) -> SklearnModel:
    # cosine neighbours: the sentence embeddings are L2-normalised, so Euclidean order is cosine order
    return SklearnModel(KNeighborsClassifier(n_neighbors=n_neighbors), sentence_embeddings)


def _tfidf() -> TfidfVectorizer:
    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1)


def tfidf_logreg(C: float = 10.0, max_iter: int = 2000) -> SklearnModel:
    return SklearnModel(make_pipeline(_tfidf(), LogisticRegression(C=C, max_iter=max_iter)), _texts)


def tfidf_nb(alpha: float = 0.1) -> SklearnModel:
    return SklearnModel(make_pipeline(_tfidf(), MultinomialNB(alpha=alpha)), _texts)


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
