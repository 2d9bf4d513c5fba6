"""Coarser information and the precision gain from pairing (Appendix C).

* C.3: identification of the total correct–correct overlap K from accuracies alone, per class
  (Fréchet intervals [max(0, a+b-n), min(a, b)] summed) or globally (from A, B and N only);
* C.2: the paired-to-unpaired variance ratio Var(x - x') / (Var(x) + Var(x')) for correctness C, maximum
  probability S and true-class probability M.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.paired.identification.cell import Cell, as_cell
from pipeline.paired.identification.states import class_counts


def overlap_from_accuracies(records: pd.DataFrame | Cell) -> tuple[pd.DataFrame, dict[str, int]]:
    """Range of K when only per-class or only global accuracies are reported.

    Returns the per-class table (y, n, a, b, k, k_lower, k_upper, pinned) and a summary with the observed
    K, the classwise range (summed Fréchet bounds) and the global range [max(0, A+B-N), min(A, B)].
    Gross flips h + r = A + B - 2K inherit twice the width of K; the net change A - B is identified.
    """
    cell = as_cell(records)
    c = class_counts(cell)
    lower, upper = np.maximum(0, c.a + c.b - c.n), np.minimum(c.a, c.b)
    per_class = pd.DataFrame({"y": cell.labels, "n": c.n, "a": c.a, "b": c.b, "k": c.k,
                              "k_lower": lower, "k_upper": upper, "pinned": lower == upper})
    big_a, big_b, big_n = int(c.a.sum()), int(c.b.sum()), int(c.n.sum())
    summary = {
        "N": big_n, "A": big_a, "B": big_b, "K": int(c.k.sum()),
        "K_lower_classwise": int(lower.sum()), "K_upper_classwise": int(upper.sum()),
        "K_lower_global": max(0, big_a + big_b - big_n), "K_upper_global": min(big_a, big_b),
    }
    return per_class, summary


def _ratio(x: np.ndarray, x_p: np.ndarray) -> float:
    denom = x.var() + x_p.var()
    return float((x - x_p).var() / denom) if denom > 0 else float("nan")


def variance_ratio(records: pd.DataFrame | Cell) -> dict[str, float]:
    """Appendix C.2: paired-to-unpaired variance ratio for C, S and M (NaN when both variances are zero)."""
    cell = as_cell(records)
    return {
        "C": _ratio(cell.clean_correct.astype(float), cell.pert_correct.astype(float)),
        "S": _ratio(cell.clean_max, cell.pert_max),
        "M": _ratio(cell.clean_true, cell.pert_true),
    }
