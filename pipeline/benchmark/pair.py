"""Two models on the same perturbed inputs: the benchmark of a comparison.

The pair's benchmark is the new model B's, with one change: its prediction on a set of inputs is both models'
answers, a column each (the baseline A's, then B's), so a configuration's T_θ(x) is composed once and both models
see the same bytes. Its task metric is `paired_accuracy`, ψ = ψ_B − ψ_A, so that the benchmark's degradation is
δ(θ) = ψ(D) − ψ(T_θ) = δ_B(θ) − δ_A(θ) =: Δ(θ) (TestNav Eq. 1 with the clamp at 0 left to the search's objective),
a mean over the inputs of B's loss minus A's: the paired quantity the search, the racing and the bootstrap read
(`pipeline.front.per_input.input_scores`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.benchmark.problem import Benchmark, Predict, accuracy
from pipeline.front.per_input import input_scores

Baseline = Callable[[np.ndarray], Predict]  # the labels -> the baseline's checked predictions (built in each worker)


def paired_accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    """ψ of a pair: B's accuracy minus A's, from predictions (n, 2) whose columns are A's and B's answers."""
    return float(np.mean(input_scores(predictions, labels, "paired_accuracy")))


@dataclass(frozen=True)
class PairPredict:
    """Both models' answers on the same inputs, (n, 2): the baseline A's, then B's."""

    baseline: Predict
    model: Predict

    def __call__(self, inputs: Any) -> np.ndarray:
        return np.column_stack([np.asarray(self.baseline(inputs)), np.asarray(self.model(inputs))])


def pair_benchmark(bench: Benchmark, baseline: Predict) -> Benchmark:
    """The benchmark `bench` of model B, answering for the baseline A too (module docstring)."""
    if bench.task_metric is not accuracy:
        raise ValueError(f"a comparison needs the task metric accuracy (a mean of per-input correctness); benchmark "
                         f"{bench.name!r} has {bench.task_metric.__name__}")
    return replace(bench, predict=PairPredict(baseline, bench.predict), task_metric=paired_accuracy, observe=None, per_input=True)


def build_pair(factory: Callable[[], Benchmark], baseline: Baseline) -> Benchmark:
    """The pair's benchmark in a worker: B's benchmark from `factory`, the baseline's predictions from `baseline`."""
    bench = factory()
    return pair_benchmark(bench, baseline(bench.labels))


def object_baseline(model: Any, labels: np.ndarray) -> Predict:
    """The checked predictions of a baseline given as an object (a Classifier or Predictor)."""
    from pipeline.benchmark.conformance import checked_predictions

    cls = type(model)
    return checked_predictions(model, labels, "baseline", f"{cls.__module__}.{cls.__qualname__}")


def spec_baseline(spec: Mapping[str, Any], data_dir: str | Path, labels: np.ndarray) -> Predict:
    """The checked predictions of a baseline given as a model config (`baseline` in conf/, a `conf/model/` file)
    over its prepared folder."""
    from pipeline.benchmark.build import build_model
    from pipeline.benchmark.conformance import checked_predictions

    return checked_predictions(build_model(spec, data_dir), labels, "baseline._target_", spec["model"]["_target_"])
