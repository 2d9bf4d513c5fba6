"""What the search stages (search, search_summary, tune, plot_recall) take from the config and read."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd

from pipeline.config import search_budget
from pipeline.search import method_class
from pipeline.search.tables import Problem, problems_with_traces, read_groundtruth
from pipeline.space import Space
from pipeline.stages.layout import outputs, table_path, traces_dir


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
