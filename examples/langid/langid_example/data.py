"""Real texts labelled by language: the fortune cookies of Debian's fortunes packages.

The test set ships with the example (`TEXTS`, `data/fortunes.tsv`: language, text; the packages' licences in
`data/NOTICE`), so the example needs no system package. It is the draw below with the defaults of
`FortunesTestSet`, made from Debian 12's packages by `python -m langid_example.data` (with the packages of
`SOURCES` installed: `apt-get install fortunes-de …`), which a user with those packages can also run with
other parameters (`FortunesTestSet(root=ROOT, …)`).

Each language's fortunes come from one Debian package (`SOURCES`). They are files of texts separated by lines
holding only `%` under /usr/share/games/fortunes. A fortune is kept when it is short:

- its attribution lines (those starting with `--`, e.g. "-- Robert Frost") are dropped, and so are
  backspace overstrikes (`_\\bx` is `x`); a file that is not UTF-8 is skipped whole;
- 1 to `max_lines` lines remain, joined with single spaces (all whitespace runs become one space);
- `min_chars` to `max_chars` characters long, at least 70% of its non-space characters letters (no
  ASCII art, tables or code), with no URL and no chat-log nickname such as `<nick>` (fortunes-pl quotes
  many English IRC lines).

The test set is `per_language` of those texts per language, drawn without replacement with
`numpy.random.default_rng(seed)` from the language's distinct texts in sorted order: balanced by language and
fixed by (the installed packages, the parameters). Inputs are grouped by language in the order of
`languages`; the label of a text is the index of its language in `languages` (int64).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

ROOT = "/usr/share/games/fortunes"
TEXTS = Path(__file__).resolve().parents[1] / "data" / "fortunes.tsv"

# language (ISO 639-1, as fastText names it) -> (Debian package, its fortune files or folders under ROOT)
SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "en": ("fortunes-min", ("fortunes", "literature", "riddles")),
    "de": ("fortunes-de", ("de",)),
    "es": ("fortunes-es", ("es",)),
    "it": ("fortunes-it", ("it",)),
    "pt": ("fortunes-br", ("brasil",)),
    "pl": ("fortunes-pl", ("pl",)),
    "ru": ("fortunes-ru", ("ru",)),
    "bg": ("fortunes-bg", ("bg",)),
}
LANGUAGES = tuple(SOURCES)

_SEPARATOR = re.compile(r"^%[ \t]*$", re.MULTILINE)
_ATTRIBUTION = re.compile(r"^\s*--")
_OVERSTRIKE = re.compile(".\b")
_MARKUP = re.compile(r"://|www\.|<[^<>\s]+>")  # URLs, chat-log <nick>s


def fortune_files(language: str, root: str | Path = ROOT) -> list[Path]:
    """The fortune files of `language`: its sources, each a file or a folder's plain files (no index `.dat`,
    no `.u8` links, no subfolders such as the offensive `off/`), in sorted order."""
    if language not in SOURCES:
        raise ValueError(f"language {language!r}: one of {', '.join(SOURCES)}")
    package, names = SOURCES[language]
    files = []
    for name in names:
        path = Path(root) / name
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.is_file() and not p.is_symlink() and p.suffix not in (".dat", ".u8"))
        elif path.is_file():
            files.append(path)
    if not files:
        raise FileNotFoundError(f"no fortunes for {language!r} under {root}: install Debian's {package} "
                                f"(`apt-get install {package}`), or use the shipped test set (root=None)")
    return files


def short_texts(raw: str, *, max_lines: int = 3, min_chars: int = 20, max_chars: int = 80) -> list[str]:
    """The short fortunes of one file's text, whitespace normalised (the rules of the module docstring)."""
    texts = []
    for chunk in _SEPARATOR.split(_OVERSTRIKE.sub("", raw)):
        lines = [line for line in chunk.splitlines() if line.strip() and not _ATTRIBUTION.match(line)]
        if not 1 <= len(lines) <= max_lines:
            continue
        text = " ".join(" ".join(lines).split())
        letters = sum(c.isalpha() for c in text)
        if min_chars <= len(text) <= max_chars and letters >= 0.7 * len(text.replace(" ", "")) and not _MARKUP.search(text):
            texts.append(text)
    return texts


def candidates(language: str, root: str | Path = ROOT, **rules: int) -> list[str]:
    """Every distinct short fortune of `language`, sorted."""
    found: set[str] = set()
    for path in fortune_files(language, root):
        try:
            raw = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # a legacy 8-bit file (one of fortunes-pl's): skipped whole
        found.update(short_texts(raw, **rules))
    return sorted(found)


class FortunesTestSet:
    """D: `per_language` short fortunes of each of `languages`, a fixed seeded draw (pipeline.plugins.protocols.DataSet).

    root None: the shipped draw (`TEXTS`), which holds the draw of the defaults and any leading subset of it
    (fewer languages, or the first `per_language` of each: a prefix of a draw without replacement is itself
    one); another draw is made from the fortunes installed under `root`."""

    def __init__(self, languages: list[str] | tuple[str, ...] = LANGUAGES, per_language: int = 50, seed: int = 0,
                 max_lines: int = 3, min_chars: int = 20, max_chars: int = 80, root: str | None = None):
        self.languages = list(languages)
        self.per_language = int(per_language)
        self.seed = int(seed)
        self.rules = {"max_lines": int(max_lines), "min_chars": int(min_chars), "max_chars": int(max_chars)}
        self.root = root

    def test_set(self) -> tuple[list[str], np.ndarray]:
        if self.root is None:
            return self._shipped()
        texts: list[str] = []
        labels: list[int] = []
        rng = np.random.default_rng(self.seed)
        for index, language in enumerate(self.languages):
            pool = candidates(language, self.root, **self.rules)
            if len(pool) < self.per_language:
                raise ValueError(f"{language!r} has {len(pool)} short fortunes, fewer than per_language={self.per_language}")
            texts += [pool[i] for i in rng.choice(len(pool), size=self.per_language, replace=False)]
            labels += [index] * self.per_language
        return texts, np.asarray(labels, dtype=np.int64)

    def _shipped(self) -> tuple[list[str], np.ndarray]:
        shipped = FortunesTestSet()
        if (self.seed, self.rules) != (shipped.seed, shipped.rules) or self.per_language > shipped.per_language:
            raise ValueError(f"the shipped test set is the draw of seed={shipped.seed}, per_language<={shipped.per_language} "
                             f"and {shipped.rules}; got seed={self.seed}, per_language={self.per_language}, {self.rules}: "
                             f"pass root={ROOT!r} with Debian's fortunes packages installed for another draw")
        unknown = [language for language in self.languages if language not in LANGUAGES]
        if unknown:
            raise ValueError(f"languages {unknown}: the shipped test set has {', '.join(LANGUAGES)}")
        rows = [line.split("\t", 1) for line in TEXTS.read_text(encoding="utf-8").splitlines()]
        texts, labels = [], []
        for index, language in enumerate(self.languages):
            texts += [text for lang, text in rows if lang == language][: self.per_language]
            labels += [index] * self.per_language
        return texts, np.asarray(labels, dtype=np.int64)


if __name__ == "__main__":  # rewrite the shipped test set from the installed packages
    texts, labels = FortunesTestSet(root=ROOT).test_set()
    TEXTS.parent.mkdir(exist_ok=True)
    TEXTS.write_text("".join(f"{LANGUAGES[label]}\t{text}\n" for text, label in zip(texts, labels)), encoding="utf-8")
    print(f"{len(texts)} texts -> {TEXTS}", file=sys.stderr)
