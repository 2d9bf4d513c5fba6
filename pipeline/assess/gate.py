"""The CI gate of a comparison of two models: fail a test, or a job, when the new model regresses.

In a test suite (pytest or any other runner):

    from pipeline.assess import assert_no_regression, compare

    def test_new_model_is_no_less_robust():
        assert_no_regression(compare(old, new, data, perturbations=[...], fidelity=[...], name="ci"))

or on a comparison's folder written earlier (`assert_no_regression("outputs/runs/ci")`). From the shell,
`scripts/assess.py ... assess.fail_on=regression` exits 1 with the same one-line verdict.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.assess.regressions import judge, verdict


def assert_no_regression(comparison: Any, *, min_fidelity: float | Mapping[str, float] | None = None,
                         tolerance: float | None = None) -> str:
    """Raise AssertionError with the verdict line where B is significantly worse than A at some configuration with ρ
    at or above `min_fidelity` by more than `tolerance` (both default to the comparison's own settings); else return
    the line. `comparison`: a `ComparisonResult` or the folder a comparison wrote (`regressions.csv`, `summary.json`)."""
    if isinstance(comparison, (str, Path)):
        folder = Path(comparison)
        if not (folder / "regressions.csv").is_file():
            raise FileNotFoundError(f"{folder} holds no regressions.csv: give the folder a comparison of two models wrote")
        table = pd.read_csv(folder / "regressions.csv")
        summary = json.loads((folder / "summary.json").read_text())
    else:
        table, summary = comparison.regressions, comparison.summary
    if tolerance is not None and tolerance != summary["tolerance"]:
        table = table.assign(verdict=judge(table["band_lo"], table["band_hi"], tolerance))
    regression, line = verdict(table, summary["min_fidelity"] if min_fidelity is None else min_fidelity, list(summary["metrics"]),
                               summary["tolerance"] if tolerance is None else tolerance, summary["level"])
    if regression:
        raise AssertionError(line)
    return line
