"""TextTableDataSet on small CSV / TSV / JSONL files: integer and string labels, the `labels` order, seeded
subsets in file order, and errors that name the file, the line and the valid choices."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.data.text_table import TextTableDataSet
from pipeline.plugins.protocols import DataSet


def _csv(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _jsonl(path: Path, rows: list[dict], blank_after: int | None = None) -> str:
    lines = [json.dumps(row) for row in rows]
    if blank_after is not None:
        lines.insert(blank_after, "")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_csv_with_string_labels_sorted(tmp_path: Path):
    path = _csv(tmp_path / "t.csv", 'text,label\n"good, very good",pos\nNA,neg\n"two\nlines", pos \nmeh,neutral\n')
    data = TextTableDataSet(path)
    assert isinstance(data, DataSet)
    texts, labels = data.test_set()
    assert texts == ["good, very good", "NA", "two\nlines", "meh"]      # "NA" is a text, not a missing value
    assert data.classes == ["neg", "neutral", "pos"]
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, [2, 0, 2, 1])


def test_labels_give_the_index_order(tmp_path: Path):
    path = _csv(tmp_path / "t.tsv", "sentence\ty\nok\tpos\nbad\tneg\nfine\tpos\n")
    data = TextTableDataSet(path, text_column="sentence", label_column="y", labels=["pos", "neutral", "neg"])
    assert data.classes == ["pos", "neutral", "neg"]
    np.testing.assert_array_equal(data.test_set()[1], [0, 2, 0])
    with pytest.raises(ValueError, match=r"t\.tsv, line 3: label 'neg' is not one of labels: pos, neutral"):
        TextTableDataSet(path, text_column="sentence", label_column="y", labels=["pos", "neutral"])
    with pytest.raises(ValueError, match="distinct class names"):
        TextTableDataSet(path, text_column="sentence", label_column="y", labels=["pos", "pos", "neg"])


def test_integer_labels_are_used_as_they_are(tmp_path: Path):
    csv_path = _csv(tmp_path / "t.csv", "text,label\na,2\nb,0\nc,2\n")
    data = TextTableDataSet(csv_path)
    np.testing.assert_array_equal(data.test_set()[1], [2, 0, 2])
    assert data.classes == ["0", "1", "2"]
    rows = [{"text": "x", "label": 3}, {"text": "y", "label": 1}]
    jsonl = TextTableDataSet(_jsonl(tmp_path / "t.jsonl", rows))
    np.testing.assert_array_equal(jsonl.test_set()[1], [3, 1])
    with pytest.raises(ValueError, match=r"t\.csv, line 3: label -1 is negative"):
        TextTableDataSet(_csv(tmp_path / "t.csv", "text,label\na,2\nb,-1\n"))


def test_jsonl_and_json_lines_with_string_labels(tmp_path: Path):
    rows = [{"text": "hi", "label": "b", "extra": 1}, {"text": "yo", "label": "a"}, {"text": "ok", "label": "b"}]
    for name in ("t.jsonl", "t.json"):
        texts, labels = TextTableDataSet(_jsonl(tmp_path / name, rows, blank_after=1)).test_set()
        assert texts == ["hi", "yo", "ok"]
        np.testing.assert_array_equal(labels, [1, 0, 1])


def test_missing_column_names_file_column_and_present_columns(tmp_path: Path):
    path = _csv(tmp_path / "t.csv", "sentence,label\na,0\n")
    with pytest.raises(ValueError, match=r"t\.csv: no column 'text' \(text_column\); columns present: 'sentence', 'label'"):
        TextTableDataSet(path)
    rows = [{"text": "a", "y": 1}]
    with pytest.raises(ValueError, match=r"no column 'label' \(label_column\); columns present: 'text', 'y'"):
        TextTableDataSet(_jsonl(tmp_path / "t.jsonl", rows))


def test_empty_rows_name_their_line(tmp_path: Path):
    with pytest.raises(ValueError, match=r"t\.csv, line 4: empty text"):
        TextTableDataSet(_csv(tmp_path / "t.csv", 'text,label\n"multi\nline",a\n"  ",b\n'))
    with pytest.raises(ValueError, match=r"t\.csv, line 3: empty label"):
        TextTableDataSet(_csv(tmp_path / "t.csv", "text,label\na,x\nb,\n"))
    rows = [{"text": "a", "label": 0}, {"label": 1}]
    with pytest.raises(ValueError, match=r"t\.jsonl, line 3: empty text"):   # line 2 is blank
        TextTableDataSet(_jsonl(tmp_path / "t.jsonl", rows, blank_after=1))
    rows = [{"text": "a", "label": 0.5}]
    with pytest.raises(ValueError, match=r"line 1: label is a float \(0\.5\), expected an integer or a string"):
        TextTableDataSet(_jsonl(tmp_path / "t.jsonl", rows))
    (tmp_path / "bad.jsonl").write_text('{"text": "a", "label": 0}\n{"text": \n')
    with pytest.raises(ValueError, match=r"bad\.jsonl, line 2: not valid JSON"):
        TextTableDataSet(str(tmp_path / "bad.jsonl"))


def test_limit_is_seeded_and_keeps_file_order(tmp_path: Path):
    rows = [{"text": f"text {i}", "label": "odd" if i % 2 else "even"} for i in range(40)]
    path = _jsonl(tmp_path / "t.jsonl", rows)
    a, b = TextTableDataSet(path, limit=10, seed=1), TextTableDataSet(path, limit=10, seed=1)
    other = TextTableDataSet(path, limit=10, seed=2)
    assert a.test_set()[0] == b.test_set()[0] != other.test_set()[0]
    for subset in (a, other):
        texts, labels = subset.test_set()
        numbers = [int(t.split()[1]) for t in texts]
        assert len(texts) == 10 and numbers == sorted(numbers)
        np.testing.assert_array_equal(labels, [n % 2 for n in numbers])   # indices from the whole file: even 0, odd 1
        assert subset.classes == ["even", "odd"]
    assert TextTableDataSet(path, limit=1000).test_set()[0] == [r["text"] for r in rows]


def test_unknown_extension_and_missing_file(tmp_path: Path):
    path = _csv(tmp_path / "t.txt", "text,label\na,0\n")
    with pytest.raises(ValueError, match=r"extension '\.txt'; valid extensions: \.csv, \.tsv, \.jsonl, \.json"):
        TextTableDataSet(path)
    with pytest.raises(FileNotFoundError, match=r"nothere\.csv.*is not a file"):
        TextTableDataSet(str(tmp_path / "nothere.csv"))
    with pytest.raises(ValueError, match=r"empty\.csv.* is empty"):
        TextTableDataSet(_csv(tmp_path / "empty.csv", ""))
    with pytest.raises(ValueError, match=r"head\.csv: no data rows"):
        TextTableDataSet(_csv(tmp_path / "head.csv", "text,label\n"))


def test_built_by_hydra_instantiate(tmp_path: Path):
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    path = _csv(tmp_path / "t.csv", "text,label\nok,pos\nbad,neg\n")
    node = OmegaConf.create({"_target_": "pipeline.data.text_table.TextTableDataSet", "path": path, "limit": 5,
                             "labels": ["pos", "neg"]})
    data = instantiate(node)
    assert data.classes == ["pos", "neg"]
    np.testing.assert_array_equal(data.test_set()[1], [0, 1])
