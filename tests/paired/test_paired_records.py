"""Record tables: validation names the bad row and column; parquet round trip keeps n_classes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.paired import read_records, validate_records, write_records
from pipeline.paired.records.table import cells


def _table() -> pd.DataFrame:
    rows = []
    for model, group in (("m1", "g1"), ("m2", "g2")):
        for image, y in enumerate([0, 1, 2, 0]):
            clean_pred = y if image != 3 else 1
            for cond, shift in (("fog-2", 0), ("snow-4", 1)):
                pert_pred = (y + shift * (image % 2)) % 3
                rows.append({
                    "model": model, "group": group, "condition": cond, "image_id": f"img{image}",
                    "split": "dev" if image < 2 else "eval", "y": y,
                    "clean_pred": clean_pred, "clean_maxprob": 0.8, "clean_trueprob": 0.8 if clean_pred == y else 0.1,
                    "pert_pred": pert_pred, "pert_maxprob": 0.6, "pert_trueprob": 0.6 if pert_pred == y else 0.2,
                })
    return pd.DataFrame(rows)


def test_valid_table_round_trip(tmp_path):
    df = _table()
    validate_records(df, 3)
    path = tmp_path / "src.parquet"
    write_records(df, path, n_classes=3)
    back = read_records(path)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), df, check_dtype=False)
    keys = [key for key, _ in cells(back)]
    assert keys == [("m1", "g1", "fog-2"), ("m1", "g1", "snow-4"), ("m2", "g2", "fog-2"), ("m2", "g2", "snow-4")]
    with pytest.raises(ValueError, match="label outside"):
        read_records(path, n_classes=2)


@pytest.mark.parametrize("column,value,message", [
    ("y", 3, "row 5, column 'y': label outside"),
    ("pert_pred", -1, "row 5, column 'pert_pred': label outside"),
    ("clean_maxprob", 1.2, "row 5, column 'clean_maxprob': probability outside"),
    ("pert_trueprob", np.nan, "row 5, column 'pert_trueprob': missing value"),
    ("pert_trueprob", 0.7, "row 5, column 'pert_trueprob': true-class probability above"),
    ("split", "test", "row 5, column 'split'"),
])
def test_violations_name_row_and_column(column, value, message):
    df = _table()
    df.loc[5, column] = value
    with pytest.raises(ValueError, match=message):
        validate_records(df, 3)


def test_one_perturbed_record_per_clean_record():
    df = _table()
    with pytest.raises(ValueError, match="column 'image_id': a second perturbed record"):
        validate_records(pd.concat([df, df.iloc[[3]]], ignore_index=True), 3)
    with pytest.raises(ValueError, match="without a perturbed record in every condition"):
        validate_records(df.drop(index=3).reset_index(drop=True), 3)
    changed = df.copy()
    changed.loc[1, ["clean_maxprob", "clean_trueprob"]] = 0.9   # the same clean record must not change per condition
    with pytest.raises(ValueError, match="row 0, column 'clean_maxprob': clean-side value differs"):
        validate_records(changed, 3)
    with pytest.raises(ValueError, match="lack columns"):
        validate_records(df.drop(columns="group"), 3)


def test_records_from_probabilities_and_split():
    from pipeline.paired.records.table import records_from_probabilities, split_dev_eval

    labels = np.array([0, 1, 1, 2, 2, 2, 2])
    split = split_dev_eval(labels, 0.5, seed=3)
    assert [int((split[labels == y] == "dev").sum()) for y in (0, 1, 2)] == [1, 1, 2]   # round(n/2), halves up
    assert (split_dev_eval(labels, 0.5, seed=3) == split).all()
    clean = np.full((7, 3), 1 / 3)                                       # a three-way tie goes to class 0
    pert = np.eye(3)[[0, 1, 2, 2, 0, 1, 2]] * 0.7 + 0.1
    df = records_from_probabilities("m", "g", "c", [f"i{i}" for i in range(7)], labels, split, clean, pert)
    assert df["clean_pred"].tolist() == [0] * 7 and np.allclose(df["clean_maxprob"], 1 / 3)
    assert df["pert_pred"].tolist() == [0, 1, 2, 2, 0, 1, 2]
    assert np.allclose(df["pert_trueprob"], [0.8, 0.8, 0.1, 0.8, 0.1, 0.1, 0.8])
    with pytest.raises(ValueError, match="dev_fraction"):
        split_dev_eval(labels, 1.0, seed=0)
