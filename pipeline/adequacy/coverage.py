"""Structural coverage criteria over a test set: NAC (DeepXplore, Pei et al. 2017) and SNAC, KMNC,
TKNC (DeepGauge, Ma et al. 2018).

Inputs are `{layer: (n_inputs, n_neurons) activations}` (conv feature maps already reduced to one value
per channel, `hooks.capture`). Each criterion is set-level by nature: a neuron (or a neuron's section)
is covered when *some* input of the set covers it, and the value is the covered fraction of all neurons
(or sections) pooled over the layers, not an average of per-layer fractions. Adding inputs can only
cover more, so every value is monotone in the set; an empty set covers nothing (0.0).

The `*_covered` functions return the per-layer boolean tables (what is covered), so callers can merge
sets with a logical or; the plain-named functions return the fraction.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from pipeline.adequacy.profile import ActivationProfile, check_activations

Covered = dict[str, np.ndarray]


def fraction(covered: Mapping[str, np.ndarray], eligible: Mapping[str, np.ndarray] | None = None) -> float:
    """Covered items / eligible items, pooled over layers (every item is eligible when `eligible` is None)."""
    hit = sum(int(np.count_nonzero(c)) for c in covered.values())
    total = (sum(c.size for c in covered.values()) if eligible is None
             else sum(int(np.count_nonzero(e)) for e in eligible.values()))
    return hit / total if total else 0.0


def nac_covered(activations: Mapping[str, np.ndarray], threshold: float) -> Covered:
    """NAC (DeepXplore): each input's outputs of a layer are min-max scaled over that layer's neurons,
    (a - min) / (max - min); a neuron is covered when its scaled output exceeds `threshold` on some input.
    An input whose layer outputs are all equal scales to 0 there and activates none of them."""
    out: Covered = {}
    for layer, a in check_activations(activations).items():
        lo, hi = a.min(axis=1, keepdims=True), a.max(axis=1, keepdims=True)
        span = hi - lo
        scaled = np.divide(a - lo, span, out=np.zeros_like(a), where=span > 0)
        out[layer] = (scaled > threshold).any(axis=0)
    return out


def nac(activations: Mapping[str, np.ndarray], threshold: float) -> float:
    """Neuron activation coverage: fraction of neurons activated above `threshold` by some input."""
    return fraction(nac_covered(activations, threshold))


def snac_covered(activations: Mapping[str, np.ndarray], profile: ActivationProfile) -> Covered:
    """SNAC (DeepGauge): a neuron is covered when some input drives it strictly above its training maximum."""
    out: Covered = {}
    for layer, a in check_activations(activations).items():
        _, high = profile.bounds(layer, a.shape[1])
        out[layer] = (a > high).any(axis=0)
    return out


def snac(activations: Mapping[str, np.ndarray], profile: ActivationProfile) -> float:
    """Strong neuron activation coverage: fraction of neurons pushed above their training maximum."""
    return fraction(snac_covered(activations, profile))


def kmnc_covered(activations: Mapping[str, np.ndarray], profile: ActivationProfile, sections: int) -> Covered:
    """KMNC (DeepGauge): each neuron's training range [low, high] is cut into `sections` equal sections
    [low + i·w, low + (i+1)·w), the last one closed at high (w = (high - low) / sections; a value on a
    boundary belongs to the section that starts there, the boundaries computed as written). Returns
    (n_neurons, sections) tables; a value outside [low, high] covers no section (that is SNAC's and
    neuron boundary coverage's business). A neuron with low == high (constant on the training set, e.g.
    a dead ReLU) has no sections: its row stays False and `kmnc` leaves it out of the denominator."""
    if int(sections) != sections or sections < 1:
        raise ValueError(f"sections must be a positive integer, got {sections}")
    out: Covered = {}
    for layer, a in check_activations(activations).items():
        low, high = profile.bounds(layer, a.shape[1])
        span = high - low
        table = np.zeros((a.shape[1], sections), dtype=bool)
        inside = (a >= low) & (a <= high) & (span > 0)
        rows, cols = np.nonzero(inside)
        if rows.size:
            v, lo, width = a[rows, cols], low[cols], span[cols] / sections
            index = np.clip(np.floor((v - lo) / width), 0, sections - 1).astype(np.int64)
            # the division can round across a boundary: settle against the boundaries lo + i·width themselves
            index -= (index > 0) & (v < lo + index * width)
            index += (index < sections - 1) & (v >= lo + (index + 1) * width)
            table[cols, index] = True
        out[layer] = table
    return out


def kmnc(activations: Mapping[str, np.ndarray], profile: ActivationProfile, sections: int) -> float:
    """k-multisection neuron coverage: covered sections / (sections × neurons with a non-empty training range)."""
    covered = kmnc_covered(activations, profile, sections)
    eligible = {layer: np.repeat((profile.high[layer] > profile.low[layer])[:, None], sections, axis=1) for layer in covered}
    return fraction(covered, eligible)


def tknc_covered(activations: Mapping[str, np.ndarray], k: int) -> Covered:
    """TKNC (DeepGauge): a neuron is covered when it is among the k largest outputs of its layer on some
    input. Ties go to the lower neuron index (a stable sort), so exactly min(k, n_neurons) neurons per
    layer and input are top-k."""
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    out: Covered = {}
    for layer, a in check_activations(activations).items():
        covered = np.zeros(a.shape[1], dtype=bool)
        if a.shape[0]:
            top = np.argsort(-a, axis=1, kind="stable")[:, : int(k)]
            covered[np.unique(top)] = True
        out[layer] = covered
    return out


def tknc(activations: Mapping[str, np.ndarray], k: int) -> float:
    """Top-k neuron coverage: fraction of neurons that are top-k in their layer for some input."""
    return fraction(tknc_covered(activations, k))
