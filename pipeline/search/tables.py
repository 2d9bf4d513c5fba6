"""What the search stages read: ground-truth tables, validated, not trusted, their benchmark–metric pairs
with the traces run on them, and the digests that key a run to the objectives it searched."""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.catalog import SEARCH_METHODS
from pipeline.fingerprint import library_versions, stage_fingerprint
from pipeline.groundtruth_table import validate_groundtruth
from pipeline.search.ground_truth import GroundTruth, table_metrics, table_space
from pipeline.search.traces import load_traces
from pipeline.space import Space

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
