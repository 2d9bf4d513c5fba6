"""DeepGini (Feng et al. 2020): ξ(x) = 1 − Σ_i p_i(x)², the Gini impurity of the model's class
probabilities; 0 for a one-hot (certain) prediction, 1 − 1/C for a uniform one over C classes. The
value of a test set is the mean over its inputs (module `pipeline.adequacy` explains the choice)."""
from __future__ import annotations

import numpy as np


def softmax(logits: np.ndarray) -> np.ndarray:
    """Class probabilities from (n_inputs, n_classes) logits, in float64 (max-shifted for stability)."""
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] == 0:
        raise ValueError(f"expected (n_inputs, n_classes) logits, got shape {z.shape}")
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def check_probabilities(probabilities: np.ndarray, atol: float = 1e-4) -> np.ndarray:
    """(n_inputs, n_classes) float64 rows of non-negative numbers summing to 1 (within `atol`), or a ValueError."""
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] == 0:
        raise ValueError(f"expected (n_inputs, n_classes) probabilities, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any() or not np.allclose(p.sum(axis=1), 1.0, rtol=0.0, atol=atol):
        raise ValueError("probabilities must be finite, non-negative and sum to 1 per input")
    return p


def gini_scores(probabilities: np.ndarray) -> np.ndarray:
    """Per-input DeepGini impurity 1 − Σ p_i², shape (n_inputs,)."""
    p = check_probabilities(probabilities)
    return 1.0 - np.einsum("ij,ij->i", p, p)


def deepgini(probabilities: np.ndarray) -> float:
    """DeepGini of a test set: the mean per-input impurity (ValueError on an empty set)."""
    scores = gini_scores(probabilities)
    if scores.size == 0:
        raise ValueError("DeepGini of an empty test set is undefined")
    return float(scores.mean())
