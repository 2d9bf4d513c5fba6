"""The root of the typed configuration (conf/ through Hydra, or params.yaml) and `validate_config`.

Every group of `conf/config.yaml` is a dataclass usable as an OmegaConf structured config. Values come
from conf/ only: every field is mandatory (`???`), so a key missing from the composition is an error
rather than a silent default. `model` (the model under test, a group of its own: `model=<name>`),
`benchmark.dataset` and `benchmark.features` depend on their `kind`: each kind has its own dataclass
(`MODEL_KINDS`, `DATASET_KINDS`, `FEATURE_KINDS`), as has each model kind of the paired-evaluation zoo
(the catalog's `ZOO_KINDS`), so unknown keys are rejected for every kind but `external` (a user's plug-in,
whose own keys are its constructor's arguments). One module per group holds its typed nodes and rules.

The choices the design names each have one short override: `model=<name>` (conf/model/), `benchmark=<name>`
(conf/benchmark/), `modality=<name>` (conf/modality/: picks that modality's benchmark), `fidelity=[...]`
and `search.budget=<n>`. The schema rejects a model, data set, perturbation or fidelity metric that does not
fit the benchmark's modality, and a `modality` choice that contradicts the benchmark's.

`validate_config(cfg)` merges a configuration into `Config` (unknown keys and wrong types are rejected by
OmegaConf: `search.seeds=1.5` fails, it is not truncated), fills in the defaults that depend on the
benchmark (`derive_defaults`), then checks ranges, names against the registries, and cross-field rules.
Every rejection is a `ConfigError` whose text is one line: `<full.key>: <bad value> — <what is allowed>`.

Derived defaults (a null in the config means "derive from the benchmark"):

* `search.mu` = min(110, max(2, ⌊|Θ|/2⌋)): the paper's μ = 110 wherever Θ has at least 220
  configurations (6^4 = 1,296 gives 110), else half of Θ, so the initial population (drawn without
  replacement) leaves part of Θ to search; `benchmark=tiny` (|Θ| = 3^2 = 9) gets μ = 4.
* `search.tune.mu` = the paper's grid (20, 50, 80, 110) scaled by μ/110, rounded, at least 2, without
  repeats: the paper's grid for 6^4, [2, 3, 4] for `benchmark=tiny`. It cannot be derived when
  `search.tune.benchmarks` names other benchmarks (their Θ is unknown until their tables are read).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pipeline.plugins.catalog import ZOO_KINDS
from pipeline.config.benchmark import FEATURE_KINDS, BenchmarkConfig, check_benchmark
from pipeline.config.dataset import DATASET_KINDS
from pipeline.config.errors import ConfigError, Text
from pipeline.config.fuzz import FuzzConfig, check_fuzz, plugin_adapter_node, split_plugin_adapters
from pipeline.config.merge import (
    declared_type,
    describe_type,
    kind_node,
    merge,
    missing,
    plain,
    typecheck,
)
from pipeline.config.model import MODEL_KINDS
from pipeline.config.paired import (
    PairedConfig,
    check_paired,
    check_screening,
    zoo_entries,
)
from pipeline.config.rules import (
    DEVICE_CHOICES,
    at_least,
    distinct,
    file_name,
    is_device_name,
)
from pipeline.config.search import (
    SearchConfig,
    check_search,
    derived_mu,
    derived_tune_mu,
    search_budget,
)
from pipeline.plugins.registry import load_import_path

__all__ = ["Config", "apply_overrides", "derive_defaults", "derived_mu", "derived_tune_mu", "search_budget", "space_size",
           "validate_config"]


@dataclass
class PathsConfig:
    data: str = MISSING
    outputs: str = MISSING


@dataclass
class ReportConfig:
    """Conventions of the reported tables and figures (`pipeline.front.composition`)."""

    count_identity: bool = MISSING


@dataclass
class AssessConfig:
    """A user's run (`scripts/assess.py`): the keyword arguments of `pipeline.assess.Settings`, which Hydra's
    `instantiate` builds from this node (its search settings are `search.live`'s, by interpolation)."""

    _target_: str = "pipeline.assess.Settings"
    method: str = MISSING                 # the search method (search.recommended)
    batch_size: int = MISSING             # q configurations a round (search.live.batch_size)
    executor: str = MISSING               # search.live.executor
    submitit: Any = MISSING               # search.live.submitit
    stop_at_recall: Any = MISSING         # the stopping rule (search.live.stop_at_recall)
    budget: Any = MISSING                 # proposals B (search.live.budget)
    workers: int = MISSING                # processes a round is split over (0: every core)
    seed: int = MISSING
    exhaustive: bool = MISSING            # also evaluate all of Θ and score the search against P*
    racing: bool = MISSING                # race configurations over the inputs (accuracy tasks; pipeline.search.racing.racing)
    min_fidelity: Any = MISSING           # "what breaks it": front members with ρ ≥ this (null: the front's median ρ); a
                                          # comparison's fidelity floor: a number or {metric: number} (null: none)
    top: int = MISSING                    # configurations the terminal summary lists per metric
    tolerance: float = MISSING            # a comparison: Δ a regression must exceed (pipeline.assess.regressions)
    level: float = MISSING                # a comparison: the confidence of its verdicts, simultaneous
    fail_on: str | None = MISSING         # a comparison: "regression" exits 1 when the verdict is one
    replay: str | None = MISSING          # an earlier run's folder: evaluate exactly its front and regressions


@dataclass
class Config:
    """The whole composition of conf/config.yaml (= params.yaml)."""

    model: Any = MISSING                       # the model under test (kind-dependent)
    baseline: Any = None                       # model@baseline=<conf/model file>: the model a comparison holds the model against
    benchmark: BenchmarkConfig = field(default_factory=BenchmarkConfig)
    fidelity: list[str] = MISSING              # the fidelity metrics φ
    modality: str | None = None                # set only by `modality=<name>`; must match benchmark.modality
    suite: list[str] = MISSING                 # the other benchmarks dvc repro runs (conf/benchmark/ names)
    paired_suite: list[str] = MISSING          # the other paired sources dvc repro runs (conf/paired/ names)
    search: SearchConfig = field(default_factory=SearchConfig)
    paired: PairedConfig = field(default_factory=PairedConfig)
    fuzz: FuzzConfig = field(default_factory=FuzzConfig)
    seed: int = MISSING
    workers: int = MISSING
    device: str = MISSING                      # where models and fidelity metrics run (pipeline.runtime.device)
    shard: int = MISSING
    num_shards: int = MISSING
    paths: PathsConfig = field(default_factory=PathsConfig)
    report: ReportConfig = field(default_factory=ReportConfig)
    run: str | None = MISSING                  # scripts/assess.py: the run's name (outputs/runs/<run>/)
    assess: AssessConfig = field(default_factory=AssessConfig)


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _kind_node_open(data: Any, key: str, table: Mapping[str, type], what: str) -> DictConfig:
    """`kind_node`, except that an open kind (`external`) keeps the keys beyond its dataclass: they are its
    implementation's own arguments."""
    kind = data.get("kind") if isinstance(data, Mapping) else None
    if not getattr(table.get(kind), "open", False):
        return kind_node(data, key, table, what)
    known = _fields(table[kind])
    node = kind_node({k: v for k, v in data.items() if k in known}, key, table, what)
    return OmegaConf.create({**OmegaConf.to_container(node), **{k: v for k, v in data.items() if k not in known}})


def space_size(cfg: DictConfig | Mapping[str, Any]) -> int:
    """|Θ| = levels ^ len(perturbations) of the configured benchmark."""
    bench = cfg["benchmark"]
    return int(bench["levels"]) ** len(bench["perturbations"])


def derive_defaults(cfg: DictConfig) -> DictConfig:
    """Fill in the benchmark-dependent defaults in place (see the module docstring): a null `search.mu`
    becomes `derived_mu(|Θ|)`, a null `search.tune.mu` `derived_tune_mu(|Θ|)` unless
    `search.tune.benchmarks` names other benchmarks. Returns `cfg`."""
    size = space_size(cfg)
    if cfg.search.mu is None:
        cfg.search.mu = derived_mu(size)
    if cfg.search.tune.mu is None and not cfg.search.tune.benchmarks:
        cfg.search.tune.mu = derived_tune_mu(size)
    return cfg


def apply_overrides(cfg: DictConfig, overrides: Sequence[str]) -> DictConfig:
    """`cfg` with `key=value` overrides merged in, as `--params` / `dvc exp run -S` do (values parsed as
    YAML, OmegaConf's dotlist); an override that cannot be applied is a ConfigError. Validate afterwards."""
    import yaml

    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(item, Text("(no '=')"), "an override of the form key=value")
        try:
            cfg.merge_with_dotlist([item])
        except (OmegaConfBaseException, yaml.YAMLError) as err:
            declared = declared_type(Config, key)
            first = (getattr(err, "msg", None) or str(err)).splitlines()[0]
            allowed = describe_type(declared) if declared is not None else f"a value that fits {key} ({first})"
            raise ConfigError(key, Text(text), allowed) from None
    return cfg


def validate_config(cfg: DictConfig | Mapping[str, Any]) -> DictConfig:
    """The configuration `cfg` (Hydra's composition, params.yaml, or a dict) merged into `Config`,
    with derived defaults filled in and every rule checked. A top-level `hydra` node is ignored.
    Raises `ConfigError` (one line: key, bad value, what is allowed) on the first violation."""
    data = plain(cfg)
    data.pop("hydra", None)
    fuzz, plugin_adapters = split_plugin_adapters(data.get("fuzz"))
    if fuzz is not None:
        data["fuzz"] = fuzz
    merged = merge(Config, data)
    OmegaConf.set_struct(merged.fuzz.adapters, False)
    for name, node in plugin_adapters.items():
        merged.fuzz.adapters[name] = plugin_adapter_node(name, node)
    missing(merged, Config)
    bench = data["benchmark"]
    merged.benchmark.dataset = _kind_node_open(bench.get("dataset"), "benchmark.dataset", DATASET_KINDS, "dataset")
    merged.model = _kind_node_open(data.get("model"), "model", MODEL_KINDS, "model")
    if bench.get("features") is not None:
        merged.benchmark.features = kind_node(bench.get("features"), "benchmark.features", FEATURE_KINDS, "feature extractor")
    merged.paired.records.models = zoo_entries(merged.paired.records.models)
    if merged.model.kind == "external":
        merged.benchmark.adequacy = None  # a user's model is a black box: the adequacy metrics read a built-in's layers
    missing(merged, Config)
    c = OmegaConf.to_container(merged)
    typecheck(Config, c, "")
    for key, node, table in (("model", c["model"], MODEL_KINDS), ("benchmark.dataset", c["benchmark"]["dataset"], DATASET_KINDS),
                             ("benchmark.features", c["benchmark"]["features"], FEATURE_KINDS)):
        if node is not None:
            typecheck(table[node["kind"]], {k: v for k, v in node.items() if k in _fields(table[node["kind"]])}, key)
    for i, entry in enumerate(c["paired"]["records"]["models"]):
        typecheck(load_import_path(ZOO_KINDS.facts(entry["kind"])["config"]), entry, f"paired.records.models[{i}]")
    check_top(c)
    size = check_benchmark(c["benchmark"], c["model"], c["fidelity"], c["modality"])
    if c["search"]["tune"]["mu"] is None and c["search"]["tune"]["benchmarks"]:
        raise ConfigError("search.tune.mu", None, "a list of integers ≥ 2: μ cannot be derived when search.tune.benchmarks names "
                          "other benchmarks (their Θ is unknown)")
    derive_defaults(merged)
    c = OmegaConf.to_container(merged)
    check_search(c["search"], c["benchmark"], c["fidelity"], size)
    check_paired(c["paired"])
    check_screening(c["paired"])
    check_fuzz(c["fuzz"])
    return merged


def check_top(c: dict[str, Any]) -> None:
    """Rules of the top-level keys: seed, suites, workers, device, shards, paths, the run's name and its settings."""
    at_least("seed", c["seed"], 0)
    for i, name in enumerate(c["suite"]):
        file_name(f"suite[{i}]", name)
    distinct("suite", c["suite"])
    for i, name in enumerate(c["paired_suite"]):
        file_name(f"paired_suite[{i}]", name)
    distinct("paired_suite", c["paired_suite"])
    at_least("workers", c["workers"], 0, " (0 = all cores)")
    if not is_device_name(c["device"]):
        raise ConfigError("device", c["device"], f"one of {DEVICE_CHOICES}")
    at_least("num_shards", c["num_shards"], 1)
    if not 0 <= c["shard"] < c["num_shards"]:
        raise ConfigError("shard", c["shard"], f"an integer in 0..{c['num_shards'] - 1} (num_shards = {c['num_shards']})")
    for key in ("data", "outputs"):
        if not c["paths"][key].strip():
            raise ConfigError(f"paths.{key}", c["paths"][key], "a non-empty folder path")
    if c["run"] is not None:
        file_name("run", c["run"])
    at_least("assess.top", c["assess"]["top"], 1)


