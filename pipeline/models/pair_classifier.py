"""A Hugging Face sequence(-pair) classification checkpoint read from a local folder: the model under test of
the real-model text benchmark (TestNav §4.1, benchmark (ii): RoBERTa-base fine-tuned on QQP, accuracy).

Any checkpoint that `AutoTokenizer` and `AutoModelForSequenceClassification` load works (RoBERTa, BERT, …);
it is read with `local_files_only=True`, so nothing is downloaded. Inputs are strings or (first, second)
pairs, which the tokenizer encodes as one sequence pair (`<s> q1 </s></s> q2 </s>` for RoBERTa), truncated
longest-first to `max_length` tokens. The prediction is the argmax of the logits: class i of the checkpoint
is label i of the data set (GLUE's QQP: 0 not duplicate, 1 duplicate, the order of QQP fine-tunes).

Determinism: the model is in eval mode (no dropout) under `torch.inference_mode`, and inputs are never
padded: pairs of the same token length are batched together, every position real, so no padding or
attention mask enters a pair's computation. The same input list gives the same logits, bit for bit, on one
device. A pair's logits can still differ in the last bits (measured: 1 ulp of float32 on a tiny RoBERTa)
with the number of pairs in its batch, because the matrix-product kernels depend on the batch shape; only a
pair within that distance of the decision boundary could change its class. CPU and GPU differ likewise.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.perturb.text_pairs import is_pair


def checkpoint_folder(path: str | Path | None) -> Path:
    """`path` as a local checkpoint folder (holding config.json), or an error naming the problem."""
    if path is None or not str(path).strip():
        raise ValueError("model.weights_path: None — a local folder with a Hugging Face sequence-classification checkpoint")
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"model.weights_path: {str(folder)!r} — no config.json there; expected a folder written by "
                                "save_pretrained (config.json, weights, tokenizer files)")
    return folder


def checkpoint_digest(path: str | Path) -> str:
    """sha256 over the names and contents of the files of a checkpoint folder (what its predictions depend on)."""
    digest = hashlib.sha256()
    folder = checkpoint_folder(path)
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        with open(file, "rb") as fh:
            digest.update(str(file.relative_to(folder)).encode() + b"\0" + hashlib.file_digest(fh, "sha256").digest())
    return digest.hexdigest()


class PairClassifier:
    """`predict(inputs)`: the class of each string or (first, second) pair under a local checkpoint.

    batch_size: sequences per forward pass (all of one token length); max_length: tokens per sequence,
    special tokens included; device: where the model runs (the builder resolves the config's name with
    `pipeline.runtime.device.resolve_device`)."""

    def __init__(self, path: str | Path | None, *, batch_size: int = 32, max_length: int = 256,
                 device: str | torch.device = "cpu") -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        if batch_size < 1 or max_length < 2:
            raise ValueError(f"need batch_size >= 1 and max_length >= 2, got {batch_size} and {max_length}")
        self.path = checkpoint_folder(path)
        self.device = torch.device(device)
        self.batch_size, self.max_length = int(batch_size), int(max_length)
        bar = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(str(self.path), local_files_only=True)
        finally:
            if bar:
                hf_logging.enable_progress_bar()
        self.model.eval().requires_grad_(False).to(self.device)
        self.num_labels = int(self.model.config.num_labels)

    def encode(self, inputs: Sequence[Any]) -> dict[str, list[list[int]]]:
        """The tokenizer's unpadded model inputs (input_ids, and token_type_ids where the model has them)."""
        inputs = list(inputs)
        pairs = bool(inputs) and is_pair(inputs[0])
        bad = next((i for i, x in enumerate(inputs) if not (is_pair(x) if pairs else isinstance(x, str))), None)
        if bad is not None:
            raise TypeError(f"input {bad} is {type(inputs[bad]).__name__}: inputs must be all strings or all pairs of two "
                            "strings, like input 0")
        if pairs:
            firsts, seconds = [x[0] for x in inputs], [x[1] for x in inputs]
            return dict(self.tokenizer(firsts, seconds, truncation=True, max_length=self.max_length))
        return dict(self.tokenizer(inputs, truncation=True, max_length=self.max_length))

    @torch.inference_mode()
    def logits(self, inputs: Sequence[Any]) -> np.ndarray:
        """(N, num_labels) float32 logits, aligned with `inputs`."""
        encoded = self.encode(inputs)
        n = len(encoded["input_ids"]) if encoded else 0
        out = np.zeros((n, self.num_labels), dtype=np.float32)
        by_length: dict[int, list[int]] = {}
        for i, ids in enumerate(encoded.get("input_ids", [])):
            by_length.setdefault(len(ids), []).append(i)
        keys = [k for k in encoded if k in ("input_ids", "token_type_ids")]
        for length in sorted(by_length):
            rows = by_length[length]
            for start in range(0, len(rows), self.batch_size):
                chunk = rows[start : start + self.batch_size]
                batch = {k: torch.tensor([encoded[k][i] for i in chunk], dtype=torch.long, device=self.device) for k in keys}
                batch["attention_mask"] = torch.ones_like(batch["input_ids"])
                out[chunk] = self.model(**batch).logits.float().cpu().numpy()
        return out

    def predict(self, inputs: Sequence[Any]) -> np.ndarray:
        """int64 class of each input: argmax of its logits."""
        return self.logits(inputs).argmax(axis=1).astype(np.int64)

    def __call__(self, inputs: Sequence[Any]) -> np.ndarray:
        return self.predict(inputs)


def weights_record(path: str | Path) -> dict[str, str]:
    """What `prepare` records of the checkpoint it measured: its folder and `checkpoint_digest`."""
    folder = checkpoint_folder(path)
    return {"weights_path": str(folder.resolve()), "sha256": checkpoint_digest(folder)}


def check_weights(path: str | Path, record: dict[str, str]) -> None:
    """A ValueError unless the checkpoint at `path` is the one `record` (from `weights_record`) describes:
    results and resume keys name the prepared assets, so other weights at the same path must not slip in."""
    now = checkpoint_digest(path)
    if now != record.get("sha256"):
        raise ValueError(f"model.weights_path: {str(path)!r} — the checkpoint prepared ({record.get('weights_path')}, sha256 "
                         f"{str(record.get('sha256'))[:12]}…) changed to sha256 {now[:12]}…; run the prepare stage again")
