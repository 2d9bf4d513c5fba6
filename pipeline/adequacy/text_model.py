"""The adequacy metrics' view of the embedded text model (TestNav §4.4 on benchmark (ii)): which
activations of the frozen MiniLM encoder + logistic head stand for the "neurons" and "traces" that NAC,
SNAC, KMNC, TKNC, LSA and DSA were defined on for feed-forward image classifiers.

- Coverage layers `encoder.layer.0` .. `encoder.layer.5`: the output of each of the six transformer
  blocks, averaged over the text's tokens ([CLS] and [SEP] included, as the sentence embedding is), 384
  values per block. Averaging over tokens is what the digits CNN's hook does over a feature map's
  positions (a channel's mean is its neuron): a text has a varying number of positions, and coverage
  criteria need one value per neuron and input. The values come from the encoder's one forward pass per
  text that the classifier and BERT-F1 already share (`pipeline.models.text_encoder.Encoding.layers`).
- Surprise layer `sentence_pca`: the sentence embedding (the head's input, the penultimate layer as Kim et
  al. use it) projected onto its first `PCA_COMPONENTS` principal axes over the training texts. LSA fits
  one Gaussian KDE per predicted class, and a KDE in d dimensions needs more than d traces of the class
  to have a non-singular covariance: the 1,446 training leads give 228-349 per class against 384
  dimensions, so the KDE of the raw embedding is singular. 32 axes keep 43% of the embedding's training
  variance (64: 61%, 16: 29%; measured on the training split) and leave the smallest class 7 traces per
  dimension, where 64 would leave it 3.6: a KDE that coarse estimates little. DSA uses the same traces so
  that the two surprise metrics see one space.
- DeepGini reads the head's class probabilities (softmax of its logits), as for the CNN.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

PCA_COMPONENTS = 32
SURPRISE_LAYER = "sentence_pca"


def coverage_layers(n_layers: int) -> tuple[str, ...]:
    """The coverage layer names of an encoder with `n_layers` transformer blocks."""
    return tuple(f"encoder.layer.{i}" for i in range(n_layers))


@dataclass(frozen=True)
class Projection:
    """x ↦ (x − mean) @ components.T: the training embeddings' first principal axes (rows of components)."""

    mean: np.ndarray
    components: np.ndarray

    def __call__(self, sentences: np.ndarray) -> np.ndarray:
        return (np.asarray(sentences, dtype=np.float64) - self.mean) @ self.components.T

    def save(self, path: str | Path) -> None:
        from pipeline.runtime.io import atomic_path

        with atomic_path(Path(path)) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, mean=self.mean, components=self.components)

    @classmethod
    def load(cls, path: str | Path) -> "Projection":
        with np.load(Path(path), allow_pickle=False) as z:
            return cls(z["mean"], z["components"])


def fit_projection(sentences: np.ndarray, n_components: int = PCA_COMPONENTS) -> Projection:
    """The principal axes of the training sentence embeddings (scikit-learn's exact full-SVD PCA)."""
    from sklearn.decomposition import PCA

    x = np.asarray(sentences, dtype=np.float64)
    if not 1 <= n_components <= min(x.shape):
        raise ValueError(f"n_components must be in 1..{min(x.shape)} for {x.shape[0]} embeddings of {x.shape[1]} dimensions, "
                         f"got {n_components}")
    pca = PCA(n_components=n_components, svd_solver="full").fit(x)
    return Projection(pca.mean_.copy(), pca.components_.copy())


def text_activations(layers: np.ndarray, sentences: np.ndarray, projection: Projection) -> dict[str, np.ndarray]:
    """{layer name: (N, neurons)} from the encodings' token-averaged block outputs `layers` (N, L, d) and
    sentence embeddings (N, d)."""
    layers = np.asarray(layers, dtype=np.float64)
    if layers.ndim != 3 or len(layers) != len(sentences):
        raise ValueError(f"expected (N, L, d) block outputs for {len(sentences)} texts, got shape {layers.shape}")
    acts = {name: layers[:, i] for i, name in enumerate(coverage_layers(layers.shape[1]))}
    acts[SURPRISE_LAYER] = projection(sentences)
    return acts


def text_settings(adequacy: dict, n_layers: int):
    """The `AdequacySettings` of the text model from a `benchmark.adequacy` node."""
    from pipeline.adequacy.settings import AdequacySettings

    return AdequacySettings(coverage_layers=coverage_layers(n_layers), surprise_layers=(SURPRISE_LAYER,),
                            nac_threshold=float(adequacy["nac_threshold"]), kmnc_sections=int(adequacy["kmnc_sections"]),
                            tknc_k=int(adequacy["tknc_k"]))


def encoder_views(encodings: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """(layers (N, L, d), sentences (N, d)) of a list of `Encoding`s."""
    return np.stack([e.layers for e in encodings]), np.stack([e.sentence for e in encodings])
