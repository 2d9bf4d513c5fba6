"""Surprise adequacy (Kim, Feldt and Yoo 2019): how unlike the training data an input looks to the
model, measured on activation traces (the outputs of chosen layers, concatenated) and conditioned on
the class c the model predicts for the input.

- LSA(x) = −log f̂_c(α(x)), with f̂_c a Gaussian KDE (scipy's `gaussian_kde`, Scott's bandwidth) of the
  training traces of class c. Neurons whose variance within some class is below a threshold are dropped
  first, for every class alike (Kim et al.'s rule, threshold 1e-5): a constant neuron (a dead ReLU, a
  saturated unit) makes the KDE covariance singular. Classes with one training trace are left out of
  that rule (a single trace has zero variance everywhere and would drop every neuron). The log density
  comes from `logpdf` (a log-sum-exp), so a far-away input gets a large finite LSA, not an overflow.
- DSA(x) = ‖α(x) − α(x_a)‖ / ‖α(x_a) − α(x_b)‖, with x_a the nearest training trace of class c and x_b
  the training trace of another class nearest to x_a (Euclidean). Ties for x_a go to the first
  training trace in profile order. DSA is inf when x_a coincides with a trace of another class.

A class predicted on the test set with no training trace of its own (or, for DSA, no trace of any
other class; for LSA, too few traces for a non-singular KDE) raises a ValueError naming the class:
surprise is undefined there rather than silently skipped. The value of a test set is the mean over its
inputs (module `pipeline.adequacy` explains the choice). Nothing here is random.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from scipy.spatial.distance import cdist
from scipy.stats import gaussian_kde

from pipeline.adequacy.profile import ActivationProfile, check_activations

_CHUNK = 1024  # test traces per distance block: bounds memory at _CHUNK × n_train doubles


def _check(traces: np.ndarray, predictions: np.ndarray, train_traces: np.ndarray,
           train_classes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x, pred = np.asarray(traces, dtype=np.float64), np.asarray(predictions)
    t, cls = np.asarray(train_traces, dtype=np.float64), np.asarray(train_classes)
    if x.ndim != 2 or t.ndim != 2 or x.shape[1] != t.shape[1] or x.shape[1] == 0:
        raise ValueError(f"traces {x.shape} and training traces {t.shape} must be 2-D with the same neurons")
    if pred.shape != (len(x),) or not np.issubdtype(pred.dtype, np.integer):
        raise ValueError(f"predictions must be {len(x)} integer classes, got {pred.dtype} {pred.shape}")
    if cls.shape != (len(t),) or not np.issubdtype(cls.dtype, np.integer):
        raise ValueError(f"training classes must be {len(t)} integers, got {cls.dtype} {cls.shape}")
    if not (np.isfinite(x).all() and np.isfinite(t).all()):
        raise ValueError("traces must be finite")
    return x, pred, t, cls


def kept_neurons(train_traces: np.ndarray, train_classes: np.ndarray, variance_threshold: float) -> np.ndarray:
    """Boolean mask of the neurons LSA keeps: variance ≥ threshold within every class with ≥ 2 traces."""
    t, cls = np.asarray(train_traces, dtype=np.float64), np.asarray(train_classes)
    keep = np.ones(t.shape[1], dtype=bool)
    for c in np.unique(cls):
        rows = t[cls == c]
        if len(rows) >= 2:
            keep &= rows.var(axis=0) >= variance_threshold
    return keep


def lsa_scores(traces: np.ndarray, predictions: np.ndarray, train_traces: np.ndarray,
               train_classes: np.ndarray, variance_threshold: float = 1e-5) -> np.ndarray:
    """Per-input likelihood-based surprise adequacy −log f̂_c(α(x)), shape (n_inputs,)."""
    x, pred, t, cls = _check(traces, predictions, train_traces, train_classes)
    keep = kept_neurons(t, cls, variance_threshold)
    if not keep.any():
        raise ValueError(f"every neuron has a within-class training variance below {variance_threshold}: no trace left for LSA")
    out = np.empty(len(x))
    for c in np.unique(pred):
        rows = t[cls == c][:, keep]
        if len(rows) == 0:
            raise ValueError(f"LSA: no training trace of predicted class {c}")
        try:
            kde = gaussian_kde(rows.T)
        except (np.linalg.LinAlgError, ValueError) as e:
            raise ValueError(f"LSA: the KDE of class {c} ({len(rows)} traces, {int(keep.sum())} neurons) is singular; "
                             "profile more training inputs or raise the variance threshold") from e
        sel = pred == c
        out[sel] = -kde.logpdf(x[sel][:, keep].T)
    return out


def dsa_scores(traces: np.ndarray, predictions: np.ndarray, train_traces: np.ndarray,
               train_classes: np.ndarray) -> np.ndarray:
    """Per-input distance-based surprise adequacy dist_a / dist_b, shape (n_inputs,)."""
    x, pred, t, cls = _check(traces, predictions, train_traces, train_classes)
    out = np.empty(len(x))
    for c in np.unique(pred):
        same, other = t[cls == c], t[cls != c]
        if len(same) == 0 or len(other) == 0:
            raise ValueError(f"DSA: predicted class {c} needs training traces of its own and of another class "
                             f"(has {len(same)} and {len(other)})")
        rows = np.flatnonzero(pred == c)
        nearest, dist_a = np.empty(len(rows), dtype=np.int64), np.empty(len(rows))
        for s in range(0, len(rows), _CHUNK):
            d = cdist(x[rows[s : s + _CHUNK]], same)
            j = d.argmin(axis=1)  # the first of equally near traces
            nearest[s : s + _CHUNK], dist_a[s : s + _CHUNK] = j, d[np.arange(len(j)), j]
        anchors, back = np.unique(nearest, return_inverse=True)
        dist_b = np.concatenate([cdist(same[anchors[s : s + _CHUNK]], other).min(axis=1)
                                 for s in range(0, len(anchors), _CHUNK)])
        with np.errstate(divide="ignore", invalid="ignore"):
            out[rows] = dist_a / dist_b[back]
    return out


def _set_mean(scores: np.ndarray, name: str) -> float:
    if scores.size == 0:
        raise ValueError(f"{name} of an empty test set is undefined")
    return float(scores.mean())


def lsa(activations: Mapping[str, np.ndarray], predictions: np.ndarray, profile: ActivationProfile,
        layers: Sequence[str], variance_threshold: float = 1e-5) -> float:
    """LSA of a test set: the mean per-input LSA over the traces of `layers` (concatenated in order)."""
    traces = np.concatenate(list(check_activations(activations, layers).values()), axis=1)
    return _set_mean(lsa_scores(traces, predictions, profile.trace(layers), profile.classes, variance_threshold), "LSA")


def dsa(activations: Mapping[str, np.ndarray], predictions: np.ndarray, profile: ActivationProfile,
        layers: Sequence[str]) -> float:
    """DSA of a test set: the mean per-input DSA over the traces of `layers` (concatenated in order)."""
    traces = np.concatenate(list(check_activations(activations, layers).values()), axis=1)
    return _set_mean(dsa_scores(traces, predictions, profile.trace(layers), profile.classes), "DSA")
