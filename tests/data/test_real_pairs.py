"""The real pairs at a user's size (docs/real-models.md): their data sets as the set-up takes them out of packages,
their models' clean scores against the published figures, and the readers' refusals."""
from __future__ import annotations

import gzip
import json
import pickle
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pipeline.data.mnist_pickle import MNISTTestSet, load_mnist_test
from pipeline.data.vader_tweets import VaderTweetsTestSet, read_ratings

ROOT = Path(__file__).resolve().parents[2]


def test_ccexams_cnn_scores_9905_of_the_10000_mnist_test_digits():
    images, labels = MNISTTestSet().test_set()
    assert images.shape == (10_000, 28, 28, 3) and images.dtype == np.uint8 and np.bincount(labels).tolist()[:2] == [980, 1135]
    from pipeline.models.ccexam_mnist import CCExamMNIST

    model = CCExamMNIST()
    correct = model.predict_proba(images).argmax(1) == labels
    assert int(correct.sum()) == 9_905
    # what the benchmark feeds it: the digits padded to 32 x 32 for ImageNet-C (benchmark.adapt_inputs=pad)
    padded = np.pad(images[:512], ((0, 0), (2, 2), (2, 2), (0, 0)), mode="edge")
    assert np.array_equal(model.predict_proba(padded), model.predict_proba(images[:512]))


def test_the_pickle_decodes_to_the_digits_ccexam_ships_as_images():
    """An independent copy of the first test digit: the PNG in ccexam's samples, named by its index and label."""
    images, labels = load_mnist_test(MNISTTestSet().path)
    with files("ccexam").joinpath("samples/mnist_test_0_label_7.png").open("rb") as f:
        sample = np.asarray(Image.open(f).convert("L"))
    assert labels[0] == 7 and np.array_equal(sample, images[0])


def test_a_subset_is_seeded_and_keeps_file_order():
    x, y = MNISTTestSet(limit=1000, seed=0).test_set()
    x2, y2 = MNISTTestSet(limit=1000, seed=0).test_set()
    assert len(y) == 1000 and np.array_equal(x, x2) and np.array_equal(y, y2)
    assert not np.array_equal(y, MNISTTestSet(limit=1000, seed=1).test_set()[1])


def test_vader_reproduces_its_papers_f1_on_the_tweets_and_comes_near_its_correlation():
    """Hutto and Gilbert (2014), Table 3, tweets: F1 0.96 (two classes), r = 0.881 with the mean human rating. The
    lexicon of vaderSentiment 3.3.2 has changed since: r is 0.872 here."""
    from sklearn.metrics import f1_score

    from pipeline.models.vader_sentiment import VaderSentiment

    texts, ratings = read_ratings(VaderTweetsTestSet().path)
    assert len(texts) == 4_200 and int((ratings == 0).sum()) == 4
    model = VaderSentiment()
    assert np.corrcoef(model.compound(texts), ratings)[0, 1] == pytest.approx(0.8722, abs=5e-5)
    polar, labels = VaderTweetsTestSet().test_set()
    predicted = model.predict(polar)
    assert len(labels) == 4_196 and int((predicted == labels).sum()) == 4_034
    assert round(f1_score(labels, predicted, average="weighted"), 2) == 0.96


def _nielsen(path, x, y):
    blank = (np.zeros((1, 784), np.float32), np.zeros(1, np.int64))
    with gzip.open(path, "wb") as f:
        pickle.dump((blank, blank, (x, y)), f, protocol=4)  # protocol 2 from Python 3 wraps bytes in _codecs.encode


def test_the_mnist_reader_builds_arrays_and_refuses_anything_else(tmp_path):
    x = (np.arange(2 * 784) % 256).reshape(2, 784).astype(np.float32) / 256
    _nielsen(tmp_path / "ok.pkl.gz", x, np.array([3, 4]))
    images, _ = load_mnist_test(tmp_path / "ok.pkl.gz")
    assert images.dtype == np.uint8 and np.array_equal(images.reshape(2, 784), np.arange(2 * 784).reshape(2, 784) % 256)
    _nielsen(tmp_path / "scaled.pkl.gz", x * 256 / 255, np.array([3, 4]))  # pixels k/255: not this format
    with pytest.raises(ValueError, match="not Nielsen's MNIST test split"):
        load_mnist_test(tmp_path / "scaled.pkl.gz")

    class Shell:
        def __reduce__(self):
            import os

            return os.system, ("true",)

    with gzip.open(tmp_path / "bad.pkl.gz", "wb") as f:
        pickle.dump(Shell(), f, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match=r"posix\.system is not allowed in an MNIST pickle"):
        load_mnist_test(tmp_path / "bad.pkl.gz")


def test_the_ratings_reader_names_a_malformed_line(tmp_path):
    path = tmp_path / "tweets.txt"
    path.write_bytes(b"1\t2.5\tgood day\r\n2\t-1.2\tbad day\r\n3\t0\tmeh\r\n")
    texts, ratings = read_ratings(path)
    assert texts == ["good day", "bad day", "meh"] and ratings.tolist() == [2.5, -1.2, 0.0]
    polar, labels = VaderTweetsTestSet(path=str(path)).test_set()
    assert polar == ["good day", "bad day"] and labels.tolist() == [1, 0]
    path.write_bytes(b"1\t2.5\tgood day\r\n2\t-1.2\r\n")
    with pytest.raises(ValueError, match=r"tweets\.txt:2: expected 3 tab-separated fields"):
        read_ratings(path)


def test_a_missing_packaged_file_says_how_to_get_it(monkeypatch, tmp_path):
    from pipeline.data import packages

    monkeypatch.setattr(packages, "PACKAGES_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="make env"):
        MNISTTestSet()


def test_a_users_run_names_the_pair_by_its_benchmark(tmp_path):
    """`scripts/assess.py benchmark=tweets` as a user runs it (smaller: 60 tweets, 3 levels), in a folder of theirs;
    its clean score is VADER's own count on those tweets."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "assess.py"), "run=vader", "benchmark=tweets",
                           "benchmark.dataset.limit=60", "benchmark.levels=3", "workers=1", "paths.outputs=out"],
                          check=False, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "runs" / "vader" / "summary.json").read_text())
    from pipeline.models.vader_sentiment import VaderSentiment

    texts, labels = VaderTweetsTestSet(limit=60).test_set()
    assert summary["n_inputs"] == 60 and summary["space_size"] == 81
    assert summary["clean_score"] == float(np.mean(VaderSentiment().predict(texts) == labels))
