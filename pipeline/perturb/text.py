"""Text perturbation families of the paraphrase-detection benchmark (TestNav §4.1, benchmark (ii)).

The paper applies synonym replacement, typos, contractions and punctuation with TextAttack, where
"levels 1–5 correspond to applying one to five edits". Each family here is a pure function
`family(text, level, seed) -> str`: level 0 returns the text itself, level k in 1..5 makes k edits at k
distinct places of the text, and the result depends only on (text, level, seed).

Edits and their places (a "word" is a maximal run of `\\w` characters, apostrophes inside allowed):

- `synonym`: a content word is replaced by a one-word WordNet 3.0 synonym of the same part of speech,
  taken from its most frequent sense that has one (TextAttack's WordSwapWordNet draws from WordNet too,
  pooling all senses). Parts of speech come from textblob's pattern tagger, which runs offline
  (nltk's own tagger data cannot be installed here). Only nouns, verbs, adjectives and adverbs (tags NN,
  NNS, VB, VBP, JJ, RB) that are themselves a lemma of that sense (so `learn`, not `learns`: WordNet
  lemmas are base forms) and are not in `STOPWORDS` are replaced, by lower-case one-word lemmas; the
  case pattern of the replaced word is kept.
- `typo`: one keyboard typo in a word of two or more ASCII letters: two different neighbouring letters
  swapped, a letter deleted, a letter replaced by a QWERTY neighbour, or a QWERTY neighbour of a letter
  inserted after it (the four character edits of TextAttack's CharSwapAugmenter, the keyboard ones with
  QWERTY neighbours as in its WordSwapQWERTY).
- `contraction`: an expansion listed in `CONTRACTIONS` ("do not", "it is", …) is contracted
  ("don't", "it's", …); matches are case-insensitive, whole words, and keep the case of the first letter.
- `punctuation`: at the end of a word followed by whitespace or the end of the text, a mark from
  `PUNCTUATION_MARKS` is inserted; where such a word already ends in marks, the first is replaced by a
  different one (TextAttack's WordSwapPunctuationCharacterInsertion inserts after words as well).

When the text allows fewer than k edits (fewer eligible words, expansions or word ends), every possible
edit is made and no more: the families never fail and never edit one place twice. The places are visited
in one seeded random order and each edit's random choices are drawn in that order, so level k+1 makes the
edits of level k plus one more (same seed).

Sequence pairs (QQP's question pairs, a tuple of two strings): `APPLY` gives each question of a pair k
edits with a seed of its own (`pipeline.perturb.text_pairs`, which says why); strings are edited as above.

Randomness: a private `random.Random(seed)` from which only `random()` is drawn (the one stream Python
guarantees across versions); no global RNG is read or changed. WordNet is read with nltk's reader from a
project-local nltk data directory that `pipeline.perturb.wordnet.ensure_wordnet` lays out from Princeton's
release, which `make env` takes from the Python package index.
"""
from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pipeline.perturb.levels import MAX_LEVEL, check_level, check_seed  # noqa: F401  (MAX_LEVEL: the family's levels)
from pipeline.perturb.wordnet import default_wordnet
from pipeline.perturb.text_pairs import on_pairs

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

FAMILIES = ("synonym", "typo", "contraction", "punctuation")

# ---------------------------------------------------------------------------------------------------
# Levels, seeds, randomness
# ---------------------------------------------------------------------------------------------------


def _check_text(text: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")


def _index(rng: random.Random, n: int) -> int:
    """A uniform index in range(n) from one `random()` draw."""
    return min(int(rng.random() * n), n - 1)


def _order(rng: random.Random, n: int) -> list[int]:
    """A uniformly random order of range(n) from n `random()` draws (sort by random keys)."""
    keys = [rng.random() for _ in range(n)]
    return sorted(range(n), key=keys.__getitem__)


def _replace_spans(text: str, edits: dict[tuple[int, int], str]) -> str:
    """`text` with each non-overlapping span (start, end) replaced by its string."""
    out, last = [], 0
    for (start, end), new in sorted(edits.items()):
        out.append(text[last:start])
        out.append(new)
        last = end
    out.append(text[last:])
    return "".join(out)


def _match_case(original: str, replacement: str) -> str:
    """`replacement` in the case pattern of `original`: ALL CAPS, Capitalised or as is."""
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


TOKEN_RE = re.compile(r"\w+(?:'\w+)*|[^\w\s]")  # words (with inner apostrophes) and single symbols

# ---------------------------------------------------------------------------------------------------
# Synonym substitution
# ---------------------------------------------------------------------------------------------------

# Penn Treebank tags of replaceable words -> WordNet part of speech. Proper nouns (NNP, NNPS), comparatives
# and superlatives (JJR, JJS, RBR, RBS) and inflected verbs (VBD, VBG, VBN, VBZ) are not replaced.
_WORDNET_POS = {"NN": "n", "NNS": "n", "VB": "v", "VBP": "v", "JJ": "a", "RB": "r"}
# Words never replaced although tagged as content words: auxiliaries, light verbs and function adverbs,
# whose WordNet senses ("do" -> "perform", "not" -> "non") rarely fit the sentence.
STOPWORDS = frozenset((
    "be", "am", "is", "are", "was", "were", "been", "being", "have", "has", "had", "having",
    "do", "does", "did", "doing", "done", "get", "gets", "got", "getting", "go", "goes", "went",
    "make", "makes", "made", "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "ought", "need", "dare", "not", "no", "nor", "so", "too", "very", "also", "just", "only", "even",
    "still", "yet", "ever", "never", "always", "often", "then", "than", "there", "here", "now",
    "how", "what", "why", "when", "where", "who", "whom", "whose", "which", "well", "much", "many",
    "more", "most", "less", "least", "else",
))
_lookup_lock = threading.Lock()


def _tags(tokens: Sequence[str]) -> list[str]:
    """Penn Treebank tags of `tokens` from textblob's pattern tagger (offline, deterministic)."""
    from textblob.en import tag

    if not tokens:
        return []
    tagged = tag(" ".join(tokens), tokenize=False)
    if len(tagged) != len(tokens):
        raise RuntimeError(f"the tagger returned {len(tagged)} tags for {len(tokens)} tokens")
    return [t for _, t in tagged]


@lru_cache(maxsize=65536)
def _synonyms_cached(wordnet: WordNetCorpusReader, word: str, pos: tuple[str, ...]) -> tuple[str, ...]:
    for synset in wordnet.synsets(word):  # most frequent sense first (WordNet's sense order)
        names = synset.lemma_names()
        if synset.pos() not in pos or word not in (name.lower() for name in names):
            continue  # another part of speech, or `word` is only an inflected form of this sense's lemmas
        found = {n for n in names if n.isascii() and n.isalpha() and n.islower() and n != word}
        if found:
            return tuple(sorted(found))
    return ()


def synonyms(word: str, pos: str, wordnet: WordNetCorpusReader) -> tuple[str, ...]:
    """Sorted lower-case one-word WordNet synonyms of `word` as part of speech `pos` (n, v, a, r).

    The synonyms are those of the most frequent sense (WordNet lists senses by frequency in its sense-
    tagged corpora) of which `word` itself is a lemma and which has at least one one-word synonym, a
    first-sense rule that keeps the meaning more often than pooling all senses; multi-word, hyphenated
    and capitalised lemmas (proper names) are left out. Empty when no sense qualifies.
    """
    with _lookup_lock:  # nltk's reader seeks in shared file handles
        return _synonyms_cached(wordnet, word.lower(), ("a", "s") if pos == "a" else (pos,))


def _synonym_sites(text: str, wordnet: WordNetCorpusReader) -> list[tuple[int, int, tuple[str, ...]]]:
    matches = list(TOKEN_RE.finditer(text))
    tags = _tags([m.group() for m in matches])
    sites = []
    for match, penn in zip(matches, tags, strict=True):
        word = match.group()
        if penn not in _WORDNET_POS or not (word.isascii() and word.isalpha()):
            continue
        if len(word) < 2 or word.lower() in STOPWORDS:
            continue
        candidates = synonyms(word, _WORDNET_POS[penn], wordnet)
        if candidates:
            sites.append((match.start(), match.end(), candidates))
    return sites


def synonym(text: str, level: int, seed: int, wordnet: WordNetCorpusReader | None = None) -> str:
    """Replace `level` content words by WordNet synonyms (TestNav §4.1: synonym replacement, k edits).

    Eligible words are described in the module docstring; with fewer than `level` eligible words, all of
    them are replaced. `wordnet` defaults to `default_wordnet()`.
    """
    level, seed = check_level(level), check_seed(seed)
    _check_text(text)
    if level == 0:
        return text
    sites = _synonym_sites(text, wordnet if wordnet is not None else default_wordnet())
    rng = random.Random(seed)
    edits = {}
    for i in _order(rng, len(sites))[:level]:
        start, end, candidates = sites[i]
        edits[(start, end)] = _match_case(text[start:end], candidates[_index(rng, len(candidates))])
    return _replace_spans(text, edits)


# ---------------------------------------------------------------------------------------------------
# Typos
# ---------------------------------------------------------------------------------------------------

QWERTY_NEIGHBOURS = {
    "q": "wa", "w": "qeas", "e": "wrsd", "r": "etdf", "t": "ryfg", "y": "tugh", "u": "yihj", "i": "uojk",
    "o": "ipkl", "p": "ol", "a": "qwsz", "s": "awedxz", "d": "serfcx", "f": "drtgvc", "g": "ftyhbv",
    "h": "gyujnb", "j": "huikmn", "k": "jiolm", "l": "kop", "z": "asx", "x": "zsdc", "c": "xdfv",
    "v": "cfgb", "b": "vghn", "n": "bhjm", "m": "njk",
}
TYPO_KINDS = ("swap", "delete", "substitute", "insert")
_ASCII_WORD = re.compile(r"[A-Za-z]{2,}")


def _neighbour(rng: random.Random, letter: str) -> str:
    keys = QWERTY_NEIGHBOURS[letter.lower()]
    key = keys[_index(rng, len(keys))]
    return key.upper() if letter.isupper() else key


def typo_word(word: str, rng: random.Random) -> str:
    """`word` (two or more ASCII letters) with one keyboard typo; always differs from `word`."""
    swaps = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
    kinds = [kind for kind in TYPO_KINDS if kind != "swap" or swaps]
    kind = kinds[_index(rng, len(kinds))]
    if kind == "swap":
        i = swaps[_index(rng, len(swaps))]
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    i = _index(rng, len(word))
    if kind == "delete":
        return word[:i] + word[i + 1:]
    if kind == "substitute":
        return word[:i] + _neighbour(rng, word[i]) + word[i + 1:]
    return word[: i + 1] + _neighbour(rng, word[i]) + word[i + 1:]


def typo(text: str, level: int, seed: int) -> str:
    """Put one keyboard typo in each of `level` words (TestNav §4.1: typos, k edits).

    Eligible words are tokens of two or more ASCII letters (words with digits, apostrophes or other
    letters are skipped); with fewer than `level` of them, each gets one typo.
    """
    level, seed = check_level(level), check_seed(seed)
    _check_text(text)
    if level == 0:
        return text
    sites = [(m.start(), m.end()) for m in TOKEN_RE.finditer(text) if _ASCII_WORD.fullmatch(m.group())]
    rng = random.Random(seed)
    edits = {}
    for i in _order(rng, len(sites))[:level]:
        start, end = sites[i]
        edits[(start, end)] = typo_word(text[start:end], rng)
    return _replace_spans(text, edits)


# ---------------------------------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------------------------------

CONTRACTIONS = {
    "are not": "aren't", "cannot": "can't", "can not": "can't", "could not": "couldn't",
    "did not": "didn't", "does not": "doesn't", "do not": "don't", "had not": "hadn't",
    "has not": "hasn't", "have not": "haven't", "is not": "isn't", "must not": "mustn't",
    "need not": "needn't", "should not": "shouldn't", "was not": "wasn't", "were not": "weren't",
    "will not": "won't", "would not": "wouldn't",
    "i am": "i'm", "i have": "i've", "i will": "i'll", "i would": "i'd",
    "you are": "you're", "you have": "you've", "you will": "you'll", "you would": "you'd",
    "he is": "he's", "he will": "he'll", "he would": "he'd",
    "she is": "she's", "she will": "she'll", "she would": "she'd",
    "it is": "it's", "it will": "it'll",
    "we are": "we're", "we have": "we've", "we will": "we'll", "we would": "we'd",
    "they are": "they're", "they have": "they've", "they will": "they'll", "they would": "they'd",
    "that is": "that's", "there is": "there's", "here is": "here's", "let us": "let's",
    "what is": "what's", "who is": "who's", "where is": "where's", "how is": "how's",
}
_EXPANSION_RE = re.compile(
    r"\b(?:" + "|".join(r"\s+".join(map(re.escape, e.split())) for e in sorted(CONTRACTIONS, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


def _contraction_sites(text: str) -> list[tuple[int, int]]:
    """Spans of every expansion in `text`, overlapping ones included ("it is not": "it is", "is not")."""
    sites, pos = [], 0
    while (match := _EXPANSION_RE.search(text, pos)) is not None:
        sites.append((match.start(), match.end()))
        pos = match.start() + 1
    return sites


def contract(expansion: str) -> str:
    """The contraction of one matched expansion, keeping ALL CAPS or a capital first letter."""
    return _match_case(expansion, CONTRACTIONS[" ".join(expansion.lower().split())])


def contraction(text: str, level: int, seed: int) -> str:
    """Contract `level` expansions listed in `CONTRACTIONS` (TestNav §4.1: contractions, k edits).

    Expansions are visited in a seeded random order and contracted unless they overlap one already
    contracted ("it is not" allows one edit, "it's not" or "it isn't"); when fewer than `level` can be
    contracted, all that can are. (In this table overlaps come in pairs, never chains of three, so this
    greedy visit always reaches the largest possible number of edits.)
    """
    level, seed = check_level(level), check_seed(seed)
    _check_text(text)
    if level == 0:
        return text
    sites = _contraction_sites(text)
    rng = random.Random(seed)
    chosen: list[tuple[int, int]] = []
    for i in _order(rng, len(sites)):
        start, end = sites[i]
        if all(end <= s or start >= e for s, e in chosen):
            chosen.append((start, end))
            if len(chosen) == level:
                break
    return _replace_spans(text, {(s, e): contract(text[s:e]) for s, e in chosen})


# ---------------------------------------------------------------------------------------------------
# Punctuation
# ---------------------------------------------------------------------------------------------------

PUNCTUATION_MARKS = ",.;:!?"
_WORD_END_RE = re.compile(r"\w(?:'\w+)*([" + re.escape(PUNCTUATION_MARKS) + r"]*)(?=\s|$)")


def _punctuation_sites(text: str) -> list[tuple[int, str]]:
    """(position, existing mark or '') after every word that ends before whitespace or the text's end."""
    sites = []
    for match in _WORD_END_RE.finditer(text):
        marks = match.group(1)
        sites.append((match.start(1), marks[:1]))
    return sites


def punctuation(text: str, level: int, seed: int) -> str:
    """Insert or alter a punctuation mark at `level` word ends (TestNav §4.1: punctuation, k edits).

    A word end is the end of a word followed by whitespace or the end of the text, possibly after marks
    from `PUNCTUATION_MARKS`: without a mark one is inserted ("guitar quickly" -> "guitar, quickly"),
    with marks the first is replaced by a different one ("easy." -> "easy!"). With fewer than `level`
    word ends, all of them are edited.
    """
    level, seed = check_level(level), check_seed(seed)
    _check_text(text)
    if level == 0:
        return text
    sites = _punctuation_sites(text)
    rng = random.Random(seed)
    edits = {}
    for i in _order(rng, len(sites))[:level]:
        position, existing = sites[i]
        marks = [m for m in PUNCTUATION_MARKS if m != existing]
        edits[(position, position + len(existing))] = marks[_index(rng, len(marks))]
    return _replace_spans(text, edits)


# The families as the registry applies them: a QQP question pair gets the family on each question
# (`pipeline.perturb.text_pairs.on_pairs`: k edits per question, a seed per side); a string is passed through as is.
APPLY: dict[str, Callable[[Any, int, int], Any]] = {
    name: on_pairs(family)
    for name, family in (("synonym", synonym), ("typo", typo), ("contraction", contraction), ("punctuation", punctuation))
}
