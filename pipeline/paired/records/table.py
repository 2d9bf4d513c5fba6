"""Prediction-record tables: one per source, one row per (model, condition, image).

Columns: model, group (the model's statistical group, for group resampling), condition, image_id,
split ("dev" or "eval"), y, and on each side (clean_*, pert_*) the predicted label, the maximum
probability S (maxprob) and the true-class probability M (trueprob). Within a (model, condition) cell,
the clean and perturbed record of a row belong to the same image: that is the observed correspondence.
The number of classes travels in the parquet metadata (`n_classes`).

`validate_records` checks the rows of a table; `validate_records_cells` checks a records-stage file
against its config (every (model, condition) cell present) and reports a bad row as an `InputError`
naming the file.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pandas.api import types as ptypes

from pipeline.config.errors import InputError, Text
from pipeline.runtime.io import atomic_path

# Two stages' probabilities of the same model, image and condition agree to float32 rounding: bit for bit where the
# pinned GEMM gives a row the same bits in any batch, within some ulps where it does not (docs/reproducibility.md:
# 4.8e-7 seen on such a host). A zoo trained otherwise, or other corruptions, move them by orders of magnitude more.
SAME_RUN_TOL = 1e-5

RECORD_COLUMNS = (
    "y", "clean_pred", "clean_maxprob", "clean_trueprob", "pert_pred", "pert_maxprob", "pert_trueprob",
)
KEY_COLUMNS = ("model", "group", "condition", "image_id", "split")
COLUMNS = KEY_COLUMNS + RECORD_COLUMNS
SPLITS = ("dev", "eval")
LABEL_COLUMNS = ("y", "clean_pred", "pert_pred")
PROB_COLUMNS = ("clean_maxprob", "clean_trueprob", "pert_maxprob", "pert_trueprob")
CLEAN_COLUMNS = ("y", "split", "clean_pred", "clean_maxprob", "clean_trueprob")
_TOL = 1e-6


def _fail(df: pd.DataFrame, mask: np.ndarray, column: str, what: str) -> None:
    row = int(np.flatnonzero(mask)[0])
    raise ValueError(f"records row {row}, column {column!r}: {what} (value {df[column].iloc[row]!r})")


def validate_records(df: pd.DataFrame, n_classes: int) -> pd.DataFrame:
    """Check a record table; a violation raises ValueError naming the row and the column. Returns `df`."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"records lack columns {missing}; required columns are {list(COLUMNS)}")
    if int(n_classes) < 1:
        raise ValueError(f"n_classes must be positive, got {n_classes}")
    for col in COLUMNS:
        na = df[col].isna().to_numpy()
        if na.any():
            _fail(df, na, col, "missing value")
    for col in LABEL_COLUMNS:
        values = df[col].to_numpy()
        if not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"records column {col!r} must hold integer labels, got dtype {values.dtype}")
        _check(df, (values < 0) | (values >= n_classes), col, f"label outside [0, {n_classes})")
    for col in PROB_COLUMNS:
        values = df[col].to_numpy(dtype=float)
        _check(df, (values < 0) | (values > 1), col, "probability outside [0, 1]")
    for side in ("clean", "pert"):
        smax, strue = df[f"{side}_maxprob"].to_numpy(float), df[f"{side}_trueprob"].to_numpy(float)
        _check(df, strue > smax + _TOL, f"{side}_trueprob", "true-class probability above the maximum probability")
        correct = df[f"{side}_pred"].to_numpy() == df["y"].to_numpy()
        _check(df, correct & (np.abs(strue - smax) > _TOL), f"{side}_trueprob",
               "a correct prediction's true-class probability differs from its maximum probability")
    _check(df, ~df["split"].isin(SPLITS).to_numpy(), "split", f"split must be one of {list(SPLITS)}")
    dup = df.duplicated(["model", "condition", "image_id"]).to_numpy()
    _check(df, dup, "image_id", "a second perturbed record for the same (model, condition, image)")
    _check_pairing(df)
    return df


def _check(df: pd.DataFrame, bad: np.ndarray, column: str, what: str) -> None:
    if bad.any():
        _fail(df, bad, column, what)


def _check_pairing(df: pd.DataFrame) -> None:
    """Every clean record has exactly one perturbed record in every condition of its model, with one
    group per model and identical clean-side values across conditions."""
    # The odd rows are those outside their model's most common group (the first-listed on a tie).
    usual = df.groupby("model", sort=False)["group"].agg(lambda g: g.value_counts(sort=True).index[0])
    _check(df, (df["group"] != df["model"].map(usual)).to_numpy(), "group", "one group per model: this model's other rows "
           "have another group")
    n_cond = df.groupby("model", sort=False)["condition"].nunique()
    per_image = df.groupby(["model", "image_id"], sort=False)["condition"].transform("size").to_numpy()
    expected = df["model"].map(n_cond).to_numpy()
    _check(df, per_image != expected, "condition", "clean record without a perturbed record in every condition of its model")
    for col in CLEAN_COLUMNS:
        n_values = df.groupby(["model", "image_id"], sort=False)[col].transform("nunique").to_numpy()
        _check(df, n_values > 1, col, "clean-side value differs across conditions for the same (model, image)")


def write_records(df: pd.DataFrame, path: str | Path, n_classes: int) -> None:
    """Validate and write a record table atomically, with `n_classes` in the parquet metadata."""
    validate_records(df, n_classes)
    table = pa.Table.from_pandas(df[list(COLUMNS)].reset_index(drop=True), preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"n_classes"] = str(int(n_classes)).encode()
    with atomic_path(path) as tmp:
        pq.write_table(table.replace_schema_metadata(meta), tmp)


def read_records(path: str | Path, n_classes: int | None = None) -> pd.DataFrame:
    """Read and validate a record table; `n_classes` defaults to the value stored in its metadata."""
    table = pq.read_table(path)
    if n_classes is None:
        stored = (table.schema.metadata or {}).get(b"n_classes")
        if stored is None:
            raise ValueError(f"{path} has no n_classes metadata; pass n_classes")
        n_classes = int(stored)
    df = table.to_pandas()
    for col in ("model", "group", "condition", "image_id", "split"):
        df[col] = df[col].astype(str)
    return validate_records(df, n_classes)


def cells(df: pd.DataFrame, split: str = "eval") -> Iterator[tuple[tuple[str, str, str], pd.DataFrame]]:
    """((model, group, condition), records of that cell in `split`, observed order) for every cell."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; valid splits are {list(SPLITS)}")
    part = df[df["split"] == split]
    for (model, group, condition), g in part.groupby(["model", "group", "condition"], sort=True):
        yield (str(model), str(group), str(condition)), g[list(RECORD_COLUMNS)].reset_index(drop=True)


def clean_dev_scores(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per model, the maximum probabilities S of its clean development records (one per image)."""
    dev = df[df["split"] == "dev"].drop_duplicates(["model", "image_id"])
    return {str(m): g["clean_maxprob"].to_numpy(float) for m, g in dev.groupby("model", sort=True)}


def split_dev_eval(labels: np.ndarray, dev_fraction: float, seed: int) -> np.ndarray:
    """Assign each input to "dev" or "eval" within its class: round(dev_fraction * n_y) of every class
    (halves up) go to dev, chosen by a seeded permutation (Section 3.3: splits stratified by class)."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must lie in (0, 1), got {dev_fraction}")
    labels = np.asarray(labels)
    rng = np.random.default_rng(seed)
    split = np.full(len(labels), "eval", dtype=object)
    for y in np.unique(labels):
        idx = np.flatnonzero(labels == y)
        n_dev = int(np.floor(dev_fraction * len(idx) + 0.5))
        split[rng.permutation(idx)[:n_dev]] = "dev"
    return split


def records_from_probabilities(model: str, group: str, condition: str, image_ids, labels: np.ndarray,
                               split, clean_proba: np.ndarray, pert_proba: np.ndarray) -> pd.DataFrame:
    """Record rows of one cell from class-probability matrices (N, C) of the clean and perturbed images.

    The predicted label is the arg-max with ties going to the lowest class index (a fixed tie rule);
    S is the maximum probability and M the true-class probability (Section 3.1).
    """
    labels = np.asarray(labels, dtype=np.int64)
    if clean_proba.shape != pert_proba.shape or clean_proba.ndim != 2 or len(labels) != len(clean_proba):
        raise ValueError(f"probabilities {clean_proba.shape} / {pert_proba.shape} do not match {len(labels)} labels")
    rows = np.arange(len(labels))
    out = {"model": model, "group": group, "condition": condition, "image_id": np.asarray(image_ids, dtype=str),
           "split": np.asarray(split, dtype=str), "y": labels}
    for side, proba in (("clean", clean_proba), ("pert", pert_proba)):
        proba = np.clip(np.asarray(proba, dtype=float), 0.0, 1.0)
        pred = proba.argmax(axis=1)
        out[f"{side}_pred"] = pred.astype(np.int64)
        out[f"{side}_maxprob"] = proba[rows, pred]
        out[f"{side}_trueprob"] = proba[rows, labels]
    return pd.DataFrame(out)


# ---- the records stage's file against its config -----------------------------------------------

_MAX_CELLS_LISTED = 10
_RECORD_ROW = re.compile(r"^records row (\d+), column '([^']+)': (.*) \(value .*\)$")


def expected_conditions(corruptions: Sequence[str], severities: Sequence[int]) -> list[str]:
    """Condition names of the records stage, `<corruption>-<severity>` (as scripts/records.py writes them)."""
    return [f"{name}-{int(sev)}" for name in corruptions for sev in severities]


def _records_error(err: ValueError, df: pd.DataFrame, label: str) -> InputError:
    """`validate_records`' message as an InputError naming the file; row positions are those of `df`."""
    text = " ".join(str(err).split())
    match = _RECORD_ROW.match(text)
    if match:
        row, column, what = int(match.group(1)), match.group(2), match.group(3)
        allowed = "a value (not NaN or null)" if what == "missing value" else what
        return InputError(label, df[column].iloc[row], allowed, row=row, column=column)
    return InputError(label, Text("rejected"), text)


def validate_records_cells(records: pd.DataFrame, models: Sequence[str], conditions: Sequence[str], label: str, *,
                           n_classes: int | None = None, allow_extra: bool = False) -> pd.DataFrame:
    """Check a prediction-record table and that every (model, condition) cell of the config is present; return it.

    Row-level checks are `validate_records` (run on a copy with a fresh 0..n-1
    index, so a reported row is the position in the file). `n_classes` defaults to `records.attrs
    ["n_classes"]`, else one more than the largest label present. Cells of a model or condition the
    config does not name are an error too unless `allow_extra` (a stale file from another config).
    """
    df = records.reset_index(drop=True)
    if n_classes is None:
        n_classes = records.attrs.get("n_classes")
    if n_classes is None:
        labels = [df[c].max() for c in LABEL_COLUMNS if c in df.columns and ptypes.is_integer_dtype(df[c].dtype) and len(df)]
        n_classes = int(max(labels)) + 1 if labels else 1
    try:
        validate_records(df, int(n_classes))
    except ValueError as err:
        raise _records_error(err, df, label) from None
    present = set(zip(df["model"].astype(str), df["condition"].astype(str)))
    expected = [(str(m), str(c)) for m in models for c in conditions]
    missing = [cell for cell in expected if cell not in present]
    total = f"{len(models)} models × {len(conditions)} conditions = {len(expected)} cells"
    if missing:
        listed = ", ".join(f"({m}, {c})" for m, c in missing[:_MAX_CELLS_LISTED])
        more = f" and {len(missing) - _MAX_CELLS_LISTED} more" if len(missing) > _MAX_CELLS_LISTED else ""
        raise InputError(label, Text(f"{len(missing)} (model, condition) cells missing: {listed}{more}"),
                         f"every cell of the config present ({total})", column="model, condition")
    extra = sorted(present - set(expected))
    if extra and not allow_extra:
        listed = ", ".join(f"({m}, {c})" for m, c in extra[:_MAX_CELLS_LISTED])
        more = f" and {len(extra) - _MAX_CELLS_LISTED} more" if len(extra) > _MAX_CELLS_LISTED else ""
        raise InputError(label, Text(f"{len(extra)} cells not in the config: {listed}{more}"),
                         f"only the cells of the config ({total}); rerun the records stage", column="model, condition")
    return records
