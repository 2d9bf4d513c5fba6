"""App. E.2-E.4 comparison tables on small hand-made inputs: the simple controls, the probe sets, the
model-group decomposition, the capture sensitivity and Table 27's strata, each against a direct loop or a
hand count."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline.paired.screening.controls import clean_controls, group_table
from pipeline.paired.screening.probe_sets import capture_factors, capture_table, probe_sets
from pipeline.paired.screening.strata import confidence_terciles, retention_gap


def test_clean_controls_hand_example():
    clean = np.array([[0.7, 0.2, 0.1, 0.0], [0.25, 0.25, 0.25, 0.25]])
    tta = np.zeros((3, 2, 4))
    tta[:, 0] = [[0.6, 0.3, 0.1, 0.0], [0.1, 0.8, 0.1, 0.0], [0.5, 0.5, 0.0, 0.0]]   # arg-max 0, 1, 0 (tie -> 0)
    tta[:, 1] = [[0.1, 0.9, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.2, 0.0, 0.8]]
    out = clean_controls(clean, tta)
    np.testing.assert_allclose(out["neg_margin"], [-(0.7 - 0.2), 0.0])
    np.testing.assert_allclose(out["entropy"], [-(0.7 * math.log(0.7) + 0.2 * math.log(0.2) + 0.1 * math.log(0.1)),
                                                math.log(4)])                    # 0 log 0 = 0; uniform: log C
    np.testing.assert_allclose(out["neg_agree"], [-2 / 3, 0.0])                # clean arg-max of row 2 is class 0
    with pytest.raises(ValueError, match="disagree"):
        clean_controls(clean, tta[:, :1])


def test_probe_sets_families_and_members():
    names = ["fog-2", "fog-4", "snow-2", "snow-4", "noise-2", "noise-4"]
    sets = probe_sets(names)
    assert [s for s in sets if s[0] == "probe"] == [("probe", n, (i,)) for i, n in enumerate(names)]
    assert [s[1:] for s in sets if s[0] == "type"] == [("fog", (0, 1)), ("snow", (2, 3)), ("noise", (4, 5))]
    assert [s[1:] for s in sets if s[0] == "severity"] == [("severity 2", (0, 2, 4)), ("severity 4", (1, 3, 5))]
    assert sets[-1] == ("all", "all corruptions", tuple(range(6)))
    with pytest.raises(ValueError, match="<type>-<severity>"):
        probe_sets(["fog"])


def _cells(rng: np.random.Generator, scores=("neg_U", "neg_S", "neg_TTA18")) -> pd.DataFrame:
    models = {"a1": "A", "a2": "A", "b1": "B", "c1": "C", "c2": "C", "c3": "C"}
    conditions = [f"l{lighting}-param_{p}" for lighting in (1, 5) for p in (1, 2, 5, 14, 27)]
    rows = [{"source": "s", "model": m, "group": g, "condition": c, "tier": "mild" if i % 5 else "severe", "score": s,
             "coverage_0.2": rng.uniform(), "auroc": rng.uniform()}
            for m, g in models.items() for i, c in enumerate(conditions) for s in scores]
    cells = pd.DataFrame(rows)
    cells.loc[(cells["model"] == "b1") & (cells["condition"] == "l1-param_2"), "coverage_0.2"] = np.nan  # undefined
    return cells


def test_group_table_against_a_loop():
    cells = _cells(np.random.default_rng(3))
    table, positive = group_table(cells, 0.2, {"neg_S": "S", "neg_TTA18": "TTA18"})
    mild = cells[cells["tier"] == "mild"]
    u = mild[mild["score"] == "neg_U"].set_index(["model", "condition"])["coverage_0.2"]
    per_model = {}
    for group in ("A", "B", "C"):
        row = table.set_index("group").loc[group]
        for other, label in (("neg_S", "S"), ("neg_TTA18", "TTA18")):
            o = mild[mild["score"] == other].set_index(["model", "condition"])["coverage_0.2"]
            gaps = (u - o)[[m for m, _ in u.index if cells.loc[cells["model"] == m, "group"].iloc[0] == group]]
            assert row[f"U - {label}"] == pytest.approx(gaps.mean())              # cells weighted equally in the group
            models = gaps.groupby(level=0).mean()
            per_model.setdefault(label, []).extend(models.tolist())
            assert row[f"models with U - {label} > 0"] == f"{int((models > 0).sum())}/{len(models)}"
    assert table.set_index("group").loc["B", "cells"] == 7                        # 8 mild cells, one undefined
    for label, values in per_model.items():
        assert positive[label] == [sum(v > 0 for v in values), 6]
    assert table["group"].iloc[-1] == "all models" and table["models"].iloc[-1] == 6


def test_capture_factors_follow_the_es_numbering():
    assert capture_factors("l1-param_1") == {"lighting": "l1", "ISO": "250", "shutter": "1/4 s", "aperture": "f/5"}
    assert capture_factors("l5-param_27") == {"lighting": "l5", "ISO": "16000", "shutter": "1/1000 s", "aperture": "f/16"}
    assert capture_factors("l2-param_40") == {"lighting": "l2"}                  # beyond the 27 camera settings
    assert capture_factors("brightness-2") is None


def test_capture_table_means_with_and_without_each_level():
    cells = _cells(np.random.default_rng(5))
    table = capture_table(cells, 0.2)
    mild = cells[cells["tier"] == "mild"]
    wide = mild.set_index(["condition", "model", "score"])["coverage_0.2"].unstack("score")
    per_condition = (wide["neg_U"] - wide["neg_S"]).groupby(level=0).mean()
    overall = table[table["factor"] == "all"].iloc[0]
    assert overall["conditions"] == len(per_condition) == 8
    assert overall["mean U - S"] == pytest.approx(per_condition.mean())
    assert overall["positive U - S"] == f"{int((per_condition > 0).sum())}/8"
    lighting = per_condition.index.str.split("-").str[0]
    row = table[(table["factor"] == "lighting") & (table["level"] == "l5")].iloc[0]
    assert row["mean U - S"] == pytest.approx(per_condition[lighting == "l5"].mean())
    assert row["mean U - S without level"] == pytest.approx(per_condition[lighting != "l5"].mean())
    iso = table[table["factor"] == "ISO"]
    assert iso["conditions"].sum() == 8
    assert set(iso["level"]) == {capture_factors(c)["ISO"] for c in per_condition.index} == {"2000", "16000"}


def test_confidence_terciles_cut_each_models_ranks_in_three():
    scores = pd.DataFrame({"model": ["a"] * 7 + ["b"] * 3, "neg_S": -np.array([.9, .1, .5, .3, .7, .5, .2, .4, .6, .8])})
    eligible = pd.Series([True] * 6 + [False] + [True] * 3)
    strata = confidence_terciles(scores, eligible)
    # model a: S .9 .1 .5 .3 .7 .5 -> ranks 6 1 3 2 5 4 (the tie .5 in row order); thirds {1,2}, {3,4}, {5,6}
    assert strata[:6].tolist() == ["high S", "low S", "middle S", "low S", "high S", "middle S"]
    assert pd.isna(strata[6]) and strata[7:].tolist() == ["low S", "middle S", "high S"]


def test_retention_gap_by_cell_median():
    merged = pd.DataFrame({"model": ["m"] * 9, "condition": ["c1"] * 5 + ["c2"] * 4,
                           "neg_U": -np.array([.9, .8, .5, .2, .1, .6, .6, .6, .6]),
                           "failed": [False, True, False, True, True, False, True, False, True]})
    # c1: median U .5 -> above {.9, .8}: retained 1/2, below {.2, .1}: 0/2 -> +0.5; c2: all at the median, skipped
    assert retention_gap(merged) == pytest.approx(0.5)
    assert math.isnan(retention_gap(merged[merged["condition"] == "c2"]))
