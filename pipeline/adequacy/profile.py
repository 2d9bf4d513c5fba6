"""The training-set activation profile that the adequacy metrics compare a test set against.

Per layer and per neuron: the minimum and maximum output over the training inputs (the bounds of
DeepGauge's SNAC and KMNC), and, for the layers used by surprise adequacy, the training activation
traces with the class of each training input (Kim et al. 2019: LSA's per-class KDE, DSA's nearest
neighbours). The class is whatever the caller passes; Kim et al.'s reference implementation groups the
training traces by the model's *predicted* class on the training set, which is the recommended input.

A profile is built from arrays (`build_profile`), saved to and loaded from one `.npz` file; it is
immutable (its arrays are read-only copies).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

_FORMAT = 1


def check_activations(activations: Mapping[str, np.ndarray], layers: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """The named layers of `activations` as finite float64 (n_inputs, n_neurons) arrays with one common
    n_inputs, or a ValueError saying which layer breaks that."""
    names = list(activations) if layers is None else list(layers)
    if not names:
        raise ValueError("no layers given")
    out: dict[str, np.ndarray] = {}
    n_inputs: int | None = None
    for name in names:
        if name not in activations:
            raise ValueError(f"layer {name!r} is not among the activations ({', '.join(map(repr, activations))})")
        a = np.asarray(activations[name], dtype=np.float64)
        if a.ndim != 2 or a.shape[1] == 0:
            raise ValueError(f"layer {name!r}: expected (n_inputs, n_neurons) activations, got shape {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"layer {name!r} has non-finite activations")
        if n_inputs is None:
            n_inputs = a.shape[0]
        elif a.shape[0] != n_inputs:
            raise ValueError(f"layer {name!r} has {a.shape[0]} inputs, an earlier layer {n_inputs}")
        out[name] = a
    return out


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class ActivationProfile:
    """`low[layer]`, `high[layer]`: (n_neurons,) training minimum / maximum per neuron;
    `traces[layer]`: (n_train, n_neurons) training activations for the surprise-adequacy layers;
    `classes`: (n_train,) integer class of each training trace."""

    low: Mapping[str, np.ndarray]
    high: Mapping[str, np.ndarray]
    traces: Mapping[str, np.ndarray]
    classes: np.ndarray

    def __post_init__(self) -> None:
        if list(self.low) != list(self.high):
            raise ValueError(f"low and high name different layers: {list(self.low)} vs {list(self.high)}")
        for layer in self.low:
            lo, hi = self.low[layer], self.high[layer]
            if lo.ndim != 1 or lo.shape != hi.shape:
                raise ValueError(f"layer {layer!r}: low {lo.shape} and high {hi.shape} must be equal 1-D shapes")
            if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo <= hi).all()):
                raise ValueError(f"layer {layer!r}: bounds must be finite with low <= high")
        if self.classes.ndim != 1 or not np.issubdtype(self.classes.dtype, np.integer):
            raise ValueError(f"classes must be a 1-D integer array, got {self.classes.dtype} {self.classes.shape}")
        for layer, t in self.traces.items():
            if layer not in self.low:
                raise ValueError(f"trace layer {layer!r} has no bounds")
            if t.shape != (len(self.classes), len(self.low[layer])):
                raise ValueError(f"trace layer {layer!r} has shape {t.shape}, expected {(len(self.classes), len(self.low[layer]))}")

    @property
    def layers(self) -> list[str]:
        """Layers with per-neuron bounds."""
        return list(self.low)

    def bounds(self, layer: str, n_neurons: int) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) of `layer`, checked against the activations' neuron count."""
        if layer not in self.low:
            raise ValueError(f"the profile has no layer {layer!r} (it has {', '.join(map(repr, self.low))})")
        if len(self.low[layer]) != n_neurons:
            raise ValueError(f"layer {layer!r}: the profile has {len(self.low[layer])} neurons, the activations {n_neurons}")
        return self.low[layer], self.high[layer]

    def trace(self, layers: Sequence[str]) -> np.ndarray:
        """Training traces of `layers` concatenated along neurons, (n_train, Σ n_neurons)."""
        missing = [layer for layer in layers if layer not in self.traces]
        if missing or not layers:
            raise ValueError(f"the profile keeps no training traces for {missing or list(layers)} (it has {list(self.traces)})")
        return np.concatenate([self.traces[layer] for layer in layers], axis=1)

    def save(self, path: str | Path) -> None:
        """Write the profile to one `.npz` file (atomic: a temporary file renamed into place)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {
            "format": np.array(_FORMAT), "layers": np.array(self.layers, dtype=str),
            "trace_layers": np.array(list(self.traces), dtype=str), "classes": self.classes,
        }
        for i, layer in enumerate(self.layers):
            arrays[f"low_{i}"], arrays[f"high_{i}"] = self.low[layer], self.high[layer]
        for i, layer in enumerate(self.traces):
            arrays[f"trace_{i}"] = self.traces[layer]
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | Path) -> "ActivationProfile":
        """Read a profile written by `save`."""
        with np.load(Path(path), allow_pickle=False) as z:
            if int(z["format"]) != _FORMAT:
                raise ValueError(f"{path}: profile format {int(z['format'])}, this code reads {_FORMAT}")
            layers, trace_layers = [str(s) for s in z["layers"]], [str(s) for s in z["trace_layers"]]
            return cls(
                low={layer: _frozen(z[f"low_{i}"]) for i, layer in enumerate(layers)},
                high={layer: _frozen(z[f"high_{i}"]) for i, layer in enumerate(layers)},
                traces={layer: _frozen(z[f"trace_{i}"]) for i, layer in enumerate(trace_layers)},
                classes=_frozen(z["classes"]),
            )


def build_profile(activations: Mapping[str, np.ndarray], classes: np.ndarray,
                  trace_layers: Sequence[str] | None = None) -> ActivationProfile:
    """The profile of a training set: bounds for every layer of `activations`, traces kept for
    `trace_layers` (default: every layer). `classes`: one integer class per training input (Kim et al.
    use the model's predictions on the training set)."""
    acts = check_activations(activations)
    classes = np.asarray(classes)
    n_train = next(iter(acts.values())).shape[0]
    if n_train == 0:
        raise ValueError("the training activations are empty")
    if classes.shape != (n_train,) or not np.issubdtype(classes.dtype, np.integer):
        raise ValueError(f"classes must be {n_train} integers, got {classes.dtype} {classes.shape}")
    keep = list(acts) if trace_layers is None else list(trace_layers)
    for layer in keep:
        if layer not in acts:
            raise ValueError(f"trace layer {layer!r} is not among the activations ({', '.join(map(repr, acts))})")
    return ActivationProfile(
        low={layer: _frozen(a.min(axis=0)) for layer, a in acts.items()},
        high={layer: _frozen(a.max(axis=0)) for layer, a in acts.items()},
        traces={layer: _frozen(acts[layer]) for layer in keep},
        classes=_frozen(classes.astype(np.int64)),
    )
