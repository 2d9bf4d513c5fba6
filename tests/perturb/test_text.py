"""Text families (TestNav §4.1: synonym, typo, contraction, punctuation; level k = k edits): exactly k
edits where the text allows and all possible ones where it allows fewer, edits of the right kind,
determinism in (text, level, seed) only, and the WordNet 3.0 layout for nltk."""
from __future__ import annotations

import random
import re
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import nltk
import numpy as np
import pytest

from pipeline.perturb import text
from pipeline.perturb import wordnet as wordnet_module
from pipeline.perturb.text import CONTRACTIONS, PUNCTUATION_MARKS, TOKEN_RE

SENTENCES = [
    "How do I learn to play the guitar quickly?",
    "What is the best way to lose weight fast?",
    "Why do people ask questions on Quora that can be easily answered by Google?",
    "It is not easy to find a good job in a big city.",
    "Which country has the most beautiful beaches in the world?",
    "I do not think that this phone will survive a long trip.",
    "Can you recommend a good book about ancient history and early civilizations?",
    "They are not sure whether the new policy will help small companies.",
    "What should I eat before running a marathon in cold weather?",
    "She is writing a long letter to her old friend from school.",
    "How can I improve my English speaking skills at home?",
    "We have not decided where we will spend the summer holiday.",
    "I am sure that it is not what they are looking for.",
    "You are right that we do not know what is going on.",
]
LEVELS = range(1, text.MAX_LEVEL + 1)


@pytest.fixture(scope="module")
def nltk_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("nltk_data")
    wordnet_module.ensure_wordnet(data_dir)
    return data_dir


@pytest.fixture(scope="module")
def wordnet(nltk_data: Path) -> Any:
    return wordnet_module.load_wordnet(nltk_data / "corpora" / "wordnet")


@pytest.fixture(scope="module")
def families(wordnet: Any) -> dict[str, Callable[[str, int, int], str]]:
    return {**text.APPLY, "synonym": lambda x, level, seed: text.synonym(x, level, seed, wordnet)}


def _changed_words(a: str, b: str) -> list[tuple[str, str]]:
    """Word pairs that differ, for edits that keep the token sequence (synonym, typo)."""
    ta, tb = TOKEN_RE.findall(a), TOKEN_RE.findall(b)
    assert len(ta) == len(tb)
    return [(x, y) for x, y in zip(ta, tb) if x != y]


def _marks(s: str) -> list[tuple[str, str]]:
    return re.findall(r"(\w+)([" + re.escape(PUNCTUATION_MARKS) + r"]*)", s)


def _is_one_typo(a: str, b: str) -> bool:
    """b is a with one deletion, insertion, substitution or swap of two neighbouring letters."""
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1:] == short for i in range(len(long)))


# --- WordNet layout ---------------------------------------------------------------------------------


def test_ensure_wordnet_lays_out_copies_and_lexnames(nltk_data: Path) -> None:
    corpus = nltk_data / "corpora" / "wordnet"
    for name in wordnet_module.WORDNET_FILES:
        copied = corpus / name
        assert copied.is_file() and not copied.is_symlink()
        assert copied.read_bytes() == (wordnet_module.WORDNET_SOURCE / name).read_bytes().replace(b"\r\n", b"\n")
    lines = (corpus / "lexnames").read_text().splitlines()
    assert len(lines) == 45
    for number, line in enumerate(lines):
        index, name, category = line.split("\t")
        assert int(index) == number and len(index) == 2
        assert int(category) == {"noun": 1, "verb": 2, "adj": 3, "adv": 4}[name.split(".")[0]]
    assert str(nltk_data.resolve()) in nltk.data.path
    stamps = {p.name: p.stat().st_mtime_ns for p in corpus.iterdir()}
    assert wordnet_module.ensure_wordnet(nltk_data) == corpus  # idempotent: nothing rewritten
    assert {p.name: p.stat().st_mtime_ns for p in corpus.iterdir()} == stamps
    (corpus / "lexnames").write_text("00\tadj.all\t3\n")
    (corpus / "adv.exc").unlink()
    wordnet_module.ensure_wordnet(nltk_data)  # damaged or missing files are rewritten
    assert (corpus / "lexnames").read_text() == wordnet_module.lexnames_text()
    assert (corpus / "adv.exc").read_bytes() == (wordnet_module.WORDNET_SOURCE / "adv.exc").read_bytes().replace(b"\r\n", b"\n")


def test_each_synset_sits_at_the_byte_offset_it_names(nltk_data: Path) -> None:
    """The release's DOS line ends are dropped, not its offsets moved: every synset line of the laid-out data files
    starts at the byte offset written at its start (what nltk seeks to)."""
    corpus = nltk_data / "corpora" / "wordnet"
    for name in ("data.noun", "data.verb", "data.adj", "data.adv"):
        position, synsets = 0, 0
        for line in (corpus / name).read_bytes().split(b"\n"):
            if line and not line.startswith(b"  "):  # the licence lines start with two spaces
                assert int(line[:8]) == position, (name, line[:40])
                synsets += 1
            position += len(line) + 1
        assert synsets > 3000


def test_lexnames_match_the_release() -> None:
    release = (wordnet_module.WORDNET_SOURCE / "lexnames").read_text().split()
    assert release == wordnet_module.lexnames_text().split()


def test_missing_wordnet_files_name_the_files_and_make_env(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="index.sense.*make env"):
        wordnet_module.ensure_wordnet(tmp_path / "out", source=tmp_path)
    with pytest.raises(FileNotFoundError, match="ensure_wordnet"):
        wordnet_module.load_wordnet(tmp_path)


def test_the_reader_uses_the_lexnames_and_the_sense_index(wordnet: Any) -> None:
    assert wordnet.get_version() == "3.0"
    assert wordnet.synset("dog.n.01").lexname() == "noun.animal"
    assert wordnet.synset("guitar.n.01").lexname() == "noun.artifact"
    assert wordnet.synset("run.v.01").lexname() == "verb.motion"
    assert wordnet.synset("quickly.r.01").lexname() == "adv.all"
    assert wordnet.lemma_from_key("dog%1:05:00::").synset() == wordnet.synset("dog.n.01")  # index.sense


def test_default_wordnet_lays_out_the_default_directory(monkeypatch: pytest.MonkeyPatch, wordnet: Any) -> None:
    data_dir = Path(wordnet.root.path).parents[1]
    monkeypatch.setattr(wordnet_module, "DEFAULT_NLTK_DATA", data_dir)
    wordnet_module.default_wordnet.cache_clear()
    try:
        assert wordnet_module.default_wordnet() is wordnet  # same corpus directory: the cached reader
        assert text.synonym(SENTENCES[0], 3, 0) == text.synonym(SENTENCES[0], 3, 0, wordnet)
    finally:
        wordnet_module.default_wordnet.cache_clear()


# --- synonym ------------------------------------------------------------------------------------------


def test_synonyms_follow_the_most_frequent_sense(wordnet: Any) -> None:
    assert text.synonyms("quickly", "r", wordnet) == ("apace", "rapidly", "speedily")
    assert text.synonyms("learn", "v", wordnet) == ("acquire", "larn")
    assert text.synonyms("learns", "v", wordnet) == ()  # an inflected form is not a lemma
    assert all(s.isalpha() and s.islower() for s in text.synonyms("car", "n", wordnet))


def test_synonym_replaces_exactly_k_eligible_words_by_synonyms(wordnet: Any) -> None:
    for sentence in SENTENCES:
        sites = text._synonym_sites(sentence, wordnet)
        eligible = {sentence[s:e]: c for s, e, c in sites}
        for level in LEVELS:
            for seed in range(3):
                changed = _changed_words(sentence, text.synonym(sentence, level, seed, wordnet))
                assert len(changed) == min(level, len(sites))  # all eligible words when fewer than k
                for old, new in changed:
                    assert new.lower() in eligible[old] and old.lower() not in text.STOPWORDS


def test_synonym_edits_only_content_words_and_keeps_case(wordnet: Any) -> None:
    sentence = "Learn it quickly, and do not stop."
    out = text.synonym(sentence, 5, 0, wordnet)
    changed = dict(_changed_words(sentence, out))
    assert set(changed) == {"Learn", "quickly", "stop"}  # "do" and "not" are stop words, "it"/"and" not content
    assert changed["Learn"][0].isupper() and changed["quickly"].islower()
    assert text.synonym("QUICKLY", 1, 0, wordnet).isupper()
    assert text.synonym("the of and, to.", 5, 0, wordnet) == "the of and, to."


# --- typo ---------------------------------------------------------------------------------------------


def test_typo_puts_one_typo_in_exactly_k_words() -> None:
    for sentence in SENTENCES:
        words = [w for w in TOKEN_RE.findall(sentence) if re.fullmatch(r"[A-Za-z]{2,}", w)]
        for level in LEVELS:
            for seed in range(5):
                out = text.typo(sentence, level, seed)
                changed = _changed_words(sentence, out)
                assert len(changed) == min(level, len(words))
                assert all(_is_one_typo(a, b) for a, b in changed)
                assert re.sub(r"[A-Za-z]", "", out) == re.sub(r"[A-Za-z]", "", sentence)  # rest untouched


def test_typo_with_fewer_words_than_the_level_edits_each_once() -> None:
    out = text.typo("Hi, I am 42.", 5, 0)
    changed = _changed_words("Hi, I am 42.", out)
    assert [a for a, _ in changed] == ["Hi", "am"]  # "I" and "42" are not eligible
    assert text.typo("a 1 ?", 3, 0) == "a 1 ?"
    for seed in range(50):  # a word of one repeated letter cannot be swapped, still gets a typo
        assert _is_one_typo("oo", text.typo("oo", 1, seed))


# --- contraction ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("expansion", sorted(CONTRACTIONS))
def test_every_table_entry_contracts(expansion: str) -> None:
    assert text.contraction(f"Then {expansion} here.", 1, 0) == f"Then {CONTRACTIONS[expansion]} here."


def test_contraction_overlaps_come_in_pairs() -> None:
    """What makes the greedy visit reach the largest number of edits: an overlap chain of three would
    need an entry whose first word ends another entry and whose last word starts another one."""
    pairs = [e.split() for e in CONTRACTIONS if " " in e]
    firsts, lasts = {p[0] for p in pairs}, {p[-1] for p in pairs}
    assert not [p for p in pairs if p[0] in lasts and p[-1] in firsts]


def test_contraction_counts_cases_and_overlaps() -> None:
    sentence = "It is not true that I do not care, and they are not late."
    for level in LEVELS:
        out = text.contraction(sentence, level, 3)
        assert out.count("'") == min(level, 3)  # "It is not" gives one edit: "It's not" or "It isn't"
    assert text.contraction(sentence, 5, 0).count("'") == 3
    assert {text.contraction("It is not", 2, s) for s in range(20)} == {"It's not", "It isn't"}
    assert text.contraction("DO NOT go", 1, 0) == "DON'T go"
    assert text.contraction("I am here", 1, 0) == "I'm here"
    assert text.contraction("Do  not\tgo", 1, 0) == "Don't\tgo"
    assert text.contraction("the dog is nothing", 5, 0) == "the dog is nothing"  # whole words only


# --- punctuation ----------------------------------------------------------------------------------------


def test_punctuation_edits_exactly_k_word_ends() -> None:
    for sentence in SENTENCES:
        words = len(re.findall(r"\w+", sentence))
        for level in LEVELS:
            for seed in range(5):
                out = text.punctuation(sentence, level, seed)
                before, after = _marks(sentence), _marks(out)
                assert [w for w, _ in before] == [w for w, _ in after]
                assert sum(m != n for (_, m), (_, n) in zip(before, after)) == min(level, words)
                assert len(out.split()) == len(sentence.split())  # marks attach to words


def test_punctuation_inserts_or_alters_and_stops_at_the_word_ends_available() -> None:
    assert text.punctuation("yes", 5, 0) in {f"yes{m}" for m in PUNCTUATION_MARKS}
    altered = {text.punctuation("yes.", 1, s) for s in range(30)}
    assert altered == {f"yes{m}" for m in PUNCTUATION_MARKS if m != "."}
    assert text.punctuation("Hi, you", 5, 0).count(" ") == 1 and len(text.punctuation("Hi, you", 5, 0)) == 8
    out = text.punctuation("3.5 (x)", 5, 0)  # no word end inside a number or before ")"
    assert out[:3] == "3.5" and out[3] in PUNCTUATION_MARKS and out[4:] == " (x)"
    assert text.punctuation("", 3, 0) == "" and text.punctuation("?!", 3, 0) == "?!"


# --- all families ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", text.FAMILIES)
def test_level_zero_is_the_identity(name: str, families: dict) -> None:
    for sentence in SENTENCES:
        assert families[name](sentence, 0, 7) is sentence


@pytest.mark.parametrize("name", text.FAMILIES)
def test_higher_levels_change_more_and_keep_lower_levels_edits(name: str, families: dict) -> None:
    def edits(a: str, b: str) -> set:
        if name == "punctuation":
            return {i for i, (x, y) in enumerate(zip(_marks(a), _marks(b))) if x != y}
        if name == "contraction":
            return set(re.findall(r"\w+'\w+", b))
        return {(i, y) for i, (x, y) in enumerate(zip(TOKEN_RE.findall(a), TOKEN_RE.findall(b))) if x != y}

    means = []
    for level in LEVELS:
        counts = []
        for sentence in SENTENCES:
            for seed in range(3):
                lower = edits(sentence, families[name](sentence, level - 1, seed))
                current = edits(sentence, families[name](sentence, level, seed))
                assert lower <= current  # same seed: level k's edits are among level k+1's
                counts.append(len(current))
        means.append(np.mean(counts))
    if name == "contraction":  # these sentences hold at most three expansions each
        assert means[0] < means[1] < means[2] and means[2:] == sorted(means[2:]), means
    else:
        assert all(a < b for a, b in pairwise(means)), means


def test_results_depend_only_on_text_level_and_seed(families: dict) -> None:
    calls = [(n, i, lvl, s) for n in text.FAMILIES for i in range(0, 14, 3) for lvl in (1, 4) for s in (0, 11)]
    first = {c: families[c[0]](SENTENCES[c[1]], c[2], c[3]) for c in calls}
    shuffled = calls[:]
    random.Random(2).shuffle(shuffled)
    state, np_state = random.getstate(), np.random.get_state()
    for c in shuffled:  # interleaved, with the global generators reseeded in between
        random.seed(c[3] + 99)
        np.random.seed(c[2] + 5)
        assert families[c[0]](SENTENCES[c[1]], c[2], c[3]) == first[c]
    random.setstate(state)
    np.random.set_state(np_state)
    for name in text.FAMILIES:  # the global generators are not advanced either
        before = random.getstate()
        families[name](SENTENCES[5], 3, 1)
        assert random.getstate() == before
    assert len({families["typo"](SENTENCES[0], 3, s) for s in range(10)}) > 1


@pytest.mark.parametrize("name", text.FAMILIES)
@pytest.mark.parametrize("level", [-1, 6, 2.5, True, "2"])
def test_bad_levels_name_the_level_and_the_valid_range(name: str, level: Any, families: dict) -> None:
    with pytest.raises(ValueError, match=r"level.*0\.\.5") as error:
        families[name](SENTENCES[0], level, 0)
    assert repr(level) in str(error.value) or str(level) in str(error.value)


@pytest.mark.parametrize("name", text.FAMILIES)
def test_bad_seeds_and_inputs_are_errors(name: str, families: dict) -> None:
    with pytest.raises(ValueError, match="seed"):
        families[name](SENTENCES[0], 1, -3)
    with pytest.raises(TypeError, match="str"):
        families[name](b"bytes", 1, 0)
    assert families[name](SENTENCES[0], np.int64(2), np.uint32(5)) == families[name](SENTENCES[0], 2, 5)
