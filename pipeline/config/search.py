"""`search` (conf/search/): the search methods, seeds, budget B and the evolutionary hyperparameters of
TestNav §3.3 / §4.1, live search and the tuning grid; the derived μ and B."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING

from pipeline.plugins.catalog import SEARCH_METHODS, SELECTIONS
from pipeline.config.errors import ConfigError
from pipeline.config.rules import (
    at_least,
    choice,
    distinct,
    distinct_names,
    file_names,
    in_range,
    non_empty,
    optional_at_least,
    positive,
)
from pipeline.plugins.registry import is_import_path

PAPER_MU = 110
PAPER_TUNE_MU = (20, 50, 80, 110)
SEARCH_MODES = ("table", "live")
LIVE_EXECUTORS = ("serial", "processes", "submitit_local", "submitit_slurm")  # `pipeline.benchmark.live_evaluation.EXECUTORS`


@dataclass
class LiveSearchConfig:
    methods: list[str] | None = MISSING
    seeds: int = MISSING
    budget: int | None = MISSING
    batch_size: int = MISSING
    stop_at_recall: float | None = MISSING
    executor: str = MISSING
    submitit: dict[str, Any] = field(default_factory=dict)


@dataclass
class TuneConfig:
    eta_c: list[float] = MISSING
    eta_m: list[float] = MISSING
    mu: list[int] | None = MISSING
    seeds: int = MISSING
    threshold: float = MISSING
    benchmarks: list[str] | None = MISSING


@dataclass
class SearchConfig:
    """`search`: methods, seeds, budget and the evolutionary hyperparameters; `live`, `tune`."""

    mode: str = MISSING
    recommended: str = MISSING
    methods: list[str] = MISSING
    metrics: list[str] | None = MISSING
    seeds: int = MISSING
    method_seeds: dict[str, int] = field(default_factory=dict)
    budget_factor: int = MISSING
    budget: int | None = MISSING
    eta_c: float = MISSING
    eta_m: float = MISSING
    mu: int | None = MISSING
    selection: str = MISSING
    eliminate_duplicates: bool = MISSING
    batch_size: int = MISSING
    stop_at_recall: float | None = MISSING
    live: LiveSearchConfig = field(default_factory=LiveSearchConfig)
    table2_methods: list[str] = MISSING
    fig3_methods: list[str] = MISSING
    fig4_methods: list[str] = MISSING
    summary_benchmarks: list[str] | None = MISSING
    tune: TuneConfig = field(default_factory=TuneConfig)


def derived_mu(space_size: int) -> int:
    """μ for a space of `space_size` configurations: min(110, max(2, ⌊|Θ|/2⌋))."""
    return min(PAPER_MU, max(2, int(space_size) // 2))


def derived_tune_mu(space_size: int) -> list[int]:
    """The paper's μ grid (20, 50, 80, 110) scaled to `derived_mu(space_size)`: rounded, ≥ 2, no repeats."""
    mu = derived_mu(space_size)
    return sorted({max(2, math.floor(m * mu / PAPER_MU + 0.5)) for m in PAPER_TUNE_MU})


def search_budget(space_size: int, budget: int | None, budget_factor: int) -> int:
    """B (TestNav §4.1: B = 5 × |Θ|, 6,480 on a 6^4 space): an explicit `budget` when given, else
    `budget_factor` × |Θ|; the one rule of the search, live-search and tuning stages and of the checks."""
    if budget is not None:
        return int(budget)
    return int(budget_factor) * int(space_size)


def _population_methods(methods: Sequence[str]) -> list[str]:
    """The methods that start from a population of μ proposals (the catalog's `population` fact)."""
    return [m for m in methods if SEARCH_METHODS.facts(m).get("population")]


def seeds_of(s: Mapping[str, Any], method: str) -> int:
    """Seeds 0..k−1 of `method` in table mode: `search.method_seeds[method]` (the slow anchors run fewer), else `search.seeds`."""
    return int(s["method_seeds"].get(method, s["seeds"]))


def live_methods(s: Mapping[str, Any]) -> list[str]:
    """The methods live search runs: `search.live.methods`, or the recommended method when that is null."""
    return list(s["live"]["methods"]) if s["live"]["methods"] is not None else [s["recommended"]]


def _stopping(key: str, value: float | None) -> None:
    if value is not None and not 0 < value <= 1:
        raise ConfigError(key, value, "null (no stopping rule) or a recall in (0, 1]: stop when the method's own estimate reaches it")


def _methods(key: str, values: list[str], valid: list[str]) -> None:
    """Distinct search methods, each a catalog name or a plug-in's import path (`my_pkg.search:MySearch`, a
    subclass of `pipeline.search.methods.base.Method`, checked when the stage loads it)."""
    non_empty(key, values, f"search methods among {', '.join(valid)}")
    for i, v in enumerate(values):
        if not is_import_path(v):
            choice(f"{key}[{i}]", v, valid)
    distinct(key, values)


def check_search(s: dict[str, Any], bench: dict[str, Any], fidelity: list[str], size: int) -> None:
    """Rules of `search`: names, ranges, μ against |Θ|, budgets against μ."""
    valid = list(SEARCH_METHODS)
    theta = f"|Θ| = {bench['levels']}^{len(bench['perturbations'])} = {size}"
    choice("search.mode", s["mode"], SEARCH_MODES)
    choice("search.selection", s["selection"], list(SELECTIONS), " (NSGA-II parent selection)")
    _methods("search.methods", s["methods"], valid)
    if not is_import_path(s["recommended"]):
        choice("search.recommended", s["recommended"], valid, " (the method live search runs by default)")
    at_least("search.batch_size", s["batch_size"], 1, " (configurations evaluated per round)")
    _stopping("search.stop_at_recall", s["stop_at_recall"])
    if s["metrics"] is not None:
        distinct_names("search.metrics", s["metrics"], fidelity, "fidelity metrics", " (search.metrics ⊆ fidelity)")
    at_least("search.seeds", s["seeds"], 1)
    for method, seeds in s["method_seeds"].items():  # methods not in search.methods are not run: their entry is unused
        if not is_import_path(method):
            choice("search.method_seeds", method, valid, " (a search method)")
        at_least(f"search.method_seeds.{method}", seeds, 1)
    at_least("search.budget_factor", s["budget_factor"], 1, " (B = budget_factor × |Θ|)")
    optional_at_least("search.budget", s["budget"], 1, f"B = budget_factor × |Θ| = {s['budget_factor'] * size}")
    positive("search.eta_c", s["eta_c"], " (SBX distribution index)")
    positive("search.eta_m", s["eta_m"], " (polynomial-mutation distribution index)")
    mu = s["mu"]
    if not 2 <= mu <= size:
        raise ConfigError("search.mu", mu, f"null (derived: {derived_mu(size)}) or an integer in 2..{size} (μ ≤ {theta}: the "
                          "initial population is drawn without replacement)")
    budget = search_budget(size, s["budget"], s["budget_factor"])
    population = _population_methods(s["methods"])
    if population and budget < mu:
        raise ConfigError("search.budget", s["budget"], f"null or an integer ≥ search.mu = {mu} ({', '.join(population)} "
                          "start with a population of μ proposals)")
    live = s["live"]
    if live["methods"] is not None:
        _methods("search.live.methods", live["methods"], valid)
    at_least("search.live.seeds", live["seeds"], 1)
    optional_at_least("search.live.budget", live["budget"], 1, f"the table-mode B = {budget}")
    at_least("search.live.batch_size", live["batch_size"], 1, " (configurations evaluated in parallel per round)")
    _stopping("search.live.stop_at_recall", live["stop_at_recall"])
    choice("search.live.executor", live["executor"], LIVE_EXECUTORS, " (where a round's configurations are evaluated)")
    population = _population_methods(live_methods(s))
    if population and live["budget"] is not None and live["budget"] < mu:
        raise ConfigError("search.live.budget", live["budget"], f"null or an integer ≥ search.mu = {mu} ({', '.join(population)} "
                          "start with a population of μ proposals)")
    for key in ("table2_methods", "fig3_methods", "fig4_methods"):
        distinct_names(f"search.{key}", s[key], s["methods"], "search methods", " (a subset of search.methods)")
    file_names("search.summary_benchmarks", s["summary_benchmarks"], "every benchmark with traces")
    tune = s["tune"]
    for key in ("eta_c", "eta_m"):
        non_empty(f"search.tune.{key}", tune[key], "numbers > 0")
        for i, v in enumerate(tune[key]):
            positive(f"search.tune.{key}[{i}]", v)
        distinct(f"search.tune.{key}", tune[key])
    non_empty("search.tune.mu", tune["mu"], "integers ≥ 2 (or null: derived)")
    high = size if tune["benchmarks"] is None else None
    for i, v in enumerate(tune["mu"]):
        if v < 2 or (high is not None and v > high):
            allowed = f"an integer in 2..{high} (μ ≤ {theta})" if high is not None else "an integer ≥ 2"
            raise ConfigError(f"search.tune.mu[{i}]", v, allowed)
    distinct("search.tune.mu", tune["mu"])
    at_least("search.tune.seeds", tune["seeds"], 1)
    in_range("search.tune.threshold", tune["threshold"], 0, 1)
    file_names("search.tune.benchmarks", tune["benchmarks"], "the configured benchmark")

