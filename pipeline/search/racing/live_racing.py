"""Racing over inputs on a live model: the oracle of a user's run, which evaluates each
configuration in slices of its test inputs (`pipeline.search.racing.racing`) and stops it when a completed one dominates
it with confidence.

`LiveRacingOracle` hands every slice of a round to `evaluate_slices([(θ, rows, fidelity), …])` at once (a
`pipeline.benchmark.live_evaluation.LiveEvaluator`'s `slices`: parallel over its workers, every slice kept in its resume
store, so a killed run resumes without evaluating an input twice). A configuration's first slice also computes its
fidelity on all n inputs, which needs no model. The outcome of an input is its score (`pipeline.front.per_input.input_scores`:
whether the model's answer is right, or for a comparison of two models B's correctness minus A's), mapped onto [0, 1]
for the race, so racing needs a task metric that is a mean over the inputs; δ of a completed configuration is
max(ψ(D) − ψ(T_θ), 0) (TestNav Eq. 1) from its answers on all n inputs, in the order of D.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline.front.per_input import INPUT_SCORES, input_scores
from pipeline.search.oracle import RacedOracle, Settled, timing
from pipeline.search.racing.racing import FIRST, GROWTH, Race, Z
from pipeline.search.racing.unit_outcomes import UnitRecorder
from pipeline.front.space import Space

EvaluateSlices = Callable[[list[tuple[tuple[int, ...], list[int], bool]]], list[dict[str, Any]]]


class LiveRacingOracle(RacedOracle):
    """Racing over the inputs of a live benchmark for the fidelity `metric` (module docstring). `values` holds the
    benchmark's answer of every completed configuration (δ, ψ, every ρ, the per-input predictions), as a full
    evaluation would give it; `inputs` (a `UnitRecorder`, optional) records their per-input outcomes."""

    def __init__(self, evaluate_slices: EvaluateSlices, space: Space, labels: np.ndarray, clean_score: float, metric: str,
                 units: UnitRecorder | None = None, seed: int = 0, first: int = FIRST, growth: float = GROWTH, z: float = Z,
                 task_metric: str = "accuracy") -> None:
        super().__init__()
        if task_metric not in INPUT_SCORES:
            raise ValueError(f"racing needs a task metric that is a mean over the inputs ({', '.join(INPUT_SCORES)}), got {task_metric!r}")
        self.evaluate_slices, self.space, self.metric, self.task_metric = evaluate_slices, space, metric, task_metric
        self.labels, self.clean_score = np.asarray(labels), float(clean_score)
        self.inputs = units
        self._low, high = INPUT_SCORES[task_metric]
        self.race = Race(len(self.labels), high - self._low, seed, first, growth, z)
        self.values: dict[tuple[int, ...], dict[str, Any]] = {}
        self._fidelity: dict[int, dict[str, Any]] = {}
        self._predictions: dict[int, list[np.ndarray]] = {}

    @property
    def n_inputs(self) -> int:
        return len(self.labels)

    def _outcomes(self, asks: list[tuple[int, np.ndarray]]) -> list[np.ndarray]:
        """The outcome (right or wrong) of each asked configuration on its rows; a first slice brings its fidelity."""
        requests = [(self.space.theta(i), rows.tolist(), i not in self._fidelity) for i, rows in asks]
        out = []
        for (i, rows), answer in zip(asks, self.evaluate_slices(requests)):
            if i not in self._fidelity:
                self._fidelity[i] = {k: v for k, v in answer.items() if k.startswith("rho_")}
            self.timings[i] = self.timings.get(i, np.zeros(3)) + timing(answer)
            predictions = np.asarray(answer["prediction"])
            if len(predictions) != len(rows):
                raise ValueError(f"the benchmark answered {len(predictions)} predictions for {len(rows)} inputs")
            self._predictions.setdefault(i, []).append(predictions)
            out.append((input_scores(predictions, self.labels[rows], self.task_metric) - self._low) / self.race.scale)
        return out

    def _rho(self, index: int) -> float:
        key = f"rho_{self.metric}"
        if key not in self._fidelity[index]:
            raise ValueError(f"the benchmark returned {sorted(self._fidelity[index])}; racing on {self.metric!r} needs {key!r}")
        return float(self._fidelity[index][key])

    def _finish(self, index: int, outcomes: np.ndarray) -> tuple[float, float]:
        """Record a completed configuration from its race's `outcomes` (in the input order): its answer on all n
        inputs in D's order, δ, and the rivals and units it joins."""
        theta = self.space.theta(index)
        predictions = np.concatenate(self._predictions.pop(index))
        answers = np.empty_like(predictions)
        answers[self.race.order] = predictions
        psi = float(np.mean(input_scores(answers, self.labels, self.task_metric)))
        delta = max(self.clean_score - psi, 0.0)
        values = {"psi": psi, "delta": delta, **self._fidelity[index], "prediction": answers.tolist()}
        self.values[theta] = values
        if self.inputs is not None:
            self.inputs.record(theta, values)
        objectives = (delta, self._rho(index))
        self.race.complete(objectives, outcomes)
        return objectives

    def _race(self, indices: list[int]) -> list[Settled]:
        out = []
        for i, r in zip(indices, self.race.run(indices, self._rho, self._outcomes)):
            if r.complete:
                out.append(Settled(self._finish(i, r.outcomes), r.inputs, True))
            else:
                self._predictions.pop(i, None)
                out.append(Settled((max(r.delta, 0.0), self._rho(i)), r.inputs, False, r.variance))  # δ = max(ψ(D) − ψ, 0)
        return out
