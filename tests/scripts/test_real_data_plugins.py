"""The ready-made plug-ins for a user's own data and Hugging Face models, end to end through the stages:
`benchmark=image_folder` with `model=hf_image_classifier` and `benchmark=text_csv` with
`model=hf_sequence_classifier`, on a generated folder and file and tiny randomly initialised checkpoints
saved in the test (nothing is downloaded): prepare trains nothing, the ground truth covers Θ, and its clean
score is the model's own accuracy on D computed directly (the oracle). The image folder's `prepare` runs as its
own process, as a user runs it; the other stages in this process (`run_stage` with the script's argv), which has
the model libraries loaded already."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import transformers
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
WORDS = "the a cat dog sat on mat is was good bad very not movie film plot".split()


def paths(folder: Path) -> list[str]:
    return [f"paths.data={folder}/data", f"paths.outputs={folder}/outputs", "workers=1", "benchmark.store.enabled=false"]


def stage(folder: Path, script: str, *overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, f"scripts/{script}.py", *overrides, *paths(folder)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def stage_here(folder: Path, script: str, *overrides: str, monkeypatch, capsys) -> None:
    """`stage` in this process: the script's `run_stage(main)` with its argv; fails with its error line if it exits."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    module = importlib.import_module(f"scripts.{script}")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *overrides, *paths(folder)])
    try:
        importlib.import_module("pipeline.stages.runner").run_stage(module.main)
    except SystemExit as exit_:
        raise AssertionError(f"{script} exited {exit_.code}: {capsys.readouterr().err[-2000:]}") from None


def run_both(folder: Path, overrides: tuple[str, ...], name: str, monkeypatch, capsys, prepare_as_process: bool = False) -> pd.DataFrame:
    if prepare_as_process:
        done = stage(folder, "prepare", *overrides)
        assert done.returncode == 0, done.stderr
    else:
        stage_here(folder, "prepare", *overrides, monkeypatch=monkeypatch, capsys=capsys)
    stage_here(folder, "groundtruth", *overrides, monkeypatch=monkeypatch, capsys=capsys)
    assert not (folder / "data" / name / "model.pt").exists()  # a model of the user's: nothing trained
    return pd.read_parquet(folder / "outputs" / "groundtruth" / f"{name}.parquet")


def test_an_image_folder_with_a_hugging_face_classifier(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    for c, name in enumerate(("cat", "dog", "fox")):
        (tmp_path / "images" / name).mkdir(parents=True)
        for i in range(4):  # mixed sizes: the benchmark resizes to benchmark.dataset.size
            Image.fromarray(rng.integers(0, 256, size=(20 + 4 * i, 24, 3), dtype=np.uint8)).save(tmp_path / "images" / name / f"{i}.png")
    torch.manual_seed(0)
    config = transformers.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
                                    num_attention_heads=2, intermediate_size=37, num_labels=3, initializer_range=0.5)
    transformers.ViTForImageClassification(config).save_pretrained(tmp_path / "vit")
    transformers.ViTImageProcessor(size={"height": 16, "width": 16}).save_pretrained(tmp_path / "vit")
    overrides = ("benchmark=image_folder", f"benchmark.dataset.root={tmp_path / 'images'}", "benchmark.dataset.size=32",
                 f"model.path={tmp_path / 'vit'}", "benchmark.perturbations=[brightness,pixelate]", "benchmark.levels=2")
    table = run_both(tmp_path, overrides, "image_folder", monkeypatch, capsys, prepare_as_process=True)
    assert len(table) == 4 and {"rho_ssim", "pareto_ssim"} <= set(table.columns)

    from pipeline.data.image_folder import ImageFolderDataSet
    from pipeline.models.hf_classifiers import HFImageClassifier

    images, labels = ImageFolderDataSet(str(tmp_path / "images"), size=32).test_set()
    clean = float(np.mean(HFImageClassifier(str(tmp_path / "vit")).predict_proba(images).argmax(1) == labels))
    assert table.loc[table["order"] == 0, "accuracy"].item() == pytest.approx(clean)


def test_a_text_file_with_a_hugging_face_sequence_classifier(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(1)
    rows = [{"text": " ".join(rng.choice(WORDS, size=6)), "label": ["neg", "pos"][i % 2]} for i in range(12)]
    (tmp_path / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", "!", "?", ";", ":", *WORDS])}
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=37, max_position_embeddings=64, num_labels=2, initializer_range=0.5)
    transformers.BertForSequenceClassification(config).save_pretrained(tmp_path / "bert")
    transformers.BertTokenizer(vocab=vocab).save_pretrained(tmp_path / "bert")
    overrides = ("benchmark=text_csv", f"benchmark.dataset.path={tmp_path / 'reviews.jsonl'}", f"model.path={tmp_path / 'bert'}",
                 "model.max_length=16", "benchmark.perturbations=[typo,punctuation]", "benchmark.levels=2", "fidelity=[chrf]")
    table = run_both(tmp_path, overrides, "text_csv", monkeypatch, capsys)
    assert len(table) == 4 and {"rho_chrf", "pareto_chrf"} <= set(table.columns)

    from pipeline.data.text_table import TextTableDataSet
    from pipeline.models.hf_classifiers import HFSequenceClassifier

    texts, labels = TextTableDataSet(str(tmp_path / "reviews.jsonl")).test_set()
    clean = float(np.mean(HFSequenceClassifier(str(tmp_path / "bert"), max_length=16).predict_proba(texts).argmax(1) == labels))
    assert table.loc[table["order"] == 0, "accuracy"].item() == pytest.approx(clean)


def test_a_data_set_read_in_place_is_recorded_so_its_edits_change_the_assets(tmp_path):
    """`prepare` records D's size and digest (`pipeline.benchmark.preparation.record_test_set`): the prepared folder, and so
    the ground truth's resume key (`asset_digest`), changes when an image of the folder does, and only then."""
    from pipeline.benchmark.preparation import record_test_set

    for name in ("a", "b"):
        (tmp_path / "images" / name).mkdir(parents=True)
        Image.fromarray(np.full((8, 8, 3), 40 if name == "a" else 200, dtype=np.uint8)).save(tmp_path / "images" / name / "0.png")
    spec = {"dataset": {"kind": "image_folder", "_target_": "pipeline.data.image_folder.ImageFolderDataSet",
                        "root": str(tmp_path / "images"), "size": None, "limit": None, "seed": 0}, "model": {}}
    assert record_test_set(spec, tmp_path / "d1") == {"n_test": 2, "n_classes": 2}
    record_test_set(spec, tmp_path / "d2")
    first = (tmp_path / "d1" / "test_set.json").read_text()
    assert first == (tmp_path / "d2" / "test_set.json").read_text()
    Image.fromarray(np.full((8, 8, 3), 41, dtype=np.uint8)).save(tmp_path / "images" / "a" / "0.png")
    record_test_set(spec, tmp_path / "d1")
    assert json.loads((tmp_path / "d1" / "test_set.json").read_text())["sha256"] != json.loads(first)["sha256"]
