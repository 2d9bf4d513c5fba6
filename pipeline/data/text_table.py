"""A text classification test set read from one table file: a text column and a label column.

Formats by extension (case-insensitive): `.csv` (comma-separated) and `.tsv` (tab-separated), read with
pandas as strings with no missing-value guessing (a text "NA" stays "NA"); `.jsonl` and `.json`, both
JSON lines (one object per line, blank lines skipped), gathered into a pandas table.

Labels: when `labels` is None and every label is an integer (a JSON integer, or a string of digits such as a
CSV's "2"), the integers are the class indices and must be >= 0; otherwise each label (stripped of
surrounding whitespace) is a class name, indexed in sorted order. With `labels` every label, as a string,
must be one of its names and is indexed by its position there. Indices come from the whole file, whatever
`limit` keeps. `classes` lists the class names by index (for integer labels "0" .. the largest).

`limit` keeps a simple random subset of `limit` rows drawn with `numpy.random.default_rng(seed)` without
replacement, in file order (`pipeline.data.image_folder.subset_indices`). Errors name the file and the
1-based line of the bad row (the header is line 1 of a CSV; a quoted text may span lines).
"""
from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.data.image_folder import subset_indices

SEPARATORS = {".csv": ",", ".tsv": "\t"}
JSON_LINES = (".jsonl", ".json")
EXTENSIONS = (*SEPARATORS, *JSON_LINES)
_INTEGER = re.compile(r"^\s*[+-]?[0-9]+\s*$")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or (isinstance(value, str) and not value.strip())


def _csv_lines(path: Path, sep: str, rows: int) -> list[int] | None:
    """The first line of each data row as pandas reads them (blank lines skipped), or None if the csv module
    splits the file into another number of rows."""
    lines = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh, delimiter=sep)
            next(reader, None)
            while True:
                start = reader.line_num + 1
                row = next(reader, None)
                if row is None:
                    break
                if row and not (len(row) == 1 and not row[0].strip()):
                    lines.append(start)
    except (csv.Error, UnicodeDecodeError):
        return None
    return lines if len(lines) == rows else None


def _read_json_lines(path: Path) -> tuple[pd.DataFrame, list[int]]:
    records, lines = [], []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {number}: not valid JSON ({error.msg}); a {path.suffix} file must hold "
                                 "JSON lines, one object per line") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}, line {number}: a JSON {type(record).__name__}, expected an object such as "
                                 '{"text": ..., "label": ...}')
            records.append(record)
            lines.append(number)
    return pd.DataFrame(records, dtype=object), lines


def read_table(path: Path) -> tuple[pd.DataFrame, list[int] | None]:
    """The rows of a .csv, .tsv, .jsonl or .json (JSON lines) file as strings or JSON values, and the line
    each row starts on (None where it cannot be told)."""
    suffix = path.suffix.lower()
    if suffix not in EXTENSIONS:
        raise ValueError(f"text table {str(path)!r} has extension {path.suffix or '(none)'!r}; valid extensions: "
                         f"{', '.join(EXTENSIONS)} (.json is read as JSON lines)")
    if not path.is_file():
        raise FileNotFoundError(f"text table {str(path)!r} is not a file")
    if suffix in JSON_LINES:
        return _read_json_lines(path)
    try:
        table = pd.read_csv(path, sep=SEPARATORS[suffix], dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"text table {str(path)!r} is empty; expected a header line naming the columns") from None
    return table, _csv_lines(path, SEPARATORS[suffix], len(table))


class TextTableDataSet:
    """The rows of a table file as the clean test set D: (list of texts, int64 labels), in file order.

    text_column, label_column: the columns to read; limit: rows to keep (None: all); seed: the RNG seed of
    that subset; labels: class names in index order (None: integer labels as they are, names sorted)."""

    def __init__(self, path: str, text_column: str = "text", label_column: str = "label", limit: int | None = None,
                 seed: int = 0, labels: list[str] | None = None) -> None:
        self.path = Path(path).expanduser()
        table, self._lines = read_table(self.path)
        for role, column in (("text_column", text_column), ("label_column", label_column)):
            if column not in table.columns:
                raise ValueError(f"{self.path}: no column {column!r} ({role}); columns present: "
                                 f"{', '.join(map(repr, map(str, table.columns))) or 'none'}")
        if table.empty:
            raise ValueError(f"{self.path}: no data rows")
        texts = [self._text(i, value) for i, value in enumerate(table[text_column].tolist())]
        indices, self.classes = self._label_indices(table[label_column].tolist(), labels)
        keep = subset_indices(len(texts), limit, seed)
        self.texts = [texts[i] for i in keep]
        self.labels = indices[keep]

    def _where(self, row: int) -> str:
        return f"{self.path}, line {self._lines[row]}" if self._lines is not None else f"{self.path}, data row {row + 1}"

    def _text(self, row: int, value: Any) -> str:
        if _missing(value):
            raise ValueError(f"{self._where(row)}: empty text; every row needs a non-empty text")
        if not isinstance(value, str):
            raise ValueError(f"{self._where(row)}: text is a {type(value).__name__} ({value!r}), expected a string")
        return value

    def _label_indices(self, values: list[Any], labels: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
        for row, value in enumerate(values):
            if _missing(value):
                raise ValueError(f"{self._where(row)}: empty label")
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise ValueError(f"{self._where(row)}: label is a {type(value).__name__} ({value!r}), expected an "
                                 "integer or a string")
        if labels is None and all(isinstance(v, int) or _INTEGER.match(v) for v in values):
            ints = np.array([int(v) for v in values], dtype=np.int64)
            if (ints < 0).any():
                row = int(np.argmax(ints < 0))
                raise ValueError(f"{self._where(row)}: label {ints[row]} is negative; integer labels are class indices >= 0")
            return ints, [str(k) for k in range(int(ints.max()) + 1)]
        names = [str(v).strip() for v in values]
        if labels is None:
            classes = sorted(set(names))
        else:
            classes = [str(name) for name in labels]
            if not classes or len(set(classes)) != len(classes):
                raise ValueError(f"labels must be a non-empty list of distinct class names, got {list(labels)!r}")
        index = {name: k for k, name in enumerate(classes)}
        unknown = next((row for row, name in enumerate(names) if name not in index), None)
        if unknown is not None:
            raise ValueError(f"{self._where(unknown)}: label {names[unknown]!r} is not one of labels: {', '.join(classes)}")
        return np.array([index[name] for name in names], dtype=np.int64), classes

    def test_set(self) -> tuple[list[str], np.ndarray]:
        """(texts, labels (N,) int64), in file order."""
        return list(self.texts), self.labels.copy()
