"""Hugging Face classifiers read from a local `save_pretrained` folder (never downloaded: every load passes
`local_files_only=True`), as models under test with `predict_proba`.

* `HFImageClassifier`: `AutoModelForImageClassification` with the folder's `AutoImageProcessor` (its
  preprocessor_config.json: resizing, rescaling, normalisation). Inputs are (N, H, W, 3) uint8 RGB arrays,
  handed to the processor as channels-last images.
* `HFSequenceClassifier`: `AutoModelForSequenceClassification` with the folder's `AutoTokenizer`. Inputs are
  strings, or (first, second) pairs encoded as one sequence pair (`tokenizer(text, text_pair)`), truncated
  to `max_length` tokens and padded to the longest sequence of their batch.

Both run in eval mode under `torch.inference_mode` on `device` in batches of `batch_size`, and return the
softmax of the logits computed in float64. Batching changes a probability only at float32 rounding size:
the matrix-product kernels depend on the batch shape, and for text the padded positions are masked out.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.runtime.device import resolve_device
from pipeline.perturb.text_pairs import is_pair

# what AutoTokenizer.save_pretrained writes; without them transformers 5 builds an empty-vocabulary tokenizer
TOKENIZER_FILES = ("tokenizer_config.json", "tokenizer.json")


def model_folder(path: str) -> Path:
    """`path` as an existing folder, or a FileNotFoundError naming it."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"model path {str(folder)!r} is not a folder; expected a folder written by "
                                "save_pretrained (config.json, weights, processor or tokenizer files)")
    return folder


def _quiet_load(load: Callable[[], Any]) -> Any:
    """`load()` with transformers' progress bars off (restored afterwards)."""
    from transformers.utils import logging as hf_logging

    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return load()
    finally:
        if bar:
            hf_logging.enable_progress_bar()


def _softmax64(logits: torch.Tensor) -> np.ndarray:
    z = logits.detach().cpu().numpy().astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    return z / z.sum(axis=1, keepdims=True)


def _check_batch_size(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    return int(batch_size)


def split_inputs(inputs: Sequence[str] | Sequence[tuple[str, str]]) -> tuple[list[str], list[str] | None]:
    """(texts, None) for strings, (firsts, seconds) for pairs; a TypeError for anything else or a mix."""
    inputs = list(inputs)
    pairs = bool(inputs) and is_pair(inputs[0])
    bad = next((i for i, x in enumerate(inputs) if not (is_pair(x) if pairs else isinstance(x, str))), None)
    if bad is not None:
        raise TypeError(f"input {bad} is a {type(inputs[bad]).__name__}: inputs must be all strings or all "
                        "(first, second) pairs of strings, like input 0")
    return ([x[0] for x in inputs], [x[1] for x in inputs]) if pairs else (inputs, None)


class HFImageClassifier:
    """`predict_proba(images)`: class probabilities of a local image-classification checkpoint.

    path: the save_pretrained folder (model and image processor); device: cpu, cuda or cuda:<n>;
    batch_size: images per forward pass."""

    def __init__(self, path: str, device: str = "cpu", batch_size: int = 64) -> None:
        from transformers import AutoImageProcessor, AutoModelForImageClassification

        self.path = model_folder(path)
        self.device = resolve_device(device)
        self.batch_size = _check_batch_size(batch_size)
        try:
            self.processor = AutoImageProcessor.from_pretrained(str(self.path), local_files_only=True)
        except OSError as error:
            raise FileNotFoundError(f"model path {str(self.path)!r} has no image processor config "
                                    "(preprocessor_config.json); save one there with "
                                    "AutoImageProcessor.save_pretrained") from error
        self.model = _quiet_load(lambda: AutoModelForImageClassification.from_pretrained(str(self.path),
                                                                                       local_files_only=True))
        self.model.eval().requires_grad_(False).to(self.device)
        self.num_classes = int(self.model.config.num_labels)

    @torch.inference_mode()
    def predict_proba(self, inputs: np.ndarray) -> np.ndarray:
        """(N, num_classes) float64 probabilities of (N, H, W, 3) uint8 RGB images."""
        images = np.asarray(inputs)
        if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
            raise ValueError(f"images must be a (N, H, W, 3) uint8 RGB array, got shape {images.shape} dtype {images.dtype}")
        out = np.empty((len(images), self.num_classes), dtype=np.float64)
        for start in range(0, len(images), self.batch_size):
            batch = self.processor(images=list(images[start : start + self.batch_size]), return_tensors="pt",
                                   input_data_format="channels_last")
            logits = self.model(pixel_values=batch["pixel_values"].to(self.device)).logits
            out[start : start + len(logits)] = _softmax64(logits)
        return out


class HFSequenceClassifier:
    """`predict_proba(texts)`: class probabilities of a local sequence-classification checkpoint.

    path: the save_pretrained folder (model and tokenizer); device: cpu, cuda or cuda:<n>; batch_size:
    sequences per forward pass; max_length: tokens per sequence, special tokens included."""

    def __init__(self, path: str, device: str = "cpu", batch_size: int = 32, max_length: int = 256) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = model_folder(path)
        self.device = resolve_device(device)
        self.batch_size = _check_batch_size(batch_size)
        if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) or max_length < 2:
            raise ValueError(f"max_length must be an integer >= 2 (special tokens included), got {max_length!r}")
        self.max_length = int(max_length)
        if not any((self.path / name).is_file() for name in TOKENIZER_FILES):
            raise FileNotFoundError(f"model path {str(self.path)!r} has no tokenizer ({' or '.join(TOKENIZER_FILES)}); save "
                                    "one there with AutoTokenizer.save_pretrained")
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = _quiet_load(lambda: AutoModelForSequenceClassification.from_pretrained(str(self.path),
                                                                                           local_files_only=True))
        self.model.eval().requires_grad_(False).to(self.device)
        self.num_classes = int(self.model.config.num_labels)

    @torch.inference_mode()
    def predict_proba(self, inputs: Sequence[str] | Sequence[tuple[str, str]]) -> np.ndarray:
        """(N, num_classes) float64 probabilities of N strings or N (first, second) pairs."""
        texts, text_pairs = split_inputs(inputs)
        out = np.empty((len(texts), self.num_classes), dtype=np.float64)
        for start in range(0, len(texts), self.batch_size):
            stop = start + self.batch_size
            batch = self.tokenizer(texts[start:stop], None if text_pairs is None else text_pairs[start:stop],
                                   truncation=True, padding=True, max_length=self.max_length, return_tensors="pt")
            logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits
            out[start : start + len(logits)] = _softmax64(logits)
        return out
