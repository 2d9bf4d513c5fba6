"""A benchmark binds a clean test set D, a model, a perturbation space Θ, a task metric ψ and fidelity
metrics φ, and evaluates configurations: δ(θ) = max(ψ(D) − ψ(T_θ), 0) (TestNav Eq. 1) and
ρ(θ) = φ(T_θ, D) (Eq. 2) for every fidelity metric.

It is modality-agnostic: inputs are whatever the perturbations and the model accept (an image stack, a
list of strings, a list of prompts); a modality is a set of registry entries (perturbations, task
metrics, fidelity metrics, models) and a config, not a new class.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pipeline.plugins.catalog import TASK_METRICS
from pipeline.perturb.compose import PrefixCache, compose
from pipeline.perturb.registry import Perturbation
from pipeline.front.space import Space

Predict = Callable[[Any], np.ndarray]
Observe = Callable[[Any], tuple[np.ndarray, dict[str, float]]]  # inputs -> (predictions, adequacy metrics), one pass
TaskMetric = Callable[[np.ndarray, np.ndarray], float]
Fidelity = Callable[[Any], float]  # perturbed inputs -> φ(T_θ, D), higher = closer to D
PREFETCH_INPUTS = 1024  # inputs of the configurations `evaluate_many` hands a fidelity metric's `prefetch` at once


def accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    """ψ for classification: the fraction of correct predictions."""
    return float(np.mean(np.asarray(predictions) == np.asarray(labels)))


def get_task_metric(name: str) -> TaskMetric:
    """ψ called `name` in the catalog, or a plug-in's import path `module:function`."""
    return TASK_METRICS.get(name)


def _mean_of_per_input(phi: Fidelity) -> bool:
    """φ is exactly the mean of its per-input values (`φ.per_input`, `φ.aggregate == "mean"`: SSIM, BERT-F1)."""
    return callable(getattr(phi, "per_input", None)) and getattr(phi, "aggregate", None) == "mean"


@dataclass
class Benchmark:
    """`evaluate(θ)` → {'psi', 'delta', 'rho_<metric>' …, 'seconds_perturb', 'seconds_infer', 'seconds_fidelity'};
    with `observe`, also 'adequacy_<metric>' for each input-level adequacy metric of TestNav §4.4, from the
    forward pass that gives the predictions (no second inference)."""

    name: str
    space: Space
    perturbations: Sequence[Perturbation]
    clean: Any
    labels: np.ndarray
    predict: Predict
    task_metric: TaskMetric
    fidelity: dict[str, Fidelity]
    seed: int = 0
    observe: Observe | None = None
    # with `per_input`, `score` also returns what the model answered on each input (`prediction`: the class, or for
    # code whether the completion passes) and each per-input fidelity (`rho_<metric>_inputs`), for the paired
    # bootstrap of `pipeline.front.membership`
    per_input: bool = False
    clean_score: float = field(init=False)

    def __post_init__(self) -> None:
        if len(self.labels) == 0:
            raise ValueError(f"benchmark {self.name!r} has an empty clean test set")
        if [p.name for p in self.perturbations] != list(self.space.names):
            raise ValueError(f"perturbations {[p.name for p in self.perturbations]} do not match space {self.space.names}")
        for p in self.perturbations:
            if p.max_level < self.space.levels - 1:
                raise ValueError(f"perturbation {p.name!r} has levels 0..{p.max_level}; the space asks for 0..{self.space.levels - 1}")
        self.clean_score = self.task_metric(self.predict(self.clean), self.labels)

    def score(self, perturbed: Any) -> dict[str, Any]:
        """ψ, δ (Eq. 1) and ρ per fidelity metric (Eq. 2) of one perturbed set, with timings (and, with
        `per_input`, the per-input lists)."""
        t0 = time.perf_counter()
        predictions, adequacy = self.observe(perturbed) if self.observe is not None else (self.predict(perturbed), {})
        psi = self.task_metric(predictions, self.labels)
        t1 = time.perf_counter()
        out = {"psi": psi, "delta": max(self.clean_score - psi, 0.0), "seconds_infer": t1 - t0}
        out.update({f"adequacy_{name}": float(value) for name, value in adequacy.items()})
        out.update(self._fidelity(perturbed, self.per_input))
        out["seconds_fidelity"] = time.perf_counter() - t1
        if self.per_input:
            out["prediction"] = np.asarray(predictions).tolist()
        return out

    def _fidelity(self, perturbed: Any, per_input: bool) -> dict[str, Any]:
        """ρ = φ(T_θ, D) of every fidelity metric (Eq. 2); with `per_input`, also the per-input values of a φ that is
        their mean (`rho_<metric>_inputs`), from the same pass."""
        out: dict[str, Any] = {}
        for metric, phi in self.fidelity.items():
            if per_input and _mean_of_per_input(phi):  # one pass: φ is the mean of the values kept
                values = np.asarray(phi.per_input(perturbed), dtype=float)
                out[f"rho_{metric}"], out[f"rho_{metric}_inputs"] = float(values.mean()), values.tolist()
            else:
                out[f"rho_{metric}"] = float(phi(perturbed))
        return out

    def evaluate_rows(self, theta: Sequence[int], rows: Sequence[int], fidelity: bool = False) -> dict[str, Any]:
        """Racing's unit of work (`pipeline.search.racing.racing`): the model's answer on the inputs `rows` of T_θ
        only (`prediction`, one per row), and with `fidelity` every ρ on all n inputs with its per-input values
        (fidelity needs no model), with timings. With `fidelity` T_θ is composed on all n inputs, else on `rows` only,
        each perturbed as in the full set (its randomness is seeded by its index in D, `pipeline.perturb.compose`)."""
        theta = self.space.validate(theta)
        rows = [int(r) for r in rows]
        if rows and (min(rows) < 0 or max(rows) >= len(self.labels)):
            raise ValueError(f"rows must index the {len(self.labels)} inputs, got {min(rows)}..{max(rows)}")
        t0 = time.perf_counter()
        if fidelity:
            perturbed = compose(self.perturbations, self.clean, theta, self.seed)
            subset = perturbed[rows] if isinstance(perturbed, np.ndarray) else [perturbed[r] for r in rows]
        else:
            clean = self.clean[rows] if isinstance(self.clean, np.ndarray) else [self.clean[r] for r in rows]
            subset = compose(self.perturbations, clean, theta, self.seed, rows)
        t1 = time.perf_counter()
        out: dict[str, Any] = {"prediction": np.asarray(self.predict(subset)).tolist() if rows else []}
        t2 = time.perf_counter()
        if fidelity:
            out.update(self._fidelity(perturbed, True))
        out.update(seconds_perturb=t1 - t0, seconds_infer=t2 - t1, seconds_fidelity=time.perf_counter() - t2)
        return out

    def evaluate(self, theta: Sequence[int]) -> dict[str, Any]:
        theta = self.space.validate(theta)
        t0 = time.perf_counter()
        perturbed = compose(self.perturbations, self.clean, theta, self.seed)
        out = self.score(perturbed)
        out["seconds_perturb"] = time.perf_counter() - t0 - out["seconds_infer"] - out["seconds_fidelity"]
        return out

    def evaluate_many(self, thetas: Sequence[Sequence[int]], cache: PrefixCache | None = None, source: Any = None
                      ) -> Iterator[tuple[tuple[int, ...], dict[str, float]]]:
        """Evaluate configurations in lexicographic order, reusing perturbed prefixes through `cache`
        (a new PrefixCache by default; pass one to read its application count). `source`, when given,
        supplies the perturbed sets instead: any object whose `get(θ)` returns T_θ of this benchmark's
        clean set, perturbations and seed (a `pipeline.perturb.materialize.PerturbationStore`). A fidelity
        metric with a `prefetch(sets)` method (BERT-F1) is handed the perturbed sets of about `PREFETCH_INPUTS`
        inputs at a time before they are scored, and the prefetch time is shared among them in
        `seconds_fidelity`. Values are identical to `evaluate` one by one."""
        source = source if source is not None else cache or PrefixCache(self.perturbations, self.clean, self.seed)
        thetas = sorted(self.space.validate(t) for t in thetas)
        prefetch = [phi.prefetch for phi in self.fidelity.values() if callable(getattr(phi, "prefetch", None))]
        # a metric that can prefetch (BERT-F1) encodes about PREFETCH_INPUTS texts at once: see its `prefetch`
        step = max(1, PREFETCH_INPUTS // len(self.labels)) if prefetch else 1
        for start in range(0, len(thetas), step):
            group = thetas[start : start + step]
            t0 = time.perf_counter()
            sets = [source.get(theta) for theta in group]
            t1 = time.perf_counter()
            for warm in prefetch:
                warm(sets)
            t2 = time.perf_counter()
            for theta, perturbed in zip(group, sets):
                out = self.score(perturbed)
                out["seconds_perturb"] = (t1 - t0) / len(group)
                out["seconds_fidelity"] += (t2 - t1) / len(group)
                yield theta, out
