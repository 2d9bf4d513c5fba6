"""The embedded text benchmark's data and model (TestNav §4.1, benchmark (ii), offline stand-in): BBC News
leads with stratified, seeded, nested splits; the frozen all-MiniLM-L6-v2 encoder (offline load, the
sentence embedding sentence-transformers computes, per-text determinism, caches); the logistic head."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.data.text_corpus import bbc_news_leads, load_text_splits
from pipeline.models.text_encoder import TextClassifier, TextEncoder, default_encoder, minilm_path, train_text_classifier

SENTENCES = [
    "Quarterly profits at US media giant TimeWarner jumped 76% to $1.13bn for the three months to December.",
    "The 21-year-old told a news conference in Cairo on Sunday that he is sorry.",
    "Mobile phones are set to become the main way people get online, a report says.",
    "Tony Blair has said he will serve a full third term if Labour wins the election.",
    "The Oscar-winning actress has signed up to star in a new film about a jazz singer.",
    "",
    "ok",
]


@pytest.fixture(scope="module")
def encoder() -> TextEncoder:
    return default_encoder()


# --- corpus -------------------------------------------------------------------------------------------


def test_bbc_news_leads_are_distinct_labelled_and_ordered() -> None:
    texts, labels, names = bbc_news_leads()
    assert names == ("business", "entertainment", "politics", "sports", "tech")
    assert len(texts) == len(set(texts)) == len(labels) == 2066
    assert np.bincount(labels).tolist() == [499, 362, 391, 488, 326]
    assert texts[0].startswith("Quarterly profits at US media giant TimeWarner jumped 76%")
    assert all("\ufffd" not in t for t in texts)  # sport/199 is Latin-1, decoded as such
    lengths = np.array([len(t.split()) for t in texts])
    assert 14 <= np.median(lengths) <= 30


def test_splits_are_disjoint_stratified_seeded_and_nested() -> None:
    full = load_text_splits(seed=0, test_size=None)
    sizes = {k: len(v[0]) for k, v in full.items()}
    assert sizes == {"train": 1446, "dev": 206, "test": 414}
    sets = {k: set(v[0]) for k, v in full.items()}
    assert not (sets["train"] & sets["dev"] or sets["train"] & sets["test"] or sets["dev"] & sets["test"])
    shares = np.bincount(full["test"][1]) / len(full["test"][1])
    assert np.allclose(shares, np.bincount(bbc_news_leads()[1]) / 2066, atol=0.01)

    small = load_text_splits(seed=0, test_size=60)
    assert small["train"][0] == full["train"][0] and small["dev"][0] == full["dev"][0]
    assert len(small["test"][0]) == 60 and set(small["test"][0]) <= sets["test"]
    assert np.bincount(small["test"][1]).tolist() == [15, 11, 11, 14, 9]
    assert load_text_splits(seed=0, test_size=60)["test"][0] == small["test"][0]
    assert load_text_splits(seed=1, test_size=60)["test"][0] != small["test"][0]
    with pytest.raises(ValueError, match="test_size"):
        load_text_splits(test_size=10_000)


# --- encoder ------------------------------------------------------------------------------------------


def test_sentence_embedding_is_sentence_transformers_one(encoder: TextEncoder) -> None:
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True)
    expected = reference.encode(SENTENCES, batch_size=4, convert_to_numpy=True)  # normalised by its Normalize module
    got = encoder.embed(SENTENCES)
    assert got.shape == (len(SENTENCES), 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_a_text_encodes_to_the_same_bits_whatever_else_is_in_the_call(encoder: TextEncoder) -> None:
    fresh = TextEncoder(cache_tokens=0)  # no cache: every call runs the model
    alone = [fresh.encode([t])[0] for t in SENTENCES]
    together = fresh.encode(SENTENCES[::-1])[::-1]
    for a, b in zip(alone, together):
        assert np.array_equal(a.sentence, b.sentence)
        assert a.tokens.shape == b.tokens.shape and bool((a.tokens == b.tokens).all())
    assert fresh.forward_texts == 2 * len(SENTENCES)
    assert alone[5].tokens.shape == (0, 384)  # the empty text: only [CLS] and [SEP]


def test_identical_strings_are_encoded_once_and_cached_across_calls() -> None:
    enc = TextEncoder()
    enc.encode([SENTENCES[0], SENTENCES[1], SENTENCES[0], SENTENCES[0]])
    assert enc.forward_texts == 2
    enc.encode([SENTENCES[1], SENTENCES[2]])
    assert enc.forward_texts == 3 and enc.hits >= 3
    a, b = SENTENCES[0], SENTENCES[1]
    size_a, size_b = (len(ids) for ids in enc.token_ids([a, b]))
    small = TextEncoder(cache_tokens=max(size_a, size_b))  # room for one of them: the older is evicted
    small.encode([a])
    small.encode([b])
    small.encode([a])
    assert small.forward_texts == 3 and small._cached_tokens <= max(size_a, size_b)


def test_worker_processes_give_the_bits_of_one_process_in_the_same_order() -> None:
    """Two spawned workers run the batches one process plans (same texts, same batches), so every encoding, the cache
    and its order match one process's, bit for bit on any host; a second call reuses the pool."""
    texts = [*SENTENCES, *(f"{s} Again, {i} times." for i, s in enumerate(SENTENCES[:5])), SENTENCES[0]]
    one, two = TextEncoder(batch_size=2), TextEncoder(batch_size=2, workers=2)
    for call in (texts[:9], texts):
        for a, b in zip(one.encode(call), two.encode(call)):
            assert np.array_equal(a.sentence, b.sentence) and np.array_equal(a.layers, b.layers)
            assert a.tokens.dtype == b.tokens.dtype and bool((a.tokens == b.tokens).all())
    assert two._pool is not None and list(one._cache) == list(two._cache) and one.forward_texts == two.forward_texts == 12


# --- classifier head ----------------------------------------------------------------------------------


def test_classifier_head_predicts_as_scikit_learn_and_beats_chance(encoder: TextEncoder) -> None:
    from sklearn.linear_model import LogisticRegression

    splits = load_text_splits(seed=0, test_size=40)
    texts, labels = splits["train"]
    keep = np.concatenate([np.flatnonzero(labels == c)[:24] for c in range(5)])  # 120 leads, 24 per section
    train_texts, train_labels = [texts[i] for i in keep], labels[keep]
    clf = train_text_classifier(train_texts, train_labels, encoder, C=10.0)
    test_texts, test_labels = splits["test"]
    sk = LogisticRegression(C=10.0, max_iter=2000).fit(encoder.embed(train_texts).astype(np.float64), train_labels)
    pred = clf.predict(test_texts)
    assert np.array_equal(pred, sk.predict(encoder.embed(test_texts).astype(np.float64)))
    np.testing.assert_allclose(clf.predict_proba(test_texts), sk.predict_proba(encoder.embed(test_texts).astype(np.float64)), atol=1e-9)
    assert np.mean(pred == test_labels) >= 0.7  # five balanced-ish classes: chance is about 0.24
    again = TextClassifier.from_state(clf.state(), encoder)
    assert np.array_equal(again.predict(test_texts), pred)
    with pytest.raises(ValueError, match="two classes"):
        train_text_classifier(train_texts[:3], np.zeros(3, dtype=int), encoder)


@pytest.mark.slow
def test_head_on_the_full_train_split_reaches_the_reported_clean_accuracy(encoder: TextEncoder) -> None:
    splits = load_text_splits(seed=0, test_size=None)
    clf = train_text_classifier(*splits["train"], encoder, C=10.0)
    assert np.mean(clf.predict(splits["dev"][0]) == splits["dev"][1]) >= 0.93
    assert np.mean(clf.predict(splits["test"][0]) == splits["test"][1]) >= 0.90  # measured 0.925 (414 leads)
