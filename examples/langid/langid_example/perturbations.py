"""Three perturbation families of the example's own (pipeline.plugins.protocols.Perturbation), each a way real text
departs from the clean form a language identifier expects:

- `StripDiacritics` ("strip_diacritics"): accents dropped from Latin letters, as typed on a keyboard
  without them ("Müßiggang" -> "Mussiggang", "ação" -> "acao", "łódź" -> "lodz"). Level k strips them in a
  share k/5 of the words that carry any (level 5: every such word). Cyrillic letters are left alone.
- `Homoglyphs` ("homoglyphs"): letters replaced by their look-alikes in the other script, Latin <-> Cyrillic
  ("o" -> "о", "р" -> "p"), the classic evasion of text filters (the text reads the same, its code points
  do not). Level k replaces a share k/10 of the letters that have a look-alike (level 5: half of them).
- `EnglishWords` ("english_words"): code-switching, k common English loanwords ("weekend", "okay", …)
  inserted at k distinct word boundaries at level k (the words then joined with single spaces).

Level 0 is the identity. Places are drawn with `numpy.random.default_rng(seed)` as one random order of
the eligible places, and level k takes the first places of that order, so level k+1 edits the places of
level k and more (same seed). Each text is perturbed alone, with the seed the library gives it.
"""
from __future__ import annotations

import math
import re
import unicodedata

import numpy as np

# Latin letters with a stroke or a ligature, which Unicode does not decompose into letter + mark
_NO_DECOMPOSITION = {"ß": "ss", "ẞ": "SS", "ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ħ": "h", "Ħ": "H"}

# Latin <-> Cyrillic look-alikes (Cyrillic of Russian and Bulgarian, the Ukrainian і and the Serbian ј)
_LATIN_TO_CYRILLIC = {
    "a": "а", "c": "с", "e": "е", "i": "і", "j": "ј", "o": "о", "p": "р", "x": "х", "y": "у",
    "A": "А", "B": "В", "C": "С", "E": "Е", "H": "Н", "I": "І", "K": "К", "M": "М", "O": "О", "P": "Р", "T": "Т", "X": "Х",
}
LOOKALIKES = {**_LATIN_TO_CYRILLIC, **{c: lat for lat, c in _LATIN_TO_CYRILLIC.items()}}

# English loanwords common in the other languages' everyday text
LOANWORDS = ("okay", "cool", "weekend", "meeting", "email", "team", "online", "party", "sorry", "job", "shopping",
             "computer", "baby", "fan", "show", "manager", "software", "football", "cocktail", "jeans")

_WORD = re.compile(r"\S+")


def _first_places(n: int, count: int, rng: np.random.Generator) -> list[int]:
    """The first `count` places of a random order of range(n) (all n when count > n)."""
    return [int(i) for i in rng.permutation(n)[:count]]


class _Family:
    """What the three families share: the protocol's attributes and the level check."""

    name = ""
    modality = "text"
    max_level = 5

    def apply(self, x: str, level: int, seed: int) -> str:
        if not 0 <= level <= self.max_level:
            raise ValueError(f"level {level} of {self.name!r} is outside 0..{self.max_level}")
        if not isinstance(x, str):
            raise TypeError(f"{self.name!r} perturbs a str, got {type(x).__name__}")
        return x if level == 0 else self._apply(x, level, np.random.default_rng(seed))

    def _apply(self, x: str, level: int, rng: np.random.Generator) -> str:
        raise NotImplementedError


def strip_word(word: str) -> str:
    """`word` with the diacritics of its Latin letters removed (marks dropped after Unicode decomposition)."""
    out = []
    for char in word:
        parts = unicodedata.normalize("NFD", char)
        if char in _NO_DECOMPOSITION:
            out.append(_NO_DECOMPOSITION[char])
        elif len(parts) > 1 and unicodedata.name(parts[0], "").startswith("LATIN"):
            out.append("".join(p for p in parts if not unicodedata.combining(p)))
        else:
            out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


class StripDiacritics(_Family):
    """Accents dropped from a share level/5 of the words that carry them."""

    name = "strip_diacritics"

    def _apply(self, x: str, level: int, rng: np.random.Generator) -> str:
        words = [(m.start(), m.end(), strip_word(m.group())) for m in _WORD.finditer(x)]
        words = [w for w in words if w[2] != x[w[0]:w[1]]]
        out, last = [], 0
        for i in sorted(_first_places(len(words), math.ceil(len(words) * level / self.max_level), rng)):
            start, end, stripped = words[i]
            out += [x[last:start], stripped]
            last = end
        return "".join(out) + x[last:]


class Homoglyphs(_Family):
    """A share level/10 of the letters with a look-alike in the other script replaced by it."""

    name = "homoglyphs"
    share_per_level = 0.1

    def _apply(self, x: str, level: int, rng: np.random.Generator) -> str:
        places = [i for i, c in enumerate(x) if c in LOOKALIKES]
        chars = list(x)
        for j in _first_places(len(places), math.ceil(len(places) * level * self.share_per_level), rng):
            chars[places[j]] = LOOKALIKES[chars[places[j]]]
        return "".join(chars)


class EnglishWords(_Family):
    """`level` English loanwords inserted at distinct word boundaries (the start and the end included)."""

    name = "english_words"

    def _apply(self, x: str, level: int, rng: np.random.Generator) -> str:
        words = x.split()
        gaps = _first_places(len(words) + 1, level, rng)
        picks = [LOANWORDS[i] for i in rng.integers(len(LOANWORDS), size=len(gaps))]
        for gap, word in sorted(zip(gaps, picks), reverse=True):
            words.insert(gap, word)
        return " ".join(words)
