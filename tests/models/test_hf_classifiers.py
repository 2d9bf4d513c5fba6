"""HFImageClassifier and HFSequenceClassifier on tiny randomly initialised checkpoints saved in the test
(nothing is downloaded): probabilities against a direct forward pass of the same model on the processor's
or tokenizer's outputs (the oracle), batching, sentence pairs, and errors for incomplete folders."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers

from pipeline.models.hf_classifiers import HFImageClassifier, HFSequenceClassifier
from pipeline.plugins.protocols import Classifier

WORDS = "the a cat dog sat on mat is was good bad very not movie film plot".split()
SENTENCES = ["the cat sat on the mat", "a very good movie", "not good", "the plot was bad bad bad",
             "dog", "the film is not very good , the plot is bad", "cat dog cat dog", "a"]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def vit_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("vit")
    torch.manual_seed(0)
    config = transformers.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
                                    num_attention_heads=2, intermediate_size=37, num_labels=3, initializer_range=0.5)
    transformers.ViTForImageClassification(config).save_pretrained(folder)
    transformers.ViTImageProcessor(size={"height": 16, "width": 16}).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bert")
    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", *WORDS])}
    tokenizer = transformers.BertTokenizer(vocab=vocab)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=37, max_position_embeddings=64, num_labels=4,
                                     initializer_range=0.5)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _images(n: int = 10) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, size=(n, 20, 24, 3), dtype=np.uint8)


def _check_probabilities(p: np.ndarray, shape: tuple[int, int]) -> None:
    assert p.shape == shape and p.dtype == np.float64
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert (p >= 0).all()


def test_image_probabilities_match_a_direct_forward_pass(vit_folder: Path):
    model = HFImageClassifier(str(vit_folder))
    assert isinstance(model, Classifier) and model.num_classes == 3
    images = _images()
    p = model.predict_proba(images)
    _check_probabilities(p, (10, 3))
    processor = transformers.ViTImageProcessor.from_pretrained(vit_folder, local_files_only=True)
    oracle = transformers.ViTForImageClassification.from_pretrained(vit_folder, local_files_only=True).eval()
    with torch.no_grad():
        pixels = processor(images=list(images), return_tensors="pt")["pixel_values"]
        expected = torch.softmax(oracle(pixel_values=pixels).logits.double(), dim=1).numpy()
    np.testing.assert_allclose(p, expected, atol=1e-6, rtol=0)
    assert np.ptp(p, axis=0).max() > 0.01                       # the images are told apart


def test_image_batching_does_not_change_results(vit_folder: Path):
    images = _images(7)
    one = HFImageClassifier(str(vit_folder), batch_size=1).predict_proba(images)
    many = HFImageClassifier(str(vit_folder), device="cpu", batch_size=64).predict_proba(images)
    np.testing.assert_allclose(one, many, atol=1e-6, rtol=0)
    assert HFImageClassifier(str(vit_folder)).predict_proba(images[:0]).shape == (0, 3)


def test_image_errors(vit_folder: Path, tmp_path: Path):
    model = HFImageClassifier(str(vit_folder))
    with pytest.raises(ValueError, match=r"\(N, H, W, 3\) uint8 RGB array, got shape \(2, 20, 24, 3\) dtype float32"):
        model.predict_proba(_images(2).astype(np.float32))
    with pytest.raises(FileNotFoundError, match=r"nowhere.*is not a folder"):
        HFImageClassifier(str(tmp_path / "nowhere"))
    bare = tmp_path / "bare"
    shutil.copytree(vit_folder, bare)
    (bare / "preprocessor_config.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"bare.*has no image processor config \(preprocessor_config\.json\)"):
        HFImageClassifier(str(bare))
    with pytest.raises(ValueError, match="device"):
        HFImageClassifier(str(vit_folder), device="gpu")
    with pytest.raises(ValueError, match="batch_size must be a positive integer, got 0"):
        HFImageClassifier(str(vit_folder), batch_size=0)


def _sequence_oracle(folder: Path, texts, pairs=None, max_length: int = 256) -> np.ndarray:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.BertForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        encoded = tokenizer(texts, pairs, truncation=True, padding=True, max_length=max_length, return_tensors="pt")
        return torch.softmax(model(**encoded).logits.double(), dim=1).numpy()


def test_sequence_probabilities_match_a_direct_forward_pass(bert_folder: Path):
    model = HFSequenceClassifier(str(bert_folder))
    assert isinstance(model, Classifier) and model.num_classes == 4
    p = model.predict_proba(SENTENCES)
    _check_probabilities(p, (len(SENTENCES), 4))
    np.testing.assert_allclose(p, _sequence_oracle(bert_folder, SENTENCES), atol=1e-6, rtol=0)
    assert np.ptp(p, axis=0).max() > 0.01                       # the texts are told apart


def test_sequence_batching_and_truncation(bert_folder: Path):
    one = HFSequenceClassifier(str(bert_folder), batch_size=1).predict_proba(SENTENCES)
    many = HFSequenceClassifier(str(bert_folder), batch_size=64).predict_proba(SENTENCES)
    np.testing.assert_allclose(one, many, atol=1e-6, rtol=0)
    short = HFSequenceClassifier(str(bert_folder), batch_size=3, max_length=4).predict_proba(SENTENCES)
    np.testing.assert_allclose(short, _sequence_oracle(bert_folder, SENTENCES, max_length=4), atol=1e-6, rtol=0)
    assert not np.allclose(short, many)


def test_sequence_pairs(bert_folder: Path):
    pairs = list(zip(SENTENCES, reversed(SENTENCES)))
    model = HFSequenceClassifier(str(bert_folder), batch_size=3)
    p = model.predict_proba(pairs)
    _check_probabilities(p, (len(pairs), 4))
    firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
    np.testing.assert_allclose(p, _sequence_oracle(bert_folder, firsts, seconds), atol=1e-6, rtol=0)
    np.testing.assert_allclose(model.predict_proba([list(x) for x in pairs]), p, atol=1e-6, rtol=0)
    with pytest.raises(TypeError, match="input 2 is a str: inputs must be all strings or all"):
        model.predict_proba([pairs[0], pairs[1], "loose"])
    assert model.predict_proba([]).shape == (0, 4)


def test_sequence_errors(bert_folder: Path, tmp_path: Path):
    with pytest.raises(FileNotFoundError, match=r"nowhere.*is not a folder"):
        HFSequenceClassifier(str(tmp_path / "nowhere"))
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(bert_folder / name, bare / name)
    with pytest.raises(FileNotFoundError, match=r"bare.*has no tokenizer \(tokenizer_config\.json or tokenizer\.json\)"):
        HFSequenceClassifier(str(bare))
    with pytest.raises(ValueError, match="max_length must be an integer >= 2"):
        HFSequenceClassifier(str(bert_folder), max_length=1)
