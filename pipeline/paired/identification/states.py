"""The five response states of Table 1 and their classwise counts.

h: correct → wrong, r: wrong → correct, s: the same wrong answer on both sides, w: a changed wrong
answer, k: correct on both sides. Identities: a0 = h + k, a1 = r + k, F = h + r + w (Table 1).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.paired.identification.cell import Cell, as_cell

STATES = ("h", "r", "s", "w", "k")


@dataclass(frozen=True)
class ClassCounts:
    """Classwise counts of one cell under the observed correspondence (arrays over classes)."""

    n: np.ndarray   # records per class n_y
    a: np.ndarray   # clean correct a_y
    b: np.ndarray   # perturbed correct b_y
    h: np.ndarray
    r: np.ndarray
    s: np.ndarray
    w: np.ndarray
    k: np.ndarray


def state_of_records(cell: Cell) -> np.ndarray:
    """The state letter of every record under the observed correspondence (Table 1)."""
    cc, pc = cell.clean_correct, cell.pert_correct
    same = cell.clean_pred == cell.pert_pred
    return np.select([cc & pc, cc & ~pc, ~cc & pc, same], ["k", "h", "r", "s"], default="w")


def class_counts(cell: Cell) -> ClassCounts:
    """Observed classwise five-state counts and the two correct counts of a cell."""
    cc, pc = cell.clean_correct, cell.pert_correct
    wrong_both = ~cc & ~pc
    same = cell.clean_pred == cell.pert_pred
    return ClassCounts(
        n=cell.per_class(None), a=cell.per_class(cc), b=cell.per_class(pc),
        h=cell.per_class(cc & ~pc), r=cell.per_class(~cc & pc), s=cell.per_class(wrong_both & same),
        w=cell.per_class(wrong_both & ~same), k=cell.per_class(cc & pc),
    )


def five_state_counts(records: pd.DataFrame | Cell) -> pd.DataFrame:
    """Classwise counts of h, r, s, w, k (Table 1) with n and the identities a0 = h + k, a1 = r + k, F = h + r + w.

    One row per true class `y`; all columns are counts (divide by n for proportions).
    """
    cell = as_cell(records)
    c = class_counts(cell)
    return pd.DataFrame({
        "y": cell.labels, "n": c.n, "h": c.h, "r": c.r, "s": c.s, "w": c.w, "k": c.k,
        "a0": c.h + c.k, "a1": c.r + c.k, "F": c.h + c.r + c.w,
    })
