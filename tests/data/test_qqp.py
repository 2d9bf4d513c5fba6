"""The real-model text benchmark `benchmark=qqp` (TestNav §4.1, benchmark (ii): QQP pairs, a RoBERTa-style
sequence-pair classifier, accuracy, chrF and BERT-F1) on a tiny QQP copy and a tiny randomly initialised
RoBERTa built here (nothing is downloaded): the loaders, pair perturbation and fidelity, the model adapter,
the config errors, and prepare + ground truth through the real stage scripts."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.config import ConfigError
from pipeline.data.qqp import load_qqp
from pipeline.perturb import text
from pipeline.stages.runner import compose_job
from pipeline.perturb.text_pairs import is_pair, side_seed, sides
from tests.in_process import run_or_fail

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ["synonym", "typo", "contraction", "punctuation"]
GLUE_HEADER = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"
PAIRS = [  # (question1, question2, is_duplicate); quotes are text in GLUE's unquoted TSV
    ("How do I learn to play the guitar quickly?", "What is the fastest way to learn guitar?", 1),
    ("What is the best way to lose weight fast?", "Why is the sky blue?", 0),
    ("It is not easy to find a good job, is it?", "Is it hard to find a good job in a big city?", 1),
    ('What does "carpe diem" mean?', "What is the meaning of carpe diem?", 1),
    ("Which country has the most beautiful beaches?", "Where are the best beaches in the world?", 1),
    ("I do not think this phone will survive a long trip.", "Is this phone durable?", 0),
    ("Can you recommend a good book about ancient history?", "What are good books on ancient history?", 1),
    ("They are not sure whether the new policy will help.", "Will the new tax policy help small companies?", 0),
    ("What should I eat before running a marathon?", "How do I train for a marathon in cold weather?", 0),
    ("How can I improve my English speaking skills at home?", "How do I improve my spoken English?", 1),
    ("We have not decided where we will spend the summer.", "Where should I go on holiday?", 0),
    ("What is 2 + 2?", "What is two plus two?", 1),
]


def write_glue(root: Path, rows: list[tuple[str, str, int]], *, nested: bool = True) -> Path:
    folder = root / "QQP" if nested else root
    folder.mkdir(parents=True, exist_ok=True)
    lines = [GLUE_HEADER] + [f"{i}\t{2 * i}\t{2 * i + 1}\t{a}\t{b}\t{y}" for i, (a, b, y) in enumerate(rows)]
    (folder / "dev.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny randomly initialised RoBERTa sequence classifier (2 labels) with the shipped MiniLM tokenizer."""
    from transformers import AutoTokenizer, RobertaConfig, RobertaForSequenceClassification

    from pipeline.models.text_encoder import minilm_path

    folder = tmp_path_factory.mktemp("tiny_roberta")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()), local_files_only=True)
    config = RobertaConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=64 + 2, type_vocab_size=2, pad_token_id=tokenizer.pad_token_id,
                           num_labels=2, initializer_range=0.5)  # wide weights: the words, not the <s> token, drive the logits
    torch.manual_seed(3)
    model = RobertaForSequenceClassification(config).eval()
    enc = tokenizer([a for a, _, _ in PAIRS], [b for _, b, _ in PAIRS], padding=True, return_tensors="pt")
    with torch.no_grad():  # centre the random head on the fixture, so that both classes occur
        margin = model(**enc).logits @ torch.tensor([-1.0, 1.0])
        model.classifier.out_proj.bias += torch.tensor([0.5, -0.5]) * float(margin.median() + 1e-4)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def classifier(checkpoint: Path):
    from pipeline.models.pair_classifier import PairClassifier

    return PairClassifier(checkpoint, batch_size=4, max_length=64)


# ---- data ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("nested", [True, False], ids=["QQP/dev.tsv", "dev.tsv"])
def test_glue_copy_gives_the_first_n_pairs_as_written(tmp_path, nested):
    pairs, labels = load_qqp(write_glue(tmp_path, PAIRS, nested=nested), limit=5)
    assert pairs == [(a, b) for a, b, _ in PAIRS[:5]] and labels.tolist() == [y for *_, y in PAIRS[:5]]
    assert pairs[3][0] == 'What does "carpe diem" mean?' and labels.dtype == np.int64
    all_pairs, _ = load_qqp(tmp_path, limit=None)
    assert len(all_pairs) == len(PAIRS) and all_pairs[:5] == pairs  # first-N subsets are nested


def test_bad_qqp_copies_name_the_file_line_or_setting(tmp_path):
    with pytest.raises(ValueError, match=r"^benchmark\.dataset\.limit: 13 — at most 12"):
        load_qqp(write_glue(tmp_path / "a", PAIRS), limit=13)
    bad = write_glue(tmp_path / "b", PAIRS)
    (bad / "QQP/dev.tsv").write_text(GLUE_HEADER + "\n0\t1\t2\tonly one question\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"dev\.tsv:2: 5 tab-separated fields, expected 6"):
        load_qqp(bad, limit=1)
    (bad / "QQP/dev.tsv").write_text(GLUE_HEADER + "\n0\t1\t2\tq1\tq2\tyes\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"label 'yes' of pair 0 is not 0 or 1"):
        load_qqp(bad, limit=1)
    (bad / "QQP/dev.tsv").write_text("question1\tquestion2\tlabel\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        load_qqp(bad, limit=1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no QQP data in .*QQP/dev\.tsv or dev\.tsv"):
        load_qqp(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_qqp(tmp_path / "absent")


def test_a_saved_dataset_folder_needs_the_datasets_package(tmp_path, monkeypatch):
    (tmp_path / "dataset_dict.json").write_text('{"splits": ["validation"]}')
    monkeypatch.setitem(sys.modules, "datasets", None)  # as when it is not installed
    with pytest.raises(ModuleNotFoundError, match=r"needs the package datasets .*or point benchmark\.dataset\.root at a GLUE copy"):
        load_qqp(tmp_path, limit=2)


def test_a_saved_dataset_folder_gives_the_same_pairs_as_the_glue_copy(tmp_path):
    datasets = pytest.importorskip("datasets")
    rows = {"question1": [a for a, _, _ in PAIRS], "question2": [b for _, b, _ in PAIRS], "label": [y for *_, y in PAIRS],
            "idx": list(range(len(PAIRS)))}
    test = {**rows, "label": [-1] * len(PAIRS)}
    datasets.DatasetDict({"validation": datasets.Dataset.from_dict(rows), "test": datasets.Dataset.from_dict(test)}).save_to_disk(
        str(tmp_path / "hf"))
    assert load_qqp(tmp_path / "hf", limit=7)[0] == load_qqp(write_glue(tmp_path / "glue", PAIRS), limit=7)[0]
    assert load_qqp(tmp_path / "hf", limit=7)[1].tolist() == [y for *_, y in PAIRS[:7]]


# ---- pair perturbation and fidelity -------------------------------------------------------------------

def _changed_tokens(a: str, b: str) -> int:
    ta, tb = text.TOKEN_RE.findall(a), text.TOKEN_RE.findall(b)
    assert len(ta) == len(tb)
    return sum(x != y for x, y in zip(ta, tb))


def test_a_pair_gets_k_edits_in_each_question_with_a_seed_per_side():
    typo = text.APPLY["typo"]
    pair = (PAIRS[0][0], PAIRS[0][0])  # the same question on both sides
    for level in range(1, 6):
        for seed in range(4):
            out = typo(pair, level, seed)
            assert isinstance(out, tuple) and len(out) == 2
            assert [_changed_tokens(pair[s], out[s]) for s in (0, 1)] == [level, level]  # k typos per question
            assert out == typo(pair, level, seed)  # deterministic
    assert any(typo(pair, 2, seed)[0] != typo(pair, 2, seed)[1] for seed in range(4))  # the sides' seeds differ
    assert side_seed(7, 0) != side_seed(7, 1)


def test_a_question_that_allows_no_edit_stays_as_it_is_while_its_partner_is_edited():
    contraction, typo = text.APPLY["contraction"], text.APPLY["typo"]
    pair = ("It is not what we are looking for.", "Why?")  # no expansion on the right; 'Why' is one typo site
    out = contraction(pair, 5, 11)
    assert out[1] == "Why?" and out[0] in ("It isn't what we're looking for.", "It's not what we're looking for.")
    numbers = ("2 + 2 = 4?", "What is two plus two?")  # no word of two ASCII letters on the left
    for seed in range(5):
        assert typo(numbers, 3, seed)[0] == numbers[0] and _changed_tokens(numbers[1], typo(numbers, 3, seed)[1]) == 3


@pytest.mark.parametrize("name", ["typo", "contraction", "punctuation"])
def test_strings_are_perturbed_exactly_as_before(name):
    family = getattr(text, name)
    for i, (a, b, _) in enumerate(PAIRS):
        for level in range(6):
            assert text.APPLY[name](a, level, i) == family(a, level, i)
            assert text.APPLY[name]((a, b), level, i) == (family(a, level, side_seed(i, 0)), family(b, level, side_seed(i, 1)))


def test_sides_flattens_pairs_and_passes_strings():
    assert sides(["a", "b"]) == ["a", "b"]
    assert sides([("a", "b"), ("c", "d")]) == ["a", "b", "c", "d"]
    assert is_pair(["x", "y"]) and not is_pair(("x",)) and not is_pair(("x", 1))
    with pytest.raises(TypeError, match="input 1 is str"):
        sides([("a", "b"), "c"])


def test_chrf_and_bert_f1_of_pairs_score_both_questions_against_their_originals():
    import sacrebleu

    from pipeline.fidelity.text import BERTScoreFidelity, ChrFFidelity, bert_f1_scores
    from pipeline.models.text_encoder import default_encoder

    clean = [(a, b) for a, b, _ in PAIRS[:6]]
    perturbed = [text.APPLY["typo"](p, 2, i) for i, p in enumerate(clean)]
    flat_clean = [q for p in clean for q in p]
    flat_perturbed = [q for p in perturbed for q in p]
    assert ChrFFidelity(clean)(perturbed) == pytest.approx(sacrebleu.corpus_chrf(flat_perturbed, [flat_clean]).score, abs=1e-12)
    assert ChrFFidelity(clean)(clean) == pytest.approx(100.0)
    encoder = default_encoder()
    expected = bert_f1_scores(encoder, flat_clean, flat_perturbed).mean()
    assert BERTScoreFidelity(clean, encoder)(perturbed) == pytest.approx(expected, abs=1e-12)
    assert BERTScoreFidelity(clean, encoder).scores(perturbed).shape == (12,)


# ---- the model adapter ---------------------------------------------------------------------------------

def test_pair_classifier_matches_a_padded_forward_pass_and_is_batch_invariant(classifier, checkpoint):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    pairs = [(a, b) for a, b, _ in PAIRS]
    logits = classifier.logits(pairs)
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(checkpoint), local_files_only=True).eval()
    enc = tokenizer([a for a, _ in pairs], [b for _, b in pairs], padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        reference = model(**enc).logits.numpy()
    np.testing.assert_allclose(logits, reference, atol=1e-5)
    assert np.array_equal(classifier.predict(pairs), reference.argmax(1))
    assert len(set(classifier.predict(pairs).tolist())) == 2  # the tiny model's classes depend on the pair
    assert np.array_equal(classifier.logits(pairs), logits)  # same inputs, same bits
    for i in (0, 5, 11):  # a pair's logits depend on the other pairs of the call only through the batch shape
        np.testing.assert_allclose(classifier.logits([pairs[i]])[0], logits[i], rtol=1e-6, atol=1e-6)
    assert classifier.predict([a for a, _ in pairs]).shape == (12,)  # single texts work too
    with pytest.raises(TypeError, match="input 1 is int"):
        classifier.predict([pairs[0], 3])


def test_a_missing_or_changed_checkpoint_is_named(tmp_path, checkpoint):
    import shutil

    from pipeline.models.pair_classifier import PairClassifier, check_weights, weights_record

    with pytest.raises(FileNotFoundError, match=r"^model\.weights_path: .*no config\.json there"):
        PairClassifier(tmp_path)
    copy = Path(shutil.copytree(checkpoint, tmp_path / "ckpt"))
    record = weights_record(copy)
    check_weights(copy, record)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "num_labels": 2, "finetuning_task": "qqp"}))
    with pytest.raises(ValueError, match="run the prepare stage again"):
        check_weights(copy, record)


# ---- config --------------------------------------------------------------------------------------------

def test_unset_paths_are_one_line_naming_the_key_and_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.delenv("QQP_ROOT", raising=False)
    monkeypatch.delenv("ROBERTA_QQP_WEIGHTS", raising=False)
    with pytest.raises(ConfigError, match=r"^benchmark\.dataset\.root: null — .*set the environment variable QQP_ROOT"):
        compose_job(["benchmark=qqp"])
    with pytest.raises(ConfigError, match=r"^model\.weights_path: null — .*set the environment variable ROBERTA_QQP_WEIGHTS"):
        compose_job(["benchmark=qqp", f"benchmark.dataset.root={tmp_path}"])
    monkeypatch.setenv("QQP_ROOT", str(tmp_path))
    monkeypatch.setenv("ROBERTA_QQP_WEIGHTS", str(tmp_path / "w"))
    cfg = compose_job(["benchmark=qqp"])
    assert cfg.benchmark.dataset.root == str(tmp_path) and cfg.model.weights_path == str(tmp_path / "w")
    assert cfg.model.kind == "sequence_classifier" and cfg.benchmark.dataset.limit == 1000 and list(cfg.fidelity) == ["chrf", "bert_f1"]
    with pytest.raises(ConfigError, match=r"^model\.kind: 'text_head' — a kind that fits dataset 'qqp'"):
        compose_job(["benchmark=qqp", "model=minilm_head"])


# ---- end to end ----------------------------------------------------------------------------------------


def test_prepare_and_ground_truth_of_a_tiny_qqp_benchmark(tmp_path, checkpoint, classifier, monkeypatch, capsys):
    from pipeline.benchmark.problem import accuracy
    from pipeline.perturb.compose import compose
    from pipeline.perturb.registry import get_perturbation

    root = write_glue(tmp_path / "glue", PAIRS)
    common = ("benchmark=qqp", f"benchmark.dataset.root={root}", "benchmark.dataset.limit=12", "benchmark.levels=2",
              f"model.weights_path={checkpoint}", "model.max_length=64", "workers=1",
              f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs")
    run_or_fail("prepare", common, monkeypatch, capsys)
    pairs, labels = [(a, b) for a, b, _ in PAIRS], np.array([y for *_, y in PAIRS])
    direct = accuracy(classifier.predict(pairs), labels)  # the oracle: the model run directly on the clean pairs
    prepared = json.loads((tmp_path / "outputs/prepare/qqp.json").read_text())
    assert prepared == {"n_test": 12, "n_duplicate": int(labels.sum()), "model_test_accuracy": direct}
    run_or_fail("groundtruth", common, monkeypatch, capsys)

    table = pd.read_parquet(tmp_path / "outputs/groundtruth/qqp.parquet")
    assert table.shape[0] == 2**4 and list(table.columns[:4]) == FAMILIES
    clean = table[(table[FAMILIES] == 0).all(axis=1)].iloc[0]
    assert clean["accuracy"] == direct and clean["delta"] == 0.0 and clean["rho_chrf"] == pytest.approx(100.0)
    assert clean["rho_bert_f1"] == pytest.approx(1.0, abs=1e-6)
    perts = [get_perturbation(n) for n in FAMILIES]
    for row in table.itertuples(index=False):
        theta = tuple(int(getattr(row, n)) for n in FAMILIES)
        perturbed = compose(perts, pairs, theta, 0)
        assert perturbed == compose(perts, pairs, theta, 0)  # deterministic
        assert row.accuracy == accuracy(classifier.predict(perturbed), labels)  # ψ(T_θ) recomputed here
        if sum(theta):
            assert row.rho_chrf < 100.0 and sum(p != q for p, q in zip(perturbed, pairs)) > 0
    contracted = compose(perts, pairs, (0, 0, 1, 0), 0)
    assert contracted[2][0] != pairs[2][0] and contracted[2][1] == pairs[2][1]  # "It is not" -> contracted; "Is it hard" has none
    assert contracted[1] == ("What's the best way to lose weight fast?", pairs[1][1])  # "Why is" is not in the table
