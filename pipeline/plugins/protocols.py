"""What a user brings: one small `typing.Protocol` per kind of plug-in (docs/plugins.md).

A config node names its implementation with Hydra's `_target_` and is built with `hydra.utils.instantiate`
(`pipeline.benchmark.plugin_code.build`); the built-ins take the same path. What an implementation receives:

* its config keys as keyword arguments (everything in the node but `_target_`, `name` and `kind`);
* any of the run-time arguments `data_dir` (the benchmark's prepared folder), `device` (cpu, cuda,
  cuda:<n>) and `batch_size` that its constructor names as parameters (the others are not passed).

Inputs by modality, as a model, a perturbation and a fidelity metric receive them:

* vision: a `numpy.ndarray` of shape (N, H, W, 3), dtype uint8, RGB values 0..255;
* text: a `list[str]` (or, for a sentence-pair task, a `list[tuple[str, str]]`);
* code: a `list[str]` of prompts (a code model answers 1 = the completion passes the problem's tests).

Labels are a `numpy.ndarray` of int64 class indices (code: the problem index of each prompt).

What a model returns is checked on the clean test set before any configuration is evaluated, and what a
perturbation needs of the inputs (its optional `inputs` attribute, an `ImageInputs`) is checked on the clean
test set when the benchmark is built (`pipeline.benchmark.conformance`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class DataSet(Protocol):
    """The clean test set D of a benchmark (TestNav §3: the inputs every T_θ perturbs)."""

    def test_set(self) -> tuple[Any, np.ndarray]:
        """(the clean test inputs D, their labels), in a fixed order."""


@runtime_checkable
class Classifier(Protocol):
    """A model under test that scores classes: ψ compares `predict_proba(x).argmax(1)` with the labels."""

    def predict_proba(self, inputs: Any) -> np.ndarray:
        """Class probabilities, shape (len(inputs), classes)."""


@runtime_checkable
class Predictor(Protocol):
    """A model under test whose outputs ψ compares with the labels directly (e.g. pass or fail per prompt)."""

    def predict(self, inputs: Any) -> np.ndarray:
        """One prediction per input, shape (len(inputs),)."""


@dataclass(frozen=True)
class ImageInputs:
    """What a vision perturbation needs of each image of the (N, H, W, C) stack: height and width of at least
    `min_side` pixels, `channels` channels and dtype `dtype` (None: any). A perturbation declares it as its
    optional attribute `inputs` (the ImageNet-C corruptions: 32 pixels, 3 channels, uint8); the clean test
    set is checked against it before any work, and `benchmark.adapt_inputs` may pad or resize images below
    `min_side` (`pipeline.benchmark.conformance`)."""

    min_side: int = 1
    channels: int | None = 3
    dtype: str | None = "uint8"


@runtime_checkable
class Perturbation(Protocol):
    """A perturbation type T_i of the space Θ: levels 0..max_level, level 0 the identity; the randomness of
    an application depends only on `seed` (docs/reproducibility.md). Optionally `inputs: ImageInputs`, what it
    needs of the images (not part of the runtime check: a family without it takes any input).

    In `benchmark.perturbations` the config string is the family's key (`my_pkg.blur:Blur` whatever
    `Blur.name` says)."""

    name: str
    modality: str
    max_level: int

    def apply(self, x: Any, level: int, seed: int) -> Any:
        """T_i at `level` applied to the inputs `x`, with RNG `numpy.random.default_rng(seed)`."""


@runtime_checkable
class FidelityMetric(Protocol):
    """φ (TestNav Eq. 2), built on the clean inputs D: higher = closer to D.

    Optional, per input (not part of the runtime check): an attribute `aggregate` that says how φ
    relates to the inputs, and with it `per_input(perturbed) -> np.ndarray`, one finite value per scored
    input (all n unless the metric has a `scored` index of input positions):
    * "mean": φ is the mean of `per_input` (SSIM, BERT-F1);
    * "statistics": φ is `from_statistics(total)` of the sum of `per_input_statistics(perturbed)`, an (n, k)
      array, so a resample with input multiplicities w scores `from_statistics(w @ statistics)` (chrF's
      n-gram counts); `per_input` is then for display;
    * "set", or no `aggregate`: a set statistic (KID) with no per-input value, held fixed when inputs are
      resampled."""

    def __call__(self, perturbed: Any) -> float:
        """φ(T_θ(D), D)."""


@runtime_checkable
class TaskMetric(Protocol):
    """ψ: the model's task score of a set of predictions (TestNav Eq. 1 takes δ = max(ψ(D) − ψ(T_θ), 0))."""

    def __call__(self, predictions: np.ndarray, labels: np.ndarray) -> float:
        """ψ of `predictions` against `labels`."""


@runtime_checkable
class SearchMethod(Protocol):
    """A budgeted search over Θ that sees only an oracle (θ -> (δ, ρ)); `pipeline.search.methods.base.Method` is the
    base every built-in extends."""

    def run(self, oracle: Any, space: Any, budget: int, seed: int) -> Any:
        """The trace of a run with proposal budget `budget` and RNG seed `seed`."""


@runtime_checkable
class FuzzAdapter(Protocol):
    """A model under structural fuzzing ("Adversarial Robustness and the Model Robustness Index", chapter 9):
    `evaluate_fn(params) -> (error, per_target_errors)` over the dimensions `dim_names`, a dimension switched off
    at `inactive_value`. Optional, with their defaults (`pipeline.fuzz.adapters.PLUGIN_OPTIONAL`; not part of the
    runtime check): `evaluate_batch_fn`, `candidate_values`, `operating_point`, `target_names`, `error_name`.
    `pipeline.fuzz.adapters.Adapter` is the record every built-in returns."""

    dim_names: tuple[str, ...]
    inactive_value: float

    def evaluate_fn(self, params: np.ndarray) -> tuple[float, dict[str, float]]:
        """The model's error and its per-target errors at `params`."""
