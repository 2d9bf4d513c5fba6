"""The classifier zoo of the records stage: every kind fits and returns class probabilities."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.models.zoo import KINDS, build_model, check_zoo, grey_features


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 20)
    images = np.zeros((60, 32, 32, 3), dtype=np.uint8)
    for i, y in enumerate(labels):                                       # class y lights up band y of the image
        images[i, :, 8 * y: 8 * y + 8] = 200
    images = np.clip(images + rng.integers(0, 40, images.shape), 0, 255).astype(np.uint8)
    return images, labels


@pytest.mark.parametrize("spec", [
    {"kind": "cnn", "width": 4, "epochs": 3, "seed": 0}, {"kind": "mlp", "hidden": 8, "seed": 0},
    {"kind": "logreg"}, {"kind": "forest", "n_estimators": 10}, {"kind": "knn", "n_neighbors": 3},
])
def test_every_kind_predicts_probabilities(toy, spec):
    images, labels = toy
    model = build_model({"name": "m", "family": "f", **spec}).fit(images, labels)
    proba = model.predict_proba(images)
    assert proba.shape == (60, 3) and np.allclose(proba.sum(axis=1), 1.0) and (proba >= 0).all()
    assert (proba.argmax(axis=1) == labels).mean() > 0.9                 # the toy task is easy


def test_zoo_specs_are_checked():
    assert set(KINDS) == {"cnn", "mlp", "logreg", "forest", "knn", "minilm_logreg", "minilm_mlp", "minilm_knn", "tfidf_logreg",
                          "tfidf_nb"}
    with pytest.raises(ValueError, match="unknown zoo model kind .*; valid choices: cnn, mlp"):
        build_model({"name": "m", "family": "f", "kind": "svm"})
    with pytest.raises(ValueError, match="lacks 'family'"):
        build_model({"name": "m", "kind": "knn"})
    with pytest.raises(ValueError, match="bad options"):
        build_model({"name": "m", "family": "f", "kind": "knn", "depth": 3})
    with pytest.raises(ValueError, match="repeated"):
        check_zoo([{"name": "a"}, {"name": "a"}])


def test_grey_features():
    images = np.zeros((2, 32, 32, 3), dtype=np.uint8)
    images[1, :4, :4] = 255
    feats = grey_features(images)
    assert feats.shape == (2, 64) and feats[0].max() == 0 and feats[1, 0] == 1.0 and feats[1, 1:].max() == 0
    with pytest.raises(ValueError, match="multiple"):
        grey_features(np.zeros((1, 30, 30, 3), dtype=np.uint8))


TOPICS = {0: ["the striker scored a late goal in the match", "the team won the league final on penalties",
              "fans cheered as the keeper saved the shot"],
          1: ["shares fell as the bank reported lower profits", "the market rallied after the interest rate cut",
              "investors sold stocks amid inflation fears"]}


@pytest.mark.parametrize("spec", [{"kind": "minilm_logreg", "C": 1.0}, {"kind": "minilm_mlp", "hidden": 8, "seed": 0},
                                  {"kind": "minilm_knn", "n_neighbors": 1}, {"kind": "tfidf_logreg"}, {"kind": "tfidf_nb"}])
def test_every_text_kind_predicts_probabilities(spec):
    texts = [t for y in TOPICS for t in TOPICS[y]]
    labels = np.repeat([0, 1], 3)
    model = build_model({"name": "m", "family": "f", **spec}).fit(texts, labels)
    proba = model.predict_proba(["the goalkeeper saved a penalty in the final", "profits fell and shares dropped"])
    assert proba.shape == (2, 2) and np.allclose(proba.sum(axis=1), 1.0) and (proba >= 0).all()
    assert list(proba.argmax(axis=1)) == [0, 1]                       # unseen sentences of each topic


def test_text_kinds_embed_with_the_benchmark_encoder():
    """The MiniLM kinds see exactly the text benchmark's sentence embedding (one shared, cached encoder)."""
    from pipeline.models.text_encoder import default_encoder

    texts = [t for y in TOPICS for t in TOPICS[y]]
    model = build_model({"name": "m", "family": "f", "kind": "minilm_knn", "n_neighbors": 1}).fit(texts, np.repeat([0, 1], 3))
    assert np.array_equal(model.features(texts), default_encoder().embed(texts))
    assert np.allclose(np.linalg.norm(model.features(texts), axis=1), 1.0)   # normalised: Euclidean order = cosine order


def test_recaptured_images_do_not_depend_on_the_workers(toy):
    """The recapture stage photographs its conditions over worker processes: the images are bit for bit those of one
    process (each condition a pure function of the images, the condition and the seed), keyed in condition order."""
    from pipeline.paired.records.zoo import recaptured_images
    from pipeline.perturb.recapture import make_condition

    images = toy[0][:12]
    conditions = [make_condition("l1", 1), make_condition("l5", 27), make_condition("l5", 14)]
    one = recaptured_images(images, conditions, seed=3)
    two = recaptured_images(images, conditions, seed=3, workers=2)
    assert list(two) == [c.name for c in conditions] == list(one)
    for name in one:
        np.testing.assert_array_equal(two[name], one[name])
    assert not np.array_equal(one[conditions[0].name], one[conditions[-1].name])  # the conditions differ
    with pytest.raises(ValueError, match="workers must be >= 0"):
        recaptured_images(images, conditions, seed=3, workers=-1)


def test_zoo_records_of_a_stream_are_the_records_of_each_model_on_each_condition(toy):
    """The recapture stage hands the zoo a stream of conditions computed on worker processes while the models train:
    the table is model-major, conditions in order, each row the model's own prediction, the same as from a mapping."""
    from pipeline.paired.records.pools import PoolImages
    from pipeline.paired.records.zoo import recaptured_images, recaptured_stream, zoo_records
    from pipeline.perturb.recapture import make_condition

    images, labels = toy
    pool = PoolImages(images[:12], labels[:12], np.array([f"i{k}" for k in range(12)]), np.array(["eval"] * 12))
    conditions = [make_condition("l1", 1), make_condition("l5", 27)]
    models = [{"name": "a", "family": "f", "kind": "cnn", "width": 4, "epochs": 2, "seed": 0},
              {"name": "b", "family": "g", "kind": "logreg"}]
    streamed, _ = zoo_records(models, (images, labels), pool, recaptured_stream(pool.images, conditions, 3, workers=2))
    shots = recaptured_images(pool.images, conditions, 3)
    mapped, _ = zoo_records(models, (images, labels), pool, shots)
    assert streamed.equals(mapped)
    assert list(streamed[["model", "condition"]].drop_duplicates().itertuples(index=False, name=None)) == [
        (m["name"], c.name) for m in models for c in conditions]
    for spec in models:
        model = build_model(spec).fit(images, labels)
        for c in conditions:
            rows = streamed[(streamed["model"] == spec["name"]) & (streamed["condition"] == c.name)]
            assert np.array_equal(rows["pert_pred"].to_numpy(), model.predict_proba(shots[c.name]).argmax(axis=1))
