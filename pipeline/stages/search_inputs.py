"""What the search stages (search, search_summary, tune, plot_recall) take from the config and read."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from pipeline.config import search_budget
from pipeline.config.search import seeds_of
from pipeline.runtime.fingerprint import unit_key
from pipeline.search import TableOracle, method_class
from pipeline.search.ground_truth import GroundTruth
from pipeline.search.tables import (
    Problem,
    column_digest,
    ground_truth_digest,
    problems_with_traces,
    read_groundtruth,
    search_fingerprint,
)
from pipeline.front.space import Space
from pipeline.stages.layout import outputs, table_path, trace_path, traces_dir


def budget(cfg, space_size: int) -> int:
    """B of `pipeline.config.search_budget`: `search.budget` if set, else `search.budget_factor` × |Θ|."""
    return search_budget(space_size, cfg.search.budget, cfg.search.budget_factor)


def hyperparameters(cfg, method: str, live: bool = False) -> dict[str, Any]:
    """The `search.*` values of the hyperparameters `method` accepts (none for Random and Greedy); with
    `live`, `search.live.*` where it sets one (the stopping rule)."""
    source = {**cfg.search, **(cfg.search.live if live else {})}
    return {k: source[k] for k in method_class(method).hyperparameters()}


def metrics_of(cfg) -> list[str]:
    return list(cfg.search.metrics) if cfg.search.get("metrics") else list(cfg.fidelity)


def groundtruth(cfg, benchmark: str | None = None) -> pd.DataFrame:
    """The validated ground-truth table of `benchmark` (default: the configured one, whose table must be
    over the configured Θ)."""
    name = benchmark or str(cfg.benchmark.name)
    configured = name == cfg.benchmark.name
    space = Space(tuple(cfg.benchmark.perturbations), int(cfg.benchmark.levels)) if configured else None
    return read_groundtruth(table_path(cfg, name), name, space)


def benchmarks_with_traces(cfg) -> list[str]:
    """`search.summary_benchmarks` if set, else every benchmark with traces and a ground-truth table."""
    if cfg.search.get("summary_benchmarks"):
        return list(cfg.search.summary_benchmarks)
    root = outputs(cfg) / "search"
    found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return [b for b in found if table_path(cfg, b).exists()]


def problems(cfg) -> Iterator[Problem]:
    """`pipeline.search.tables.problems_with_traces` of every benchmark with traces."""
    tables = ((name, groundtruth(cfg, name), traces_dir(cfg, name)) for name in benchmarks_with_traces(cfg))
    return problems_with_traces(tables, lambda size: budget(cfg, size))


def table_jobs(cfg, table: pd.DataFrame, space: Space) -> tuple[list[dict[str, Any]], list[str], list[Any], list[str]]:
    """The table-mode runs of the configured benchmark: `pipeline.search.run_search` arguments, resume keys
    (the run's spec, a digest of the ground truth and of a guide column, the search code), trace paths;
    and the guided methods left out because the table lacks their guide column."""
    name, code = str(cfg.benchmark.name), search_fingerprint()
    jobs, keys, paths = [], [], []
    absent = [m for m in cfg.search.methods if method_class(m).guide and method_class(m).guide not in table.columns]
    for metric in metrics_of(cfg):
        problem = GroundTruth.from_table(table, name, metric, space)
        digest = ground_truth_digest(problem)
        for method in [m for m in cfg.search.methods if m not in absent]:
            guide = method_class(method).guide
            oracle = TableOracle.from_table(table, space, delta=guide, rho=f"rho_{metric}_norm") if guide else problem.oracle
            extra = dict(guide=column_digest(table, guide)) if guide else {}
            for seed in range(seeds_of(cfg.search, method)):
                job = dict(method=method, seed=seed, budget=budget(cfg, space.size), batch_size=int(cfg.search.batch_size),
                           **hyperparameters(cfg, method))
                jobs.append(dict(job, oracle=oracle, space=space, truth=problem.oracle if guide else None))
                keys.append(unit_key(code, dict(job, benchmark=name, metric=metric, ground_truth=digest, **extra)))
                paths.append(trace_path(cfg, name, metric, method, seed))
    return jobs, keys, paths, absent
