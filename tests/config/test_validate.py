"""Input files validated, not trusted: ground-truth tables (Pareto flags recomputed), search traces
(budget accounting replayed), prediction records (every cell present; bad rows named correctly)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.config import ConfigError, InputError
from pipeline.front.ground_truth_table import validate_groundtruth
from pipeline.paired.records import expected_conditions, records_from_probabilities, validate_records, validate_records_cells
from pipeline.search import METHODS
from pipeline.search.traces import validate_trace
from pipeline.front.space import Space

NAMES, LEVELS, METRICS = ("brightness", "pixelate"), 3, ("ssim", "kid")
GT = "outputs/groundtruth/tiny.parquet"


def _raw() -> pd.DataFrame:
    """A raw table as the ground-truth stage writes it before `finalize`: levels, order, ψ, δ, ρ, timings."""
    grid = Space(NAMES, LEVELS).grid()
    rng = np.random.default_rng(3)
    raw = pd.DataFrame(grid, columns=list(NAMES))
    raw["order"] = (grid > 0).sum(axis=1)
    raw["psi"] = rng.random(len(grid))
    raw["delta"] = 1 - raw["psi"]
    for m in METRICS:
        raw[f"rho_{m}"] = rng.random(len(grid))
    raw["seconds_perturb"] = 0.01
    return raw


def _table() -> pd.DataFrame:
    from pipeline.benchmark.ground_truth import finalize

    return finalize(_raw(), list(METRICS))


def _gt(table: pd.DataFrame) -> pd.DataFrame:
    return validate_groundtruth(table, NAMES, LEVELS, METRICS, GT)


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text and isinstance(err.value, ConfigError) and isinstance(err.value, ValueError)
    return text


# ---- ground truth ---------------------------------------------------------------------------------

def test_groundtruth_of_the_producer_validates():
    table = _table()
    assert _gt(table) is table
    assert table["pareto_ssim"].any() and not table["pareto_ssim"].all()


def test_string_pareto_flags_are_rejected():
    table = _table()
    table["pareto_kid"] = table["pareto_kid"].map(str)  # "False" is truthy: every θ would be in P*
    with pytest.raises(InputError) as err:
        _gt(table)
    flag = table.loc[0, "pareto_kid"]
    assert _one_line(err) == f"{GT} row 0, column 'pareto_kid': {flag!r} — true or false in a boolean column (the column has dtype str)"


@pytest.mark.parametrize("metric", METRICS)
def test_a_flipped_pareto_flag_names_the_configuration(metric):
    table = _table()
    row = int(np.flatnonzero(~table[f"pareto_{metric}"].to_numpy())[2])
    table.loc[row, f"pareto_{metric}"] = True
    theta = "(" + ",".join(str(int(v)) for v in table.loc[row, list(NAMES)]) + ")"
    with pytest.raises(InputError) as err:
        _gt(table)
    assert _one_line(err) == (f"{GT} row {row}, column 'pareto_{metric}': true — false: configuration {theta} is dominated on "
                              f"(delta_norm, rho_{metric}_norm) (flags recomputed, 1 differ)")
    assert err.value.row == row and err.value.column == f"pareto_{metric}"


def test_a_duplicated_configuration_is_rejected():
    table = _table()
    table.loc[7, list(NAMES)] = table.loc[2, list(NAMES)].to_numpy()
    with pytest.raises(InputError) as err:
        _gt(table)
    assert _one_line(err) == f"{GT} row 7: configuration (0,2) — one row per configuration of Θ; (0,2) already appears in row 2"


def test_a_missing_configuration_is_rejected():
    table = _table().drop(index=4).reset_index(drop=True)
    with pytest.raises(InputError) as err:
        _gt(table)
    assert _one_line(err) == f"{GT}: 8 rows — one row per configuration of Θ (3^2 = 9 rows); missing (1,1)"


@pytest.mark.parametrize("mutate, expected", [
    (lambda t: t.__setitem__("brightness", t["brightness"].astype(float)),
     f"{GT} row 0, column 'brightness': 0.0 — a level 0..2 in an integer column (the column has dtype float64)"),
    (lambda t: t.loc.__setitem__((5, "pixelate"), 3), f"{GT} row 5, column 'pixelate': 3 — a level in 0..2"),
    (lambda t: t.loc.__setitem__((6, "delta"), np.nan), f"{GT} row 6, column 'delta': nan — a value (not NaN or null)"),
    (lambda t: t.loc.__setitem__((6, "rho_kid"), np.inf), f"{GT} row 6, column 'rho_kid': inf — a finite number"),
    (lambda t: t.loc.__setitem__((4, "order"), 0), f"{GT} row 4, column 'order': 0 — 2, the number of active perturbations of (1,1)"),
    (lambda t: t.loc.__setitem__((3, "delta_norm"), 0.5),
     f"{GT} row 3, column 'delta_norm': 0.5 — {_table().loc[3, 'delta_norm'].item()!r}, delta min-max normalised over Θ (recomputed), at (1,0)"),
    (lambda t: t.pop("rho_kid_norm"), f"{GT}: columns "),
])
def test_groundtruth_schema_and_values(mutate, expected):
    table = _table()
    mutate(table)
    with pytest.raises(InputError) as err:
        _gt(table)
    assert _one_line(err).startswith(expected), str(err.value)


def test_dimension_columns_must_come_first():
    table = _table()
    table = table[["pixelate", "brightness"] + [c for c in table.columns if c not in NAMES]]
    with pytest.raises(InputError, match=r"column 'order': columns \['pixelate', 'brightness'\] before 'order' — the dimension"):
        _gt(table)


# ---- traces ---------------------------------------------------------------------------------------

def _trace(method: str, budget: int, **hyper) -> pd.DataFrame:
    from pipeline.search import run_search
    from pipeline.search.ground_truth import GroundTruth

    problem = GroundTruth.from_table(_table(), "tiny", "ssim")
    return run_search(method, problem.oracle, problem.space, budget, 0, **hyper)


TESTNAV = {"eta_c": 1.0, "eta_m": 5.0, "mu": 4, "eliminate_duplicates": True}
TRACE = "outputs/search/tiny/ssim/testnav/seed=0.parquet"


@pytest.mark.parametrize("method, budget, hyper, rows", [
    ("testnav", 45, TESTNAV, 45), ("greedy", 30, {}, 30), ("random", 45, {}, 9), ("coverage", 20, {}, 9), ("random", 5, {}, 5),
    ("pnd", 45, {}, 9),
])
def test_traces_of_the_methods_validate(method, budget, hyper, rows):
    trace = _trace(method, budget, **hyper)
    assert len(trace) == rows
    assert validate_trace(trace, NAMES, LEVELS, budget, TRACE) is trace
    assert validate_trace(trace, NAMES, LEVELS, budget, TRACE, method=method, single_pass=METHODS[method].single_pass) is trace


def test_a_wrong_u_is_rejected():
    trace = _trace("testnav", 45, **TESTNAV)
    row = int(np.flatnonzero(~trace["is_new"].to_numpy())[0])  # first cache hit: u must not grow
    trace.loc[row, "u"] += 1
    with pytest.raises(InputError) as err:
        validate_trace(trace, NAMES, LEVELS, 45, TRACE)
    expected = int(trace.loc[row, "u"]) - 1
    assert _one_line(err) == (f"{TRACE} row {row}, column 'u': {expected + 1} — {expected}, the number of distinct configurations "
                              f"proposed in rows 0..{row}")


@pytest.mark.parametrize("mutate, budget, expected", [
    (lambda t: None, 50, f"{TRACE}, column 'b': 45 proposals — exactly B = 50 proposals (testnav spends the whole budget)"),
    (lambda t: t.loc.__setitem__((3, "is_new"), not t.loc[3, "is_new"]), 45, f"{TRACE} row 3, column 'is_new': "),
    (lambda t: t.loc.__setitem__((4, "b"), 9), 45, f"{TRACE} row 4, column 'b': 9 — 5: b counts proposals 1, 2, … in row order"),
    (lambda t: t.__setitem__("is_new", t["is_new"].astype(int)), 45, f"{TRACE} row 0, column 'is_new': 1 — true or false"),
    (lambda t: t.loc.__setitem__((2, "rho"), np.nan), 45, f"{TRACE} row 2, column 'rho': nan — a value (not NaN or null)"),
    (lambda t: None, 40, f"{TRACE}, column 'b': 45 proposals — exactly B = 40 proposals"),
    (lambda t: t.pop("u"), 45, f"{TRACE}: columns "),
])
def test_trace_accounting_is_replayed(mutate, budget, expected):
    trace = _trace("testnav", 45, **TESTNAV)
    mutate(trace)
    with pytest.raises(InputError) as err:
        validate_trace(trace, NAMES, LEVELS, budget, TRACE, method="testnav")
    assert _one_line(err).startswith(expected), str(err.value)


def test_a_cache_hit_with_other_values_is_rejected():
    trace = _trace("testnav", 45, **TESTNAV)
    row = int(np.flatnonzero(~trace["is_new"].to_numpy())[0])
    trace.loc[row, "delta"] += 0.25
    with pytest.raises(InputError, match=rf"row {row}, column 'delta': .* the value of \(\d,\d\) when first proposed in row \d+"):
        validate_trace(trace, NAMES, LEVELS, 45, TRACE)


def test_a_truncated_random_trace_is_rejected():
    trace = _trace("random", 45).iloc[:8]  # stops before Θ is exhausted
    with pytest.raises(InputError, match=r"8 proposals — exactly B = 45 proposals, or fewer only once all \|Θ\| = 9 configurations are "
                                         r"evaluated \(this trace evaluated 8\)"):
        validate_trace(trace, NAMES, LEVELS, 45, TRACE)
    with pytest.raises(InputError, match=r"column 'b': 8 proposals, 8 distinct — min\(B, \|Θ\|\) = 9 proposals, all distinct"):
        validate_trace(trace, NAMES, LEVELS, 45, TRACE, method="random", single_pass=True)


def test_a_full_budget_method_may_not_stop_early_even_after_exhausting_theta():
    trace = _trace("greedy", 60)
    assert trace["u"].iloc[44] == 9  # Θ exhausted before B
    short = trace.iloc[:45]
    validate_trace(short, NAMES, LEVELS, 60, TRACE)  # without the method: an early stop after exhausting Θ is plausible
    with pytest.raises(InputError, match=r"45 proposals — exactly B = 60 proposals \(greedy spends the whole budget\)"):
        validate_trace(short, NAMES, LEVELS, 60, TRACE, method="greedy")


# ---- records --------------------------------------------------------------------------------------

MODELS, CONDITIONS = ["m1", "m2"], expected_conditions(["fog", "snow"], [2, 4])
REC = "outputs/records/digits.parquet"


def _records(models=MODELS, conditions=CONDITIONS, n: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    labels, split = np.arange(n) % 3, np.array(["dev", "eval"] * (n // 2))
    parts = []
    for model in models:
        clean = rng.dirichlet(np.ones(3), size=n)
        for condition in conditions:
            pert = rng.dirichlet(np.ones(3), size=n)
            parts.append(records_from_probabilities(model, f"g_{model}", condition, [f"img{i}" for i in range(n)], labels, split,
                                                    clean, pert))
    return pd.concat(parts, ignore_index=True)


def test_complete_records_validate():
    records = _records()
    assert CONDITIONS == ["fog-2", "fog-4", "snow-2", "snow-4"]
    assert validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3) is records


def test_a_missing_cell_is_listed():
    records = _records()
    records = records[~((records["model"] == "m2") & (records["condition"] == "snow-2"))].reset_index(drop=True)
    validate_records(records, 3)  # row-level checks alone do not see it: m2 just has one condition fewer
    with pytest.raises(InputError) as err:
        validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3)
    assert _one_line(err) == (f"{REC}, column 'model, condition': 1 (model, condition) cells missing: (m2, snow-2) — every cell "
                              "of the config present (2 models × 4 conditions = 8 cells)")


def test_cells_the_config_does_not_name_are_rejected_unless_allowed():
    records = _records(models=["m1", "m2", "m3"])
    with pytest.raises(InputError, match=r"4 cells not in the config: \(m3, fog-2\), \(m3, fog-4\), \(m3, snow-2\), \(m3, snow-4\)"):
        validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3)
    validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3, allow_extra=True)


@pytest.mark.parametrize("column, value, expected", [
    ("pert_maxprob", np.nan, "nan — a value (not NaN or null)"),
    ("clean_trueprob", np.nan, "nan — a value (not NaN or null)"),
    ("condition", None, "null — a value (not NaN or null)"),
    ("pert_maxprob", 1.5, "1.5 — probability outside [0, 1]"),
    ("pert_pred", 3, "3 — label outside [0, 3)"),
])
def test_a_bad_record_names_its_row(column, value, expected):
    records = _records()
    if value is None:
        records[column] = records[column].astype(object)
    records.loc[29, column] = value
    with pytest.raises(InputError) as err:
        validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3)
    assert _one_line(err) == f"{REC} row 29, column {column!r}: {expected}"
    assert err.value.row == 29


def test_the_row_is_the_position_in_the_file_whatever_the_index():
    records = _records().sample(frac=1.0, random_state=1)  # index labels no longer positions
    position = 17
    records.iloc[position, records.columns.get_loc("pert_maxprob")] = np.nan
    assert records.index[position] != position
    with pytest.raises(InputError) as err:
        validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3)
    assert err.value.row == position


def test_n_classes_defaults_to_the_table_metadata():
    records = _records()
    records.attrs["n_classes"] = 2  # labels 2 present: out of range for 2 classes
    with pytest.raises(InputError, match=r"column 'y': 2 — label outside \[0, 2\)"):
        validate_records_cells(records, MODELS, CONDITIONS, REC)


def test_a_wrong_group_is_reported_at_its_row():
    records = _records()
    records.loc[29, "group"] = "g_other"
    with pytest.raises(InputError) as err:
        validate_records_cells(records, MODELS, CONDITIONS, REC, n_classes=3)
    assert err.value.row == 29
