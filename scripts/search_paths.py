"""Where the search stages read and write, from the config (shared by search, search_summary, tune and
plot_recall)."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd
from paths import outputs, table_path

from pipeline.search import method_class
from pipeline.search.budget import search_budget
from pipeline.search.ground_truth import GroundTruth, table_metrics, table_space
from pipeline.space import Space
from pipeline.validate import validate_groundtruth, validate_trace


def trace_path(cfg, benchmark: str, metric: str, method: str, seed: int) -> Path:
    return outputs(cfg) / "search" / benchmark / metric / method / f"seed={seed}.parquet"


def live_path(cfg, benchmark: str, metric: str, method: str, seed: int, what: str) -> Path:
    """`what` is 'trace' or 'ranked' (R, the ranked evaluated configurations)."""
    return outputs(cfg) / "search_live" / benchmark / metric / method / f"seed={seed}.{what}.parquet"


def summary_dir(cfg) -> Path:
    return outputs(cfg) / "search_summary"


def tune_dir(cfg) -> Path:
    return outputs(cfg) / "tune"


def figures_dir(cfg) -> Path:
    return outputs(cfg) / "figures"


def budget(cfg, space_size: int) -> int:
    """B of `pipeline.search.budget.search_budget`: `search.budget` if set, else `search.budget_factor` × |Θ|."""
    return search_budget(space_size, cfg.search.budget, cfg.search.budget_factor)


def hyperparameters(cfg, method: str) -> dict[str, Any]:
    """The `search.*` values of the hyperparameters `method` accepts (none for Random and Greedy)."""
    return {k: cfg.search[k] for k in method_class(method).hyperparameters()}


def metrics_of(cfg) -> list[str]:
    return list(cfg.search.metrics) if cfg.search.get("metrics") else list(cfg.fidelity)


def benchmarks_with_traces(cfg) -> list[str]:
    """`search.summary_benchmarks` if set, else every benchmark with traces and a ground-truth table."""
    if cfg.search.get("summary_benchmarks"):
        return list(cfg.search.summary_benchmarks)
    root = outputs(cfg) / "search"
    found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return [b for b in found if table_path(cfg, b).exists()]


def read_groundtruth(cfg, benchmark: str | None = None) -> pd.DataFrame:
    """The ground-truth table of `benchmark` (default: the configured one), validated, not trusted:
    schema, one row per θ of its Θ (the configured benchmark's: a table over another Θ is stale), and its
    P* flags recomputed from the objectives."""
    path = table_path(cfg, benchmark)
    if not path.exists():
        raise ValueError(f"no ground-truth table {path}; run `dvc repro groundtruth` for {benchmark or cfg.benchmark.name!r} first")
    table = pd.read_parquet(path)
    if benchmark in (None, cfg.benchmark.name):
        names, levels = list(cfg.benchmark.perturbations), int(cfg.benchmark.levels)
        if table_space(table) != Space(tuple(names), levels):
            raise ValueError(f"the ground-truth table {path} is over {table_space(table)}, the benchmark config over "
                             f"{Space(tuple(names), levels)}; rerun groundtruth")
    else:
        space = table_space(table)
        names, levels = list(space.names), space.levels
    return validate_groundtruth(table, names, levels, table_metrics(table), str(path))


def load_traces(cfg, benchmark: str, space: Space) -> dict[str, dict[str, list[tuple[int, pd.DataFrame]]]]:
    """{metric: {method: [(seed, trace), …] sorted by seed}} of every trace of `benchmark`, each validated
    (schema, budget accounting re-derived from its θ sequence) before it enters a summary."""
    out: dict[str, dict[str, list[tuple[int, pd.DataFrame]]]] = {}
    for path in sorted((outputs(cfg) / "search" / benchmark).glob("*/*/seed=*.parquet")):
        metric, method, seed = path.parent.parent.name, path.parent.name, int(path.stem.removeprefix("seed="))
        trace = validate_trace(pd.read_parquet(path), list(space.names), space.levels, budget(cfg, space.size), str(path),
                               method=method, single_pass=method_class(method).single_pass)
        out.setdefault(metric, {}).setdefault(method, []).append((seed, trace))
    for methods in out.values():
        for runs in methods.values():
            runs.sort(key=lambda item: item[0])
    return out


def column_digest(table: pd.DataFrame, column: str) -> str:
    """Digest of one column of a ground-truth table (what a guided search reads besides (δ, ρ))."""
    return hashlib.sha256(table[column].to_numpy(dtype=np.float64).tobytes()).hexdigest()


def ground_truth_digest(problem: GroundTruth) -> str:
    """Identity of a benchmark–metric pair's objectives and P*, so results computed on an older table are redone."""
    h = hashlib.sha256(problem.oracle.objectives.tobytes())
    h.update(problem.pareto.tobytes())
    return h.hexdigest()[:16]


def problems_with_traces(cfg) -> Iterator[tuple[str, str, GroundTruth, dict[str, list[tuple[int, pd.DataFrame]]]]]:
    """(benchmark, metric, ground truth, traces by method) for every benchmark-metric pair with traces,
    metrics in the table's column order."""
    for name in benchmarks_with_traces(cfg):
        table = read_groundtruth(cfg, name)
        traces = load_traces(cfg, name, table_space(table))
        for metric in [m for m in table_metrics(table) if m in traces]:
            yield name, metric, GroundTruth.from_table(table, name, metric), traces[metric]
