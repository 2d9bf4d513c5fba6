"""What the search stages read: ground-truth tables, validated, not trusted, their benchmark–metric pairs
with the traces run on them, and the digests that key a run to the objectives it searched."""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.plugins.catalog import SEARCH_METHODS
from pipeline.runtime.fingerprint import library_versions, stage_fingerprint
from pipeline.front.per_input import unit_fidelity, unit_outcomes
from pipeline.front.ground_truth_table import validate_groundtruth
from pipeline.search.ground_truth import GroundTruth, table_metrics, table_space
from pipeline.search.traces import load_traces
from pipeline.search.racing.unit_outcomes import UnitOutcomes
from pipeline.front.space import Space

Problem = tuple[str, str, GroundTruth, dict[str, list[tuple[int, pd.DataFrame]]]]
# The modules that compute a trace or a tuning cell (their stage fingerprints' roots): the package and every
# registered method's module, which the catalog names by import path, so no import statement reaches it.
CODE = ("pipeline.search", *SEARCH_METHODS.modules())
LIBRARIES = ("optuna", "botorch", "gpytorch", "linear_operator")  # the anchors' libraries, beyond the numeric ones


def search_fingerprint() -> str:
    """The stage fingerprint of a search run or tuning cell: the sources of `CODE`, the numeric libraries'
    versions and the anchors' (`LIBRARIES`), and the pinned numerics."""
    return stage_fingerprint({"libraries": library_versions(LIBRARIES)}, CODE)


def read_groundtruth(path: Path, name: str, space: Space | None = None) -> pd.DataFrame:
    """The ground-truth table of benchmark `name` at `path`, validated (`validate_groundtruth`): schema, one
    row per θ of its Θ, its P* flags recomputed from the objectives. `space`: Θ of the configured benchmark,
    which the table must be over (a table over another Θ is stale); None: the table's own Θ."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"no ground-truth table {path}; run `dvc repro groundtruth` for {name!r} first")
    table = pd.read_parquet(path)
    if space is not None and table_space(table) != space:
        raise ValueError(f"the ground-truth table {path} is over {table_space(table)}, the benchmark config over "
                         f"{space}; rerun groundtruth")
    space = space or table_space(table)
    return validate_groundtruth(table, list(space.names), space.levels, table_metrics(table), str(path))


def read_units(path: Path, table: pd.DataFrame, labels: np.ndarray, metric: str, task_metric: str, seed: int = 0
               ) -> UnitOutcomes:
    """The per-unit layer of a ground-truth table for `metric` from its per-input file at `path`
    (`pipeline.front.per_input`), as its confidence columns were computed: outcomes per unit (an input, or a
    code problem), the unit's fidelity (the table's set-level value where the metric has no per-input column),
    strata by class for accuracy, the ground truth's bootstrap `seed`, and the slopes from the raw δ and ρ to the
    table's min-max normalised `delta_norm` and `rho_<metric>_norm`. Rows in Θ's index order."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"no per-input file {path}; run `dvc repro groundtruth` first")
    space = table_space(table)
    frame = pd.read_parquet(path)
    n = int(frame["input"].max()) + 1
    if len(frame) != space.size * n:
        raise ValueError(f"{path} holds {len(frame)} rows; {space.size} configurations × {n} inputs expected")
    frame = frame.sort_values(["theta", "input"], kind="stable")
    predictions = frame["prediction"].to_numpy().reshape(space.size, n)
    outcomes, unit, strata = unit_outcomes(predictions, np.asarray(labels), task_metric)
    by_index = np.empty(space.size, dtype=np.int64)
    by_index[space.indices(table[list(space.names)].to_numpy())] = np.arange(len(table))
    per_input = frame[f"rho_{metric}"].to_numpy(dtype=float).reshape(space.size, n) if f"rho_{metric}" in frame.columns else None
    fidelity = unit_fidelity(per_input, unit, table[f"rho_{metric}"].to_numpy(dtype=float)[by_index])
    clean = outcomes[space.index((0,) * space.n_dims)]
    def slope(norm: str, raw: str) -> float:  # 1 where the raw objective is constant (nothing to map)
        spread = float(np.ptp(table[raw].to_numpy(dtype=float)))
        return float(np.ptp(table[norm].to_numpy(dtype=float))) / spread if spread > 0 else 1.0

    scale = (slope("delta_norm", "delta"), slope(f"rho_{metric}_norm", f"rho_{metric}"))
    return UnitOutcomes(outcomes, clean, fidelity, strata, scale, seed)


def problems_with_traces(tables: Iterable[tuple[str, pd.DataFrame, Path]], budget: Callable[[int], int]) -> Iterator[Problem]:
    """(benchmark, metric, ground truth, traces by method) for every benchmark–metric pair with traces, metrics
    in the table's column order; `tables` yields (benchmark, its validated table, the folder of its traces),
    `budget(|Θ|)` is the proposal budget the traces were run with (`load_traces` checks it)."""
    for name, table, folder in tables:
        space = table_space(table)
        traces = load_traces(folder, space, budget(space.size))
        for metric in [m for m in table_metrics(table) if m in traces]:
            yield name, metric, GroundTruth.from_table(table, name, metric), traces[metric]


def column_digest(table: pd.DataFrame, column: str) -> str:
    """Digest of one column of a ground-truth table (what a guided search reads besides (δ, ρ))."""
    return hashlib.sha256(table[column].to_numpy(dtype=np.float64).tobytes()).hexdigest()


def ground_truth_digest(problem: GroundTruth) -> str:
    """Identity of a benchmark–metric pair's objectives and P*, so results computed on an older table are redone."""
    h = hashlib.sha256(problem.oracle.objectives.tobytes())
    h.update(problem.pareto.tobytes())
    return h.hexdigest()[:16]
