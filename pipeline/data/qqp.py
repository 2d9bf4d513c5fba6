"""Quora Question Pairs (QQP) from a local copy (TestNav §4.1, benchmark (ii): paraphrase detection on 1,000
QQP pairs). Nothing is downloaded; two layouts are read:

- A GLUE copy: `<root>/QQP/dev.tsv` or `<root>/dev.tsv`, tab-separated, unquoted (questions may hold quote
  characters; they are read as text, as GLUE's own processors read them with quoting off), UTF-8, with the
  header `id qid1 qid2 question1 question2 is_duplicate` and `is_duplicate` 0 or 1 (1 = the two questions
  have the same meaning). GLUE's QQP dev split has 40,430 pairs.
- A Hugging Face `datasets` folder written by `save_to_disk` of `glue`/`qqp` (a `DatasetDict`, whose
  `validation` split is used, or one `Dataset`), columns `question1`, `question2`, `label` (ClassLabel
  0 not_duplicate, 1 duplicate) and `idx`; read with `datasets.load_from_disk`, so it needs the package
  `datasets`. Its validation split is GLUE's dev.tsv in file order.

The labelled dev (validation) split is used: GLUE's test labels are not public (-1 in `datasets`).

Subset: the first `limit` pairs of the split, in file order (the paper's D: 1,000). First-N rather than a
seeded stratified sample: GLUE's dev file is already in shuffled order (its class ratio holds in its
prefixes up to sampling noise), the same N pairs come out of both layouts, the subsets are nested (the
first 100 are part of the first 1,000) and no library's random stream enters. A split with fewer than
`limit` pairs is an error, so a D of "1,000 pairs" always is one.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from pipeline.perturb.text_pairs import TextPair

GLUE_HEADER = ("id", "qid1", "qid2", "question1", "question2", "is_duplicate")
GLUE_FILES = ("QQP/dev.tsv", "dev.tsv")  # relative to the root, first found is read
DATASETS_SPLIT = "validation"
PAPER_LIMIT = 1000


def _labels(values: list[object], where: str) -> np.ndarray:
    bad = next((i for i, v in enumerate(values) if str(v).strip() not in ("0", "1")), None)
    if bad is not None:
        raise ValueError(f"{where}: label {values[bad]!r} of pair {bad} is not 0 or 1 (QQP's is_duplicate / label)")
    return np.asarray([int(str(v).strip()) for v in values], dtype=np.int64)


def read_glue_tsv(path: str | Path, limit: int | None = None) -> tuple[list[TextPair], np.ndarray]:
    """The first `limit` (None = all) pairs of a GLUE QQP TSV file and their is_duplicate labels."""
    path = Path(path)
    pairs: list[TextPair] = []
    labels: list[object] = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != GLUE_HEADER:
            raise ValueError(f"{path}:1: header {header!r} is not GLUE's QQP header {list(GLUE_HEADER)!r} (tab-separated)")
        for row in reader:
            if limit is not None and len(pairs) == limit:
                break
            if len(row) != len(GLUE_HEADER):
                raise ValueError(f"{path}:{reader.line_num}: {len(row)} tab-separated fields, expected {len(GLUE_HEADER)} "
                                 f"({', '.join(GLUE_HEADER)})")
            pairs.append((row[3], row[4]))
            labels.append(row[5])
    return pairs, _labels(labels, str(path))


def read_saved_dataset(root: str | Path, limit: int | None = None) -> tuple[list[TextPair], np.ndarray]:
    """The first `limit` (None = all) pairs of a `datasets.save_to_disk` folder of glue/qqp (its validation
    split when it holds a DatasetDict) and their labels."""
    try:
        import datasets
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(f"{root} is a Hugging Face `datasets` folder; reading it needs the package datasets "
                                  "(pip install datasets), or point benchmark.dataset.root at a GLUE copy (QQP/dev.tsv)") from error
    data = datasets.load_from_disk(str(root))
    if isinstance(data, datasets.DatasetDict):
        if DATASETS_SPLIT not in data:
            raise ValueError(f"{root}: no {DATASETS_SPLIT!r} split; the folder holds {', '.join(data)}")
        data = data[DATASETS_SPLIT]
    missing = [c for c in ("question1", "question2", "label") if c not in data.column_names]
    if missing:
        raise ValueError(f"{root}: columns {', '.join(missing)} missing (glue/qqp has question1, question2, label, idx; "
                         f"found {', '.join(data.column_names)})")
    if limit is not None:
        data = data.select(range(min(limit, len(data))))
    return list(zip(data["question1"], data["question2"])), _labels(list(data["label"]), str(root))


def load_qqp(root: str | Path, limit: int | None = PAPER_LIMIT) -> tuple[list[TextPair], np.ndarray]:
    """D of the QQP benchmark: the first `limit` labelled pairs (None = the whole dev split) of the copy at
    `root` (a GLUE folder or a `save_to_disk` folder, see the module docstring), as (question1, question2)
    tuples and int64 labels (1 = duplicate)."""
    root = Path(root)
    if limit is not None and (isinstance(limit, bool) or int(limit) < 1):
        raise ValueError(f"limit must be None or an integer >= 1, got {limit!r}")
    if not root.is_dir():
        raise FileNotFoundError(f"QQP root {root} is not a folder (expected a GLUE copy with QQP/dev.tsv or dev.tsv, or a "
                                "`datasets` save_to_disk folder)")
    tsv = next((root / f for f in GLUE_FILES if (root / f).is_file()), None)
    if tsv is not None:
        pairs, labels = read_glue_tsv(tsv, limit)
        source = str(tsv)
    elif any((root / f).is_file() for f in ("dataset_dict.json", "state.json")):
        pairs, labels = read_saved_dataset(root, limit)
        source = str(root)
    else:
        raise FileNotFoundError(f"no QQP data in {root}: expected {' or '.join(GLUE_FILES)} (GLUE) or a `datasets` "
                                "save_to_disk folder (dataset_dict.json or state.json)")
    if limit is not None and len(pairs) < limit:
        raise ValueError(f"benchmark.dataset.limit: {limit} — at most {len(pairs)}, the labelled pairs in {source} "
                         "(or null for all of them)")
    if not pairs:
        raise ValueError(f"{source} holds no QQP pairs")
    return pairs, labels


def write_pairs(pairs: list[TextPair], labels: np.ndarray, path: str | Path) -> None:
    """D as the prepare stage keeps it: JSON {"pairs": [[question1, question2], …], "labels": […]}, atomically."""
    from pipeline.runtime.io import write_text

    write_text(json.dumps({"pairs": [list(p) for p in pairs], "labels": np.asarray(labels).tolist()}, indent=0), path)


def read_pairs(path: str | Path) -> tuple[list[TextPair], np.ndarray]:
    """D written by `write_pairs`: (question1, question2) tuples and int64 labels."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [(str(a), str(b)) for a, b in data["pairs"]], np.asarray(data["labels"], dtype=np.int64)
