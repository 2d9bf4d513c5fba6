"""Run-time conformance of plug-ins to their protocols (`pipeline.plugins.protocols`), checked on the clean test set
before any configuration is evaluated: what a model returns (`check_model_output`, on every call of
`checked_predictions`) and what the perturbations need of the inputs (`conform_inputs`, which adapts the
images where `benchmark.adapt_inputs` says how). Each refusal is one `ConfigError` naming the plug-in.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pipeline.config.benchmark import ADAPT_INPUTS
from pipeline.config.errors import ConfigError
from pipeline.plugins.protocols import ImageInputs, Perturbation

# |row sum − 1| allowed of predict_proba: a float32 softmax is within 1e-6 of 1 over 10^4 classes; a row further
# off than 1e-3 is not a probability distribution (logits, or a sigmoid per class)
PROBABILITY_TOLERANCE = 1e-3


def _an(word: str) -> str:
    return f"{'an' if word[0] in 'aeio' else 'a'} {word}"  # a uint8, an int64


def _described(array: np.ndarray) -> str:
    return f"shape {array.shape}" if array.dtype.kind in "biuf" else f"{_an(str(array.dtype))} array of shape {array.shape}"


def check_model_output(output: Any, n_inputs: int, labels: np.ndarray, key: str, value: Any, method: str) -> np.ndarray:
    """`output` of the model's `method` ('predict_proba' or 'predict') on `n_inputs` inputs, as an array, if it
    fits the protocol: probabilities of shape (n, classes), classes covering the labels, finite, non-negative,
    rows summing to 1 within `PROBABILITY_TOLERANCE` (`Classifier`); one prediction per input, shape (n,)
    (`Predictor`). Else a ConfigError(key, value, …) naming what it returned and what was expected: `key` and
    `value` name the plug-in (`model._target_` and its import path)."""
    try:
        array = np.asarray(output)
    except (ValueError, TypeError):
        array = np.asarray(None)
    if method == "predict":
        if array.shape != (n_inputs,):
            raise ConfigError(key, value, f"a model whose predict(inputs) returns one prediction per input, shape ({n_inputs},) "
                              f"for {n_inputs} inputs (pipeline.plugins.protocols.Predictor); it returned {_described(array)}")
        return array
    classes = int(np.max(labels)) + 1 if len(labels) else 1
    wanted = (f"a model whose predict_proba(inputs) returns class probabilities, shape ({n_inputs}, classes) for {n_inputs} "
              f"inputs with classes ≥ {classes} (the labels go up to {classes - 1}), finite, ≥ 0, each row summing to 1 ± "
              f"{PROBABILITY_TOLERANCE:g} (pipeline.plugins.protocols.Classifier); it returned ")
    if array.ndim != 2 or array.shape[0] != n_inputs or array.shape[1] < classes or array.dtype.kind not in "biuf":
        raise ConfigError(key, value, wanted + _described(array))
    bad = ~np.isfinite(array).all(1)
    if bad.any():
        row = int(np.argmax(bad))
        raise ConfigError(key, value, wanted + f"non-finite values (row {row}: {array[row].tolist()[:5]})")
    sums = array.sum(1, dtype=np.float64)
    bad = (array < 0).any(1) | (np.abs(sums - 1) > PROBABILITY_TOLERANCE)
    if bad.any():
        row = int(np.argmax(bad))
        raise ConfigError(key, value, wanted + f"row {row} with minimum {float(array[row].min()):.4g} and sum {sums[row]:.6g} "
                          "(scores or logits? apply a softmax)")
    return array


def checked_predictions(model: Any, labels: np.ndarray, key: str, value: Any) -> Callable[[Any], np.ndarray]:
    """The model's predictions, what ψ compares with the labels: `predict` where it has one, else the argmax of
    `predict_proba`; every output checked by `check_model_output` (the first is the clean test set's). The
    function's `model` attribute is the model."""
    labels = np.asarray(labels)
    if callable(getattr(model, "predict", None)):
        def predict(inputs: Any) -> np.ndarray:
            return check_model_output(model.predict(inputs), len(inputs), labels, key, value, "predict")
    else:
        def predict(inputs: Any) -> np.ndarray:
            return check_model_output(model.predict_proba(inputs), len(inputs), labels, key, value, "predict_proba").argmax(1)
    predict.model = model  # the model behind the predictions (a benchmark script reads its caches)
    return predict


def _fits_format(clean: Any, need: ImageInputs) -> bool:
    return (isinstance(clean, np.ndarray) and clean.ndim == 4 and (need.channels is None or clean.shape[3] == need.channels)
            and (need.dtype is None or clean.dtype == np.dtype(need.dtype)))


def _format(need: ImageInputs) -> str:
    array = f"a {need.dtype} array" if need.dtype else "an array"
    channels = need.channels if need.channels is not None else "C"
    return f"images as {array} of shape (N, H, W, {channels}) with H, W ≥ {need.min_side}"


def _shown(clean: Any) -> str:
    return f"{_an(str(clean.dtype))} array of shape {clean.shape}" if isinstance(clean, np.ndarray) else _an(type(clean).__name__)


def pad(images: np.ndarray, side: int) -> np.ndarray:
    """`images` (N, H, W, C) with each side below `side` padded to `side` with its edge pixels, the image centred."""
    h, w = images.shape[1:3]
    dh, dw = max(side - h, 0), max(side - w, 0)
    return np.pad(images, ((0, 0), (dh // 2, dh - dh // 2), (dw // 2, dw - dw // 2), (0, 0)), mode="edge")


def resize(images: np.ndarray, side: int) -> np.ndarray:
    """uint8 `images` (N, H, W, C) scaled (bilinear, PIL) so that their shorter side is `side`, aspect kept."""
    from PIL import Image

    h, w = images.shape[1:3]
    scale = side / min(h, w)
    size = (max(side, round(w * scale)), max(side, round(h * scale)))  # PIL's (width, height)
    return np.stack([np.stack([np.asarray(Image.fromarray(image[..., c]).resize(size, Image.Resampling.BILINEAR))
                               for c in range(image.shape[2])], axis=-1) for image in images])


ADAPTERS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {"pad": pad, "resize": resize}  # the ways of ADAPT_INPUTS


def conform_inputs(clean: Any, perturbations: Sequence[Perturbation], adapt: str | None = None,
                   key: str = "benchmark.perturbations", option: str = "benchmark.adapt_inputs") -> Any:
    """The clean inputs every perturbation takes: `clean` itself where each fits what the perturbation declares it
    needs (its optional `inputs`, a `pipeline.plugins.protocols.ImageInputs`); uint8 images below the largest `min_side`
    brought up to it by `adapt` ('pad' or 'resize', `ADAPT_INPUTS`); else a ConfigError naming `key[i]`, the
    first perturbation they do not fit, the inputs' shape, what it needs and, for the size, `option`."""
    needs = [(i, p, p.inputs) for i, p in enumerate(perturbations) if getattr(p, "inputs", None) is not None]
    if not needs:
        return clean
    side = max(need.min_side for _, _, need in needs)
    adaptable = isinstance(clean, np.ndarray) and clean.ndim == 4 and clean.dtype == np.uint8
    if adapt is not None and adaptable and min(clean.shape[1:3]) < side and all(_fits_format(clean, n) for _, _, n in needs):
        clean = ADAPTERS[adapt](clean, side)
    for i, p, need in needs:
        if not _fits_format(clean, need):
            raise ConfigError(f"{key}[{i}]", p.name, f"{_format(need)}: the clean test set is {_shown(clean)} (the data set must "
                              f"return them; a gray stack g as RGB: numpy.repeat(g[..., None], 3, axis=-1); {option} adapts only "
                              "the size)")
        if min(clean.shape[1:3]) < need.min_side:
            ways = "; ".join(f"{k}: {v}" for k, v in ADAPT_INPUTS.items())
            fix = (f"set {option}=pad or {option}=resize to bring them to at least {side} pixels a side first ({ways})"
                   if adaptable else "the data set must return larger images")
            raise ConfigError(f"{key}[{i}]", p.name, f"{_format(need)}: the clean test set's images are {clean.shape[1]} x "
                              f"{clean.shape[2]} (shape {clean.shape}); {fix}")
    return clean
