"""One model–condition cell of paired prediction records, grouped by true class.

A cell's records table has one row per evaluated input, in observed order: row i holds the clean record
and the perturbed record of the same image (the observed correspondence). Scores, predicted labels and
acceptance decisions are attached to records (Appendix A.1); the analysis only ever re-links them
within a true class.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.paired.records.table import RECORD_COLUMNS


@dataclass(frozen=True)
class Cell:
    """Record arrays of one cell; `cls` is the dense class index (0..C-1) of each record."""

    labels: np.ndarray          # (C,) original true labels, ascending
    cls: np.ndarray             # (N,) dense class index
    clean_pred: np.ndarray
    clean_max: np.ndarray       # S
    clean_true: np.ndarray      # M
    pert_pred: np.ndarray
    pert_max: np.ndarray        # S'
    pert_true: np.ndarray       # M'

    @property
    def n_records(self) -> int:
        return len(self.cls)

    @property
    def n_classes(self) -> int:
        return len(self.labels)

    @property
    def y(self) -> np.ndarray:
        return self.labels[self.cls]

    @property
    def clean_correct(self) -> np.ndarray:
        return self.clean_pred == self.y

    @property
    def pert_correct(self) -> np.ndarray:
        return self.pert_pred == self.y

    def per_class(self, mask: np.ndarray) -> np.ndarray:
        """Count of records with `mask` in each class, as int64 (C,)."""
        return np.bincount(self.cls, weights=None if mask is None else mask, minlength=self.n_classes).astype(np.int64)

    def class_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of `values` over the records of each class (C,)."""
        return np.bincount(self.cls, weights=values, minlength=self.n_classes)


def as_cell(records: pd.DataFrame | Cell) -> Cell:
    """Build a Cell from a records table (columns RECORD_COLUMNS, observed order); a Cell passes through."""
    if isinstance(records, Cell):
        return records
    if not isinstance(records, pd.DataFrame):
        raise ValueError(f"records must be a pandas DataFrame with columns {list(RECORD_COLUMNS)}, got {type(records).__name__}")
    missing = [c for c in RECORD_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(f"records lack columns {missing}; required columns are {list(RECORD_COLUMNS)}")
    if len(records) == 0:
        raise ValueError("records table is empty; a cell needs at least one paired record")
    for col in RECORD_COLUMNS:
        values = records[col].to_numpy()
        if pd.isna(values).any():
            row = int(np.flatnonzero(pd.isna(values))[0])
            raise ValueError(f"records column {col!r} has a missing value at row {row}")
    y = records["y"].to_numpy().astype(np.int64)
    labels, cls = np.unique(y, return_inverse=True)
    return Cell(
        labels=labels, cls=cls.astype(np.int64),
        clean_pred=records["clean_pred"].to_numpy().astype(np.int64),
        clean_max=records["clean_maxprob"].to_numpy().astype(np.float64),
        clean_true=records["clean_trueprob"].to_numpy().astype(np.float64),
        pert_pred=records["pert_pred"].to_numpy().astype(np.int64),
        pert_max=records["pert_maxprob"].to_numpy().astype(np.float64),
        pert_true=records["pert_trueprob"].to_numpy().astype(np.float64),
    )
