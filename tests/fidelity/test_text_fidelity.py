"""Text and code fidelity (TestNav §4.1): corpus chrF with SacreBLEU and BERT-F1 with the shipped MiniLM,
the shared-forward BERT-F1 equal to torchmetrics' `BERTScore` to 1e-6, both = their maximum on identical
sets and lower the stronger the perturbation."""
from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

from pipeline.data.humaneval import load_humaneval
from pipeline.fidelity.text import BERTScoreFidelity, ChrFFidelity, bert_f1_scores, torchmetrics_bert_f1
from pipeline.models.text_encoder import TextEncoder, minilm_path
from pipeline.perturb import code, text


def _typos(texts: list[str], level: int) -> list[str]:
    return [text.typo(t, level, seed=i) for i, t in enumerate(texts)]


def test_chrf_is_sacrebleu_corpus_chrf_and_100_on_identical_sets(clean: list[str]) -> None:
    phi = ChrFFidelity(clean)
    assert phi(list(clean)) == pytest.approx(100.0, abs=1e-9)
    light, heavy = _typos(clean, 1), _typos(clean, 5)
    for perturbed in (light, heavy):
        assert phi(perturbed) == pytest.approx(sacrebleu.corpus_chrf(perturbed, [clean]).score, abs=1e-9)
    assert 100.0 > phi(light) > phi(heavy) > 0.0
    with pytest.raises(ValueError, match="perturbed set"):
        phi(clean[:-1])


def test_chrf_is_corpus_level_not_a_mean_of_sentence_scores(clean: list[str]) -> None:
    perturbed = _typos(clean, 3)
    sentence_mean = np.mean([sacrebleu.sentence_chrf(p, [c]).score for p, c in zip(perturbed, clean)])
    assert ChrFFidelity(clean)(perturbed) != pytest.approx(sentence_mean, abs=1e-6)


def test_default_chrf_ignores_whitespace_only_changes() -> None:
    """SacreBLEU removes whitespace before counting character n-grams (whitespace=False, its default):
    the code families `whitespace` and `newline` are invisible to default chrF, visible with whitespace=True."""
    prompts = [p.prompt for p in load_humaneval(limit=5)]
    blank_lines = [code.newline(p, 5, seed=i) for i, p in enumerate(prompts)]
    assert blank_lines != prompts
    assert ChrFFidelity(prompts)(blank_lines) == pytest.approx(100.0)
    assert ChrFFidelity(prompts, whitespace=True)(blank_lines) < 100.0


def test_bert_f1_of_identical_sets_is_one(clean: list[str], encoder: TextEncoder) -> None:
    phi = BERTScoreFidelity(clean, encoder)
    assert phi(list(clean)) == pytest.approx(1.0, abs=1e-6)
    assert 1.0 > phi(_typos(clean, 1)) > phi(_typos(clean, 5))


def test_shared_forward_bert_f1_equals_torchmetrics(clean: list[str], encoder: TextEncoder) -> None:
    """One forward pass serves the classifier and BERT-F1; the result is torchmetrics' BERTScore (local
    MiniLM folder, last layer, idf off, no baseline) to 1e-6, per pair, for texts of many lengths."""
    perturbed = _typos(clean[:8], 4) + [text.punctuation(t, 5, seed=1) for t in clean[8:14]] + list(clean[14:18])
    references = list(clean[:18])
    perturbed += ["", "Completely unrelated words about cooking pasta.", "a somewhat longer candidate sentence here too and more"]
    references += ["A reference with no candidate text.", references[0], "short one"]  # the last has negative best cosines
    ours = bert_f1_scores(encoder, references, perturbed)
    library = torchmetrics_bert_f1(references, perturbed, str(minilm_path()))
    assert ours.shape == library.shape == (21,)
    np.testing.assert_allclose(ours, library, atol=1e-6, rtol=0)
    assert ours[18] == 0.0 and ours[14:18] == pytest.approx(1.0, abs=1e-6)
    assert BERTScoreFidelity(references, encoder)(perturbed) == pytest.approx(float(library.mean()), abs=1e-6)


def test_bert_f1_of_another_layer_equals_torchmetrics_num_layers(clean: list[str], encoder: TextEncoder) -> None:
    layer3 = TextEncoder(layer=3)
    perturbed = _typos(clean[:6], 5)
    np.testing.assert_allclose(bert_f1_scores(layer3, clean[:6], perturbed),
                               torchmetrics_bert_f1(clean[:6], perturbed, str(minilm_path()), num_layers=3), atol=1e-6, rtol=0)
    assert not np.allclose(bert_f1_scores(layer3, clean[:6], perturbed), bert_f1_scores(encoder, clean[:6], perturbed))


def test_rows_score_one_fixed_subset_of_the_input_set(clean: list[str], encoder: TextEncoder) -> None:
    """The code benchmarks repeat each prompt five times (RP5@1); `rows` scores one variant per problem."""
    replicated = [t for t in clean[:4] for _ in range(3)]
    perturbed = [text.typo(t, 3, seed=i) for i, t in enumerate(replicated)]
    rows = [0, 3, 6, 9]
    first = [perturbed[i] for i in rows]
    assert ChrFFidelity(replicated, rows=rows)(perturbed) == pytest.approx(ChrFFidelity(clean[:4])(first), abs=1e-12)
    assert BERTScoreFidelity(replicated, encoder, rows=rows)(perturbed) == pytest.approx(BERTScoreFidelity(clean[:4], encoder)(first), abs=1e-12)
    with pytest.raises(ValueError, match="rows"):
        ChrFFidelity(replicated, rows=[12])
    with pytest.raises(ValueError, match="perturbed set"):
        BERTScoreFidelity(replicated, encoder, rows=rows)(first)


def test_what_each_metric_does_not_see_on_code_prompts(encoder: TextEncoder) -> None:
    """Default chrF drops whitespace; the uncased MiniLM tokenizer drops case and line breaks."""
    prompts = [p.prompt for p in load_humaneval(limit=4)]
    chrf, bert = ChrFFidelity(prompts), BERTScoreFidelity(prompts, encoder)
    seen = {}
    for name, family in code.APPLY.items():
        perturbed = [family(p, 5, seed=i) for i, p in enumerate(prompts)]
        assert perturbed != prompts
        seen[name] = (chrf(perturbed) < 100.0 - 1e-9, bert(perturbed) < 1.0 - 1e-6)
    assert seen == {"butterfingers": (True, True), "char_case": (True, False),
                    "whitespace": (False, True), "newline": (False, False)}
