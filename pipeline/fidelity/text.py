"""Text and code fidelity (TestNav §4.1): chrF with SacreBLEU and BERT-F1 (BERTScore), perturbed set T_θ
against the clean set D; higher = closer to D.

chrF: `sacrebleu.metrics.CHRF(references=[clean]).corpus_score(perturbed, None).score`, the corpus-level chrF the
paper names ("computed over the full set of perturbed and clean inputs"): character n-gram statistics (n = 1..6,
word order 0, β = 2, case-sensitive, sacrebleu's defaults) are summed over all pairs and one F-score is computed
from the sums, on SacreBLEU's 0-100 scale (100 for identical sets). It is the same number as
`sacrebleu.corpus_chrf(perturbed, [clean])`; the metric object computes the clean side's statistics once.

BERT-F1: BERTScore F1 of each perturbed text against its clean original, averaged over the set, computed as
torchmetrics' `BERTScore` computes it with `idf=False` and no baseline rescaling: token states of one layer,
L2-normalised, [CLS] and [SEP] left out, precision = mean over perturbed tokens of the best cosine with a clean
token, recall the converse, F1 = 2PR / (P + R) (0 when a side has no token). As in torchmetrics, where the zeroed
[CLS] and [SEP] states take part in the maximum, a token's best cosine counts at least 0. The encoder is the shipped
all-MiniLM-L6-v2 (`pipeline.models.text_encoder`; the paper's RoBERTa-base, for text and QQP, and CodeBERT-base are
not available offline), its last layer (6 of 6, torchmetrics' default `num_layers=None`). The token states come from
the shared `TextEncoder`, whose cache holds them from the classifier's forward pass on the same texts, and the clean
side is encoded once; `torchmetrics_bert_f1` is the library computation, and a test checks that both agree to 1e-6.
What either metric does not see (whitespace for chrF; character case and blank lines for BERT-F1 with this encoder)
and why this layer: docs/search.md, section 'Text and code fidelity: blind spots, encoder, layer'.

Sequence pairs (QQP): both metrics read a set of question pairs as the 2N questions of its two sides, each perturbed
question against its clean original (`pipeline.perturb.text_pairs.sides`); `rows` still index inputs (pairs).

Per input. Both metrics give one value per scored input, in the order of `scored` (the input positions `rows`
picks, all n when `rows` is None; rows not scored have no value and take no part in φ):
- BERT-F1: `per_input` is the BERTScore F1 of each text (of a pair: the mean of its two questions'), and
  φ_BERT-F1 is its mean (`aggregate = "mean"`): bit for bit on single texts, to float rounding on pairs,
  where φ stays the mean over the 2N questions.
- chrF: corpus chrF is not a mean of sentence scores, so the per-input quantity is chrF's sufficient statistics,
  `per_input_statistics` (SacreBLEU's integer [hypothesis, reference, match] n-gram counts per order; a pair's two
  questions summed): φ_chrF = `from_statistics(stats.sum(0))` exactly, and a resample of the inputs with
  multiplicities w scores `from_statistics(w @ stats)`, its corpus chrF (`aggregate = "statistics"`;
  `chrf_from_statistics` is the same function without the metric object). `per_input` is each input's own chrF
  (sentence chrF), for display: its mean is not φ_chrF.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from pipeline.models.text_encoder import MAX_LENGTH, Encoding, TextEncoder, default_encoder
from pipeline.perturb.text_pairs import sides


def _check_pairs(clean: Sequence[str], perturbed: Sequence[str]) -> None:
    if len(perturbed) != len(clean):
        raise ValueError(f"perturbed set has {len(perturbed)} texts for {len(clean)} clean texts")


def _rows(rows: Sequence[int] | None, n: int) -> list[int] | None:
    if rows is None:
        return None
    rows = [int(r) for r in rows]
    if not rows or min(rows) < 0 or max(rows) >= n:
        raise ValueError(f"rows must be a non-empty list of indices into the {n} inputs")
    return rows


def _scored_texts(perturbed: Sequence[Any], n: int, rows: list[int] | None) -> list[str]:
    """The perturbed texts a metric compares: the `rows` picked (all when None), pairs read as their sides."""
    perturbed = list(perturbed)
    if len(perturbed) != n:
        raise ValueError(f"perturbed set has {len(perturbed)} texts for {n} clean texts")
    return sides(perturbed if rows is None else [perturbed[i] for i in rows])


def chrf_from_statistics(statistics: np.ndarray, *, beta: int = 2) -> float | np.ndarray:
    """chrF (0-100) of summed chrF statistics, SacreBLEU's own F-score of its [hypothesis, reference, match]
    n-gram counts per order (3 per order; order = char_order + word_order): a (k,) sum gives a float, a
    (K, k) array one chrF per row (e.g. K bootstrap resamples, or each input's own for sentence chrF)."""
    from sacrebleu.metrics import CHRF

    statistics = np.asarray(statistics)
    k = statistics.shape[-1]
    if statistics.ndim not in (1, 2) or k == 0 or k % 3:
        raise ValueError(f"chrF statistics hold 3 counts per n-gram order, shape (k,) or (K, k); got {statistics.shape}")
    metric = CHRF(char_order=k // 3, word_order=0, beta=beta)  # the F-score reads only order and beta
    if statistics.ndim == 1:
        return float(metric._compute_score_from_stats(statistics.tolist()).score)
    return np.array([metric._compute_score_from_stats(row).score for row in statistics.tolist()], dtype=np.float64)


class ChrFFidelity:
    """φ_chrF(T_θ, D): corpus-level chrF (SacreBLEU, 0-100) of the perturbed texts against the clean ones.

    rows: score only these positions of the input set (e.g. one of the five variants per problem of the
    code benchmarks' replicated set, so that the perturbed set has one text per clean input); None = all.
    `scored` holds the positions scored, the index of `per_input` and `per_input_statistics`.

    Per input (module docstring): φ_chrF = `from_statistics(per_input_statistics(x).sum(0))` exactly;
    `per_input` is sentence chrF, for display (its mean is not φ_chrF)."""

    aggregate = "statistics"

    def __init__(self, clean: Sequence[str], *, char_order: int = 6, word_order: int = 0, beta: int = 2,
                 whitespace: bool = False, rows: Sequence[int] | None = None) -> None:
        from sacrebleu.metrics import CHRF

        self.n = len(clean)
        if not self.n:
            raise ValueError("chrF needs a non-empty clean set")
        self.rows = _rows(rows, self.n)
        self.clean = sides(list(clean) if self.rows is None else [clean[i] for i in self.rows])
        self.scored = np.arange(self.n) if self.rows is None else np.array(self.rows)
        self.metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=whitespace,
                           references=[self.clean])

    def per_input_statistics(self, perturbed: Sequence[str]) -> np.ndarray:
        """chrF's sufficient statistics of each scored input, (len(scored), 3 · order) int64: SacreBLEU's
        [hypothesis, reference, match] character (then word) n-gram counts per order, a pair's sides summed."""
        texts = _scored_texts(perturbed, self.n, self.rows)
        self.metric._check_corpus_score_args(texts, None)
        stats = np.array(self.metric._extract_corpus_statistics(texts, None), dtype=np.int64)
        return stats.reshape(len(self.scored), -1, stats.shape[1]).sum(axis=1)  # a pair's two sides summed

    def from_statistics(self, statistics: np.ndarray) -> float | np.ndarray:
        """chrF of summed `per_input_statistics` (a (K, k) array: of each row), `chrf_from_statistics` at
        this metric's β: a resample with input multiplicities w scores `from_statistics(w @ statistics)`."""
        return chrf_from_statistics(statistics, beta=self.metric.beta)

    def per_input(self, perturbed: Sequence[str]) -> np.ndarray:
        """Sentence chrF (0-100) of each scored input against its clean original, (len(scored),) float64;
        for display: corpus chrF is computed from the summed statistics, not as a mean of these."""
        return self.from_statistics(self.per_input_statistics(perturbed))

    def __call__(self, perturbed: Sequence[str]) -> float:
        return self.from_statistics(self.per_input_statistics(perturbed).sum(axis=0))


def bert_f1_pair(candidate: Encoding, reference: Encoding) -> float:
    """BERTScore F1 of one candidate against one reference from their normalised token states."""
    p, r = candidate.tokens, reference.tokens
    if p.shape[0] == 0 or r.shape[0] == 0:
        return 0.0
    sim = p @ r.T
    # torchmetrics zeroes the [CLS] and [SEP] rows and keeps them in the greedy maximum: a token whose best
    # cosine is negative counts 0
    precision = sim.max(dim=1).values.clamp(min=0).mean()
    recall = sim.max(dim=0).values.clamp(min=0).mean()
    f1 = 2 * precision * recall / (precision + recall)
    return 0.0 if torch.isnan(f1) else float(f1)


def bert_f1_scores(encoder: TextEncoder, clean: Sequence[str], perturbed: Sequence[str]) -> np.ndarray:
    """Per-pair BERTScore F1 of perturbed[i] against clean[i] (float64 array)."""
    _check_pairs(clean, perturbed)
    cand, ref = encoder.encode(perturbed), encoder.encode(clean)
    return np.array([bert_f1_pair(c, r) for c, r in zip(cand, ref)], dtype=np.float64)


class BERTScoreFidelity:
    """φ_BERT-F1(T_θ, D): mean BERTScore F1 of each perturbed text against its clean original.

    rows: score only these positions of the input set (see `ChrFFidelity`); None = all. `scored` holds the
    positions scored, the index of `per_input`, whose mean φ_BERT-F1 is (module docstring)."""

    aggregate = "mean"

    def __init__(self, clean: Sequence[str], encoder: TextEncoder | None = None, *, rows: Sequence[int] | None = None) -> None:
        self.n = len(clean)
        if not self.n:
            raise ValueError("BERT-F1 needs a non-empty clean set")
        self.rows = _rows(rows, self.n)
        self.scored = np.arange(self.n) if self.rows is None else np.array(self.rows)
        self.clean = sides(list(clean) if self.rows is None else [clean[i] for i in self.rows])
        self.encoder = encoder or default_encoder()
        self._reference = self.encoder.encode(self.clean)  # kept here, whatever the encoder's cache evicts

    def _encodable(self, texts: list[str]) -> list[str]:
        """The texts the encoder sees for these perturbed texts: themselves (a subclass may hand over
        texts that encode identically)."""
        return texts

    def prefetch(self, perturbed_sets: Sequence[Sequence[str]]) -> None:
        """Encode the compared texts of several perturbed sets in one call, into the encoder's cache, where
        `scores` (and a text model on the same encoder) then find them. The encoder batches texts of equal token
        length only, so one set's texts mostly go through one at a time, many sets' fill its batches; a text's
        encoding does not depend on its batch (`pipeline.models.text_encoder`), so values are unchanged."""
        self.encoder.encode([t for p in perturbed_sets for t in self._encodable(_scored_texts(p, self.n, self.rows))])

    def scores(self, perturbed: Sequence[str]) -> np.ndarray:
        """BERTScore F1 of each compared text (a pair's two questions apart), float64."""
        texts = self._encodable(_scored_texts(perturbed, self.n, self.rows))
        return np.array([bert_f1_pair(c, r) for c, r in zip(self.encoder.encode(texts), self._reference)], dtype=np.float64)

    def per_input(self, perturbed: Sequence[str]) -> np.ndarray:
        """BERTScore F1 of each scored input, (len(scored),) float64: a text's own, a pair's mean over its two
        questions. φ_BERT-F1 is its mean: exactly on single texts, to float rounding on pairs."""
        scores = self.scores(perturbed)
        return scores if len(scores) == len(self.scored) else scores.reshape(len(self.scored), -1).mean(axis=1)

    def __call__(self, perturbed: Sequence[str]) -> float:
        return float(self.scores(perturbed).mean())


def torchmetrics_bert_f1(clean: Sequence[str], perturbed: Sequence[str], model_path: str, *,
                         num_layers: int | None = None, max_length: int = MAX_LENGTH) -> np.ndarray:
    """Per-pair F1 from torchmetrics' `BERTScore` on a local model folder (idf off, no baseline rescaling):
    the library reference for `BERTScoreFidelity`.

    Pairs are scored one call each. torchmetrics (1.9.0 and earlier, since 1.3.1) sorts candidates and
    references by length separately and restores the order with `embeddings[sorting_indices]`, the sort
    permutation itself rather than its inverse (Lightning-AI/torchmetrics#2347, #2728): when the two sides
    sort differently, a batched call scores candidates against other texts' references. A one-pair call
    has nothing to misalign."""
    from torchmetrics.text.bert import BERTScore
    from transformers.utils import logging as hf_logging

    _check_pairs(clean, perturbed)
    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its loader warns that a single-device model was "not sharded"
    try:
        metric = BERTScore(model_name_or_path=str(model_path), num_layers=num_layers, idf=False,
                           rescale_with_baseline=False, max_length=max_length, truncation=True)
        out = []
        for candidate, reference in zip(perturbed, clean):
            metric.reset()
            metric.update([candidate], [reference])
            out.append(float(metric.compute()["f1"]))
    finally:
        hf_logging.set_verbosity(verbosity)
        if bar:
            hf_logging.enable_progress_bar()
    return np.array(out, dtype=np.float64)
