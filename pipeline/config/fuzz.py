"""`fuzz` (conf/fuzz/): the structural-robustness campaign ("Adversarial Robustness and the Model Robustness Index": MRI, sensitivity profile,
adversarial threshold search) and the settings of each adapter: the three built-ins, and a user's own
(`PluginAdapterConfig`, any entry of `fuzz.adapters` with a `_target_`)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from omegaconf import MISSING, DictConfig, OmegaConf

from pipeline.plugins.catalog import (
    CONTINUOUS_FAMILIES,
    FRONTIER_SCOPES,
    FUZZ_ADAPTERS,
    MAX_CONTINUOUS_SEVERITY,
)
from pipeline.config.errors import ConfigError
from pipeline.config.merge import MISSING_VALUE, declared_type, describe_type, merge
from pipeline.config.rules import (
    at_least,
    choice,
    distinct_names,
    in_range,
    non_empty,
    optional_at_least,
    positive,
)
from pipeline.plugins.registry import is_import_path

DIGIT_SPLITS = ("train", "dev", "test")


@dataclass
class CampaignSettings:
    """Settings of the six-stage campaign shared by every fuzz adapter."""

    max_subset_dims: int | None = MISSING
    n_mri_perturbations: int = MISSING
    mri_scale: float = MISSING
    mri_weights: list[float] = MISSING
    adversarial_tolerance: float = MISSING
    n_adversarial_steps: int = MISSING
    two_phase: bool = MISSING
    n_coarse: int = MISSING
    directional: bool = MISSING
    frontier: str = MISSING
    n_frontier_perturbations: int | None = MISSING
    cvar_alpha: float = MISSING


@dataclass
class GeometricAdapterConfig(CampaignSettings):
    split_seed: int = MISSING
    test_fraction: float = MISSING
    candidate_values: list[float] = MISSING


@dataclass
class WeightsAdapterConfig(CampaignSettings):
    data_dir: str = MISSING
    split: str = MISSING
    n_per_class: int | None = MISSING
    candidate_values: list[float] = MISSING


@dataclass
class SeverityAdapterConfig(CampaignSettings):
    families: list[str] = MISSING
    data_dir: str = MISSING
    split: str = MISSING
    n_per_class: int | None = MISSING
    perturbation_seed: int = MISSING
    operating_severity: float = MISSING


@dataclass
class PluginAdapterConfig(CampaignSettings):
    """A user's adapter (`+fuzz/adapters@fuzz.adapters.<name>=external`, conf/fuzz/adapters/external.yaml): `_target_`
    names a class or factory whose instances are `pipeline.plugins.protocols.FuzzAdapter`s; every key beyond the
    campaign's is passed to it. `candidate_values` null: the adapter's own."""

    _target_: str = MISSING
    candidate_values: list[float] | None = None


@dataclass
class FuzzAdaptersConfig:
    geometric: GeometricAdapterConfig = field(default_factory=GeometricAdapterConfig)
    weights: WeightsAdapterConfig = field(default_factory=WeightsAdapterConfig)
    severity: SeverityAdapterConfig = field(default_factory=SeverityAdapterConfig)


@dataclass
class FuzzConfig:
    adapters: FuzzAdaptersConfig = field(default_factory=FuzzAdaptersConfig)
    adapter: str = MISSING
    seed: int = MISSING
    progress: bool = MISSING


def split_plugin_adapters(fuzz: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """(`fuzz` with the built-in adapters only, the user's adapters): what `FuzzConfig` types, and the entries
    of `fuzz.adapters` it does not know, which `plugin_adapter_node` validates."""
    if not isinstance(fuzz, Mapping) or not isinstance(fuzz.get("adapters"), Mapping):
        return fuzz, {}
    builtin = {f.name for f in dataclasses.fields(FuzzAdaptersConfig)}
    adapters = fuzz["adapters"]
    return ({**fuzz, "adapters": {k: v for k, v in adapters.items() if k in builtin}},
            {k: v for k, v in adapters.items() if k not in builtin})


def plugin_adapter_node(name: str, data: Any) -> DictConfig:
    """A user's adapter entry merged into `PluginAdapterConfig`, its own keys kept as they are."""
    key = f"fuzz.adapters.{name}"
    if not isinstance(data, Mapping) or "_target_" not in data:
        raise ConfigError(key, data, "the settings of a built-in adapter (" + ", ".join(FUZZ_ADAPTERS) + ") or of your own: "
                          "a node with `_target_` (+fuzz/adapters@fuzz.adapters.<name>=external)")
    known = {f.name for f in dataclasses.fields(PluginAdapterConfig)}
    node = merge(PluginAdapterConfig, {k: v for k, v in data.items() if k in known}, f"{key}.")
    absent = sorted(OmegaConf.missing_keys(node))
    if absent:
        raise ConfigError(f"{key}.{absent[0]}", MISSING_VALUE, "a value is required: "
                          + describe_type(declared_type(PluginAdapterConfig, absent[0])))
    if not is_import_path(node["_target_"]):
        raise ConfigError(f"{key}._target_", node["_target_"], "the import path of your adapter's class or factory, e.g. "
                          "my_pkg.fuzz.MyAdapter")
    return OmegaConf.create({**OmegaConf.to_container(node), **{k: v for k, v in data.items() if k not in known}})


def check_fuzz(f: dict[str, Any]) -> None:
    """Rules of `fuzz`: the adapter and each adapter's campaign settings (the structural-robustness chapter)."""
    plugins = [name for name, a in f["adapters"].items() if name not in FUZZ_ADAPTERS]
    choice("fuzz.adapter", f["adapter"], [*FUZZ_ADAPTERS, *plugins])
    at_least("fuzz.seed", f["seed"], 0)
    for name, a in f["adapters"].items():
        key = f"fuzz.adapters.{name}"
        optional_at_least(f"{key}.max_subset_dims", a["max_subset_dims"], 1, "every subset")
        at_least(f"{key}.n_mri_perturbations", a["n_mri_perturbations"], 1)
        positive(f"{key}.mri_scale", a["mri_scale"], " (σ of the log-normal factor)")
        w = a["mri_weights"]
        if len(w) != 3 or not all(math.isfinite(x) and x >= 0 for x in w) or not sum(w) > 0:
            raise ConfigError(f"{key}.mri_weights", w, "three non-negative numbers, not all 0 (weights of mean, P75, P95)")
        tol = a["adversarial_tolerance"]
        if not (tol >= 0 and math.isfinite(tol)):
            raise ConfigError(f"{key}.adversarial_tolerance", tol, "a finite number ≥ 0")
        at_least(f"{key}.n_adversarial_steps", a["n_adversarial_steps"], 2, " (the base value and one step)")
        if not 2 <= a["n_coarse"] <= a["n_adversarial_steps"]:
            raise ConfigError(f"{key}.n_coarse", a["n_coarse"], f"an integer in 2..{a['n_adversarial_steps']} "
                              f"(2..{key}.n_adversarial_steps)")
        choice(f"{key}.frontier", a["frontier"], list(FRONTIER_SCOPES))
        optional_at_least(f"{key}.n_frontier_perturbations", a["n_frontier_perturbations"], 1, "n_mri_perturbations")
        in_range(f"{key}.cvar_alpha", a["cvar_alpha"], 0, 1, "(]")
        if a.get("candidate_values") is not None:
            non_empty(f"{key}.candidate_values", a["candidate_values"], "finite numbers > 0")
            for i, v in enumerate(a["candidate_values"]):
                positive(f"{key}.candidate_values[{i}]", v)
        if "split" in a and name in FUZZ_ADAPTERS:  # a user's adapter checks its own arguments
            if not a["data_dir"].strip():
                raise ConfigError(f"{key}.data_dir", a["data_dir"], "a non-empty folder name under paths.data")
            choice(f"{key}.split", a["split"], DIGIT_SPLITS)
            optional_at_least(f"{key}.n_per_class", a["n_per_class"], 1, "every image of the split")
    geo = f["adapters"]["geometric"]
    at_least("fuzz.adapters.geometric.split_seed", geo["split_seed"], 0)
    in_range("fuzz.adapters.geometric.test_fraction", geo["test_fraction"], 0, 1, "()")
    sev = f["adapters"]["severity"]
    distinct_names("fuzz.adapters.severity.families", sev["families"], list(CONTINUOUS_FAMILIES), "perturbation families")
    if sev["max_subset_dims"] is not None and sev["max_subset_dims"] > len(sev["families"]):
        raise ConfigError("fuzz.adapters.severity.max_subset_dims", sev["max_subset_dims"],
                          f"null or an integer in 1..{len(sev['families'])} (the number of families)")
    at_least("fuzz.adapters.severity.perturbation_seed", sev["perturbation_seed"], 0)
    in_range("fuzz.adapters.severity.operating_severity", sev["operating_severity"], 0, MAX_CONTINUOUS_SEVERITY, "(]")
