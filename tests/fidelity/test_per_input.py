"""Per-input fidelity (issue 29, item 1): SSIM and BERT-F1 per input with φ their mean, chrF's per-input
sufficient statistics whose (weighted) sum gives SacreBLEU's corpus chrF of the full or a resampled set,
KID a set statistic without per-input values; every aggregate as the code before per-input values gave it."""
from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
import torch
from sacrebleu.metrics import CHRF
from torchmetrics.functional.image import structural_similarity_index_measure

from pipeline.code.robust_pass import replicate
from pipeline.data.digits import load_digits_splits
from pipeline.data.humaneval import load_humaneval
from pipeline.fidelity.code import CodeBERTScoreFidelity, code_chrf, variant_rows
from pipeline.fidelity.kid import KIDFidelity
from pipeline.fidelity.ssim import SSIMFidelity, ssim_per_image
from pipeline.fidelity.text import BERTScoreFidelity, ChrFFidelity, bert_f1_scores, chrf_from_statistics
from pipeline.models.cnn import to_tensor
from pipeline.models.text_encoder import TextEncoder
from pipeline.perturb import code, text
from pipeline.perturb.compose import compose
from pipeline.perturb.registry import get_perturbation

FAMILIES = ["butterfingers", "char_case", "whitespace", "newline"]


@pytest.fixture(scope="module")
def prompts() -> list[str]:
    return [p.prompt for p in load_humaneval(limit=6)]


def _typos(texts: list[str], level: int) -> list[str]:
    return [text.typo(t, level, seed=i) for i, t in enumerate(texts)]


def _code(prompts: list[str], level: int) -> list[str]:
    return [code.whitespace(code.butterfingers(p, level, seed=i), level, seed=i) for i, p in enumerate(prompts)]


# SSIM


def _batchwise_mean(per_image: torch.Tensor, batch_size: int) -> float:
    """φ_SSIM as the code before per-input values summed it: float64 sum of each batch, then / n."""
    total = 0.0
    for s in range(0, len(per_image), batch_size):
        total += float(per_image[s : s + batch_size].double().sum())
    return total / len(per_image)


def test_ssim_per_input_is_torchmetrics_per_image_and_phi_is_its_mean():
    rng = np.random.default_rng(0)
    clean = rng.integers(0, 256, (10, 32, 32, 3), dtype=np.uint8)
    noisy = np.clip(clean.astype(int) + rng.integers(-40, 40, clean.shape), 0, 255).astype(np.uint8)
    phi = SSIMFidelity(clean, batch_size=4)
    per = phi.per_input(noisy)
    assert per.shape == (10,) and per.dtype == np.float64 and np.isfinite(per).all()
    library = structural_similarity_index_measure(to_tensor(noisy), to_tensor(clean), data_range=1.0, reduction="none")
    np.testing.assert_allclose(per, library.double().numpy(), atol=1e-5, rtol=0)
    assert phi(noisy) == float(per.mean())
    assert phi.aggregate == "mean" and phi(clean) == 1.0 and (phi.per_input(clean) == 1.0).all()


def test_ssim_aggregate_is_unchanged_on_the_tiny_digits_set():
    """The 40 test digits of benchmark=tiny under its two perturbations: φ_SSIM (mean of `per_input`) has
    the bits of the batch-by-batch sum it replaced, at the pipeline's batch of 512 and at batches of 16."""
    clean = load_digits_splits(seed=0, size=32)["test"][0][:40]
    perts = [get_perturbation(n) for n in ("brightness", "pixelate")]
    for theta in [(1, 0), (0, 2), (2, 2), (5, 5)]:
        perturbed = compose(perts, clean, theta, 0)
        reference = ssim_per_image(to_tensor(perturbed), to_tensor(clean))
        for batch_size in (512, 16):
            phi = SSIMFidelity(clean, batch_size=batch_size)
            assert phi(perturbed) == _batchwise_mean(reference, batch_size)
            np.testing.assert_array_equal(phi.per_input(perturbed), reference.double().numpy())


# BERT-F1


def test_bert_f1_per_input_is_the_per_text_f1_and_phi_is_its_mean(clean: list[str], encoder: TextEncoder) -> None:
    phi = BERTScoreFidelity(clean, encoder)
    perturbed = [""] + _typos(clean, 3)[1:]  # an emptied text scores 0, not NaN
    per = phi.per_input(perturbed)
    assert per.shape == (20,) and np.isfinite(per).all() and per[0] == 0.0 and phi.aggregate == "mean"
    np.testing.assert_array_equal(phi.scored, np.arange(20))
    np.testing.assert_array_equal(per, bert_f1_scores(encoder, clean, perturbed))
    assert phi(perturbed) == float(per.mean()) == float(np.mean(bert_f1_scores(encoder, clean, perturbed)))


def test_bert_f1_per_input_with_rows_scores_the_picked_rows(clean: list[str], encoder: TextEncoder) -> None:
    replicated = [t for t in clean[:4] for _ in range(3)]
    perturbed = _typos(replicated, 3)
    rows = variant_rows(12, 3, 1)
    phi = BERTScoreFidelity(replicated, encoder, rows=rows)
    per = phi.per_input(perturbed)
    assert per.shape == (4,)
    np.testing.assert_array_equal(phi.scored, rows)
    np.testing.assert_array_equal(per, bert_f1_scores(encoder, clean[:4], [perturbed[i] for i in rows]))
    assert phi(perturbed) == float(per.mean())


def test_bert_f1_per_input_of_pairs_is_the_mean_of_both_questions(clean: list[str], encoder: TextEncoder) -> None:
    pairs = list(zip(clean[:5], clean[5:10]))
    perturbed = [(text.typo(a, 2, seed=i), text.typo(b, 4, seed=i)) for i, (a, b) in enumerate(pairs)]
    phi = BERTScoreFidelity(pairs, encoder)
    per = phi.per_input(perturbed)
    first = bert_f1_scores(encoder, clean[:5], [a for a, _ in perturbed])
    second = bert_f1_scores(encoder, clean[5:10], [b for _, b in perturbed])
    assert per.shape == (5,)
    np.testing.assert_allclose(per, (first + second) / 2, atol=1e-15, rtol=0)
    assert phi(perturbed) == float(np.concatenate([first, second]).mean()) == pytest.approx(float(per.mean()), abs=1e-12)


def test_code_bert_f1_per_input_equals_plain_bert_f1_where_encodings_are_reused(prompts: list[str], encoder: TextEncoder) -> None:
    clean, _ = replicate(prompts[:3], 2)
    rows = variant_rows(len(clean), 2, 1)
    fast, plain = CodeBERTScoreFidelity(clean, encoder, rows=rows), BERTScoreFidelity(clean, encoder, rows=rows)
    perts = [get_perturbation(n) for n in FAMILIES]
    for theta in [(1, 2, 0, 0), (1, 2, 0, 3), (1, 0, 0, 3)]:
        perturbed = compose(perts, clean, theta, 0)
        per = fast.per_input(perturbed)
        assert per.shape == (3,)
        np.testing.assert_array_equal(per, plain.per_input(perturbed))
        assert fast(perturbed) == float(per.mean()) == plain(perturbed)
    assert fast.reused > 0
    np.testing.assert_array_equal(fast.scored, [0, 2, 4])


# chrF


def _resample(weights: np.ndarray, texts: list[str]) -> list[str]:
    return [t for t, w in zip(texts, weights) for _ in range(w)]


def test_chrf_statistics_sum_to_sacrebleu_corpus_chrf_of_the_full_set(clean: list[str]) -> None:
    phi = ChrFFidelity(clean)
    for perturbed in (_typos(clean, 1), _typos(clean, 5), list(clean)):
        stats = phi.per_input_statistics(perturbed)
        assert stats.shape == (20, 18) and stats.dtype == np.int64 and phi.aggregate == "statistics"
        library = sacrebleu.corpus_chrf(perturbed, [clean]).score
        assert chrf_from_statistics(stats.sum(axis=0)) == pytest.approx(library, abs=1e-9)
        # the aggregate as the code before per-input values gave it, bit for bit
        assert phi(perturbed) == CHRF(references=[clean]).corpus_score(perturbed, None).score


def test_chrf_of_a_resample_is_the_weighted_sum_of_statistics(clean: list[str]) -> None:
    perturbed = _typos(clean, 3)
    stats = ChrFFidelity(clean).per_input_statistics(perturbed)
    weights = np.random.default_rng(0).multinomial(20, np.full(20, 1 / 20), size=5)
    scores = ChrFFidelity(clean).from_statistics(weights @ stats)
    assert scores.shape == (5,)
    for w, score in zip(weights, scores):
        library = sacrebleu.corpus_chrf(_resample(w, perturbed), [_resample(w, clean)]).score
        assert score == pytest.approx(library, abs=1e-9)
        assert chrf_from_statistics(w @ stats) == score
        assert chrf_from_statistics((w @ stats).astype(float)) == score  # float weights of whole counts


def test_code_chrf_statistics_count_whitespace_and_follow_rows(prompts: list[str]) -> None:
    clean, _ = replicate(prompts, 2)
    rows = variant_rows(len(clean), 2, 1)
    phi = code_chrf(clean, rows=rows)
    perturbed = _code(clean, 3)
    first = [perturbed[i] for i in rows]
    library = CHRF(whitespace=True)
    stats = phi.per_input_statistics(perturbed)
    assert stats.shape == (6, 18)
    np.testing.assert_array_equal(phi.scored, rows)
    assert chrf_from_statistics(stats.sum(axis=0)) == pytest.approx(library.corpus_score(first, [prompts]).score, abs=1e-9)
    assert phi(perturbed) == CHRF(whitespace=True, references=[prompts]).corpus_score(first, None).score
    for w in np.random.default_rng(1).multinomial(6, np.full(6, 1 / 6), size=4):
        expected = library.corpus_score(_resample(w, first), [_resample(w, prompts)]).score
        assert chrf_from_statistics(w @ stats) == pytest.approx(expected, abs=1e-9)
    # whitespace-only edits: invisible to default chrF's statistics, not to code chrF's
    spaced = [code.whitespace(p, 5, seed=i) for i, p in enumerate(clean)]
    assert (ChrFFidelity(clean).per_input(spaced) == 100.0).all()
    assert (phi.per_input(spaced) < 100.0).any()


def test_chrf_per_input_is_sentence_chrf_whose_mean_is_not_phi(clean: list[str]) -> None:
    perturbed = [""] + _typos(clean, 3)[1:]  # an emptied text scores 0, not NaN
    phi = ChrFFidelity(clean)
    per = phi.per_input(perturbed)
    assert per.shape == (20,) and np.isfinite(per).all()
    np.testing.assert_array_equal(per, [sacrebleu.sentence_chrf(p, [c]).score for p, c in zip(perturbed, clean)])
    assert per[0] == 0.0 and float(per.mean()) != pytest.approx(phi(perturbed), abs=1e-6)


def test_chrf_statistics_of_pairs_sum_both_questions_and_chrf_plus_plus(clean: list[str]) -> None:
    pairs = list(zip(clean[:5], clean[5:10]))
    perturbed = [(text.typo(a, 2, seed=i), text.typo(b, 4, seed=i)) for i, (a, b) in enumerate(pairs)]
    questions, originals = [q for p in perturbed for q in p], [q for p in pairs for q in p]
    for word_order in (0, 2):
        phi = ChrFFidelity(pairs, word_order=word_order)
        stats = phi.per_input_statistics(perturbed)
        library = CHRF(word_order=word_order)
        assert stats.shape == (5, 3 * (6 + word_order))
        for i in range(5):
            expected = library.corpus_score(questions[2 * i : 2 * i + 2], [originals[2 * i : 2 * i + 2]]).score
            assert chrf_from_statistics(stats[i]) == pytest.approx(expected, abs=1e-9)
        assert chrf_from_statistics(stats.sum(axis=0)) == pytest.approx(library.corpus_score(questions, [originals]).score, abs=1e-9)
        assert phi(perturbed) == CHRF(word_order=word_order, references=[originals]).corpus_score(questions, None).score


def test_chrf_from_statistics_rejects_what_is_not_chrf_statistics() -> None:
    for bad in (np.zeros(17), np.zeros((2, 3, 18)), np.zeros(0)):
        with pytest.raises(ValueError, match="3 counts per n-gram order"):
            chrf_from_statistics(bad)


# KID


def test_kid_is_a_set_statistic_without_per_input_values():
    class Flatten(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.flatten(1)[:, :16]

    phi = KIDFidelity(np.zeros((6, 8, 8, 3), dtype=np.uint8), Flatten())
    assert phi.aggregate == "set" and not hasattr(phi, "per_input") and not hasattr(phi, "per_input_statistics")
