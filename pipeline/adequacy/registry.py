"""ADEQUACY: the seven input-level metrics of TestNav §4.4 by name, behind one signature

    f(activations, probabilities, predictions, profile, settings) -> float

with `activations` {layer: (n_inputs, n_neurons)} from `hooks.capture`, `probabilities` (n_inputs,
n_classes), `predictions` (n_inputs,) integer classes, an `ActivationProfile` of the training set and
`AdequacySettings`. Each entry reads only what it needs; larger means more adequate / more surprising.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from pipeline.adequacy import coverage, gini, surprise
from pipeline.adequacy.profile import ActivationProfile
from pipeline.adequacy.settings import AdequacySettings
from pipeline.plugins.catalog import ADEQUACY

AdequacyMetric = Callable[[Mapping[str, np.ndarray], np.ndarray, np.ndarray, ActivationProfile, AdequacySettings], float]


def _layers(activations: Mapping[str, np.ndarray], names: Sequence[str]) -> dict[str, np.ndarray]:
    missing = [name for name in names if name not in activations]
    if missing:
        raise ValueError(f"activations lack layers {missing} (they have {list(activations)})")
    return {name: activations[name] for name in names}


def nac(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
        profile: ActivationProfile, settings: AdequacySettings) -> float:
    """NAC over the coverage layers, threshold `settings.nac_threshold` on per-input scaled outputs."""
    return coverage.nac(_layers(activations, settings.coverage_layers), settings.nac_threshold)


def snac(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
         profile: ActivationProfile, settings: AdequacySettings) -> float:
    """SNAC over the coverage layers against the profile's training maxima."""
    return coverage.snac(_layers(activations, settings.coverage_layers), profile)


def kmnc(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
         profile: ActivationProfile, settings: AdequacySettings) -> float:
    """KMNC over the coverage layers, `settings.kmnc_sections` sections of each training range."""
    return coverage.kmnc(_layers(activations, settings.coverage_layers), profile, settings.kmnc_sections)


def tknc(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
         profile: ActivationProfile, settings: AdequacySettings) -> float:
    """TKNC over the coverage layers, top `settings.tknc_k` neurons per layer and input."""
    return coverage.tknc(_layers(activations, settings.coverage_layers), settings.tknc_k)


def deepgini(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
             profile: ActivationProfile, settings: AdequacySettings) -> float:
    """Mean DeepGini impurity of the class probabilities."""
    return gini.deepgini(probabilities)


def lsa(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
        profile: ActivationProfile, settings: AdequacySettings) -> float:
    """Mean LSA over the surprise layers' traces, conditioned on the predicted classes."""
    return surprise.lsa(_layers(activations, settings.surprise_layers), predictions, profile,
                        settings.surprise_layers, settings.lsa_variance_threshold)


def dsa(activations: Mapping[str, np.ndarray], probabilities: np.ndarray, predictions: np.ndarray,
        profile: ActivationProfile, settings: AdequacySettings) -> float:
    """Mean DSA over the surprise layers' traces, conditioned on the predicted classes."""
    return surprise.dsa(_layers(activations, settings.surprise_layers), predictions, profile, settings.surprise_layers)




def adequacy_scores(names: Sequence[str], logits: np.ndarray, activations: Mapping[str, np.ndarray],
                    profile: ActivationProfile, settings: AdequacySettings) -> dict[str, float]:
    """{name: value} for the named metrics on one test set T_θ, from the logits and activations of one
    `hooks.capture` pass: probabilities are the float64 softmax of the logits, predictions their argmax."""
    metrics = {name: ADEQUACY.get(name) for name in names}
    probabilities = gini.softmax(logits)
    predictions = probabilities.argmax(axis=1)
    return {name: float(f(activations, probabilities, predictions, profile, settings)) for name, f in metrics.items()}
