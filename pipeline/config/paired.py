"""`paired` (conf/paired/): the records stage (pool, corruptions, severities, the model zoo), the bounds and
policies analyses, recapture and screening (Paired Evaluations, arXiv 2609.35583, §3-§6)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING, ListConfig, OmegaConf

from pipeline.plugins.catalog import (
    CAMERA_SETTINGS,
    PERTURBATIONS,
    POOLS,
    RECAPTURE_LIGHTINGS,
    ZOO_KINDS,
)
from pipeline.config.errors import MISSING_VALUE, ConfigError
from pipeline.config.merge import kind_node
from pipeline.config.rules import (
    at_least,
    choice,
    distinct,
    distinct_names,
    file_name,
    in_range,
    non_empty,
    optional_at_least,
    positive,
)
from pipeline.plugins.registry import load_import_path

PAIRED_LEVELS = ("I0", "Ik", "I5")
RECAPTURE_SOURCES = ("embedded", "es", "diverse")  # paired.recapture.source (pipeline/paired/records/sources.py)


@dataclass
class ZooModel:
    """A zoo entry: `name`, `family` (its statistical group), `kind`; the kind's options are optional."""

    name: str = MISSING
    family: str = MISSING
    kind: str = MISSING


@dataclass
class ZooCNN(ZooModel):
    width: int = MISSING
    seed: int = MISSING
    epochs: int = MISSING


@dataclass
class ZooMLP(ZooModel):
    hidden: int = MISSING
    seed: int = MISSING
    max_iter: int = MISSING
    feature_size: int = MISSING


@dataclass
class ZooLogreg(ZooModel):
    C: float = MISSING
    max_iter: int = MISSING
    feature_size: int = MISSING


@dataclass
class ZooForest(ZooModel):
    n_estimators: int = MISSING
    seed: int = MISSING
    feature_size: int = MISSING


@dataclass
class ZooKNN(ZooModel):
    n_neighbors: int = MISSING
    feature_size: int = MISSING


@dataclass
class ZooMiniLMMLP(ZooModel):
    hidden: int = MISSING
    seed: int = MISSING
    max_iter: int = MISSING


@dataclass
class ZooTextLogreg(ZooModel):
    C: float = MISSING
    max_iter: int = MISSING


@dataclass
class ZooMiniLMKNN(ZooModel):
    n_neighbors: int = MISSING


@dataclass
class ZooTfidfNB(ZooModel):
    alpha: float = MISSING


@dataclass
class RecordsConfig:
    pool: str = MISSING
    seed: int = MISSING
    image_size: int | None = MISSING
    dev_fraction: float = MISSING
    test_limit: int | None = MISSING
    corruptions: list[str] = MISSING
    severities: list[int] = MISSING
    models: list[Any] = MISSING


@dataclass
class RecaptureConfig:
    """`paired.recapture`: the zoo's records under real recapture conditions (stage `recapture`)."""

    source: str = MISSING
    root: str | None = MISSING
    wnids: str | None = MISSING
    train_root: str | None = MISSING
    seed: int = MISSING
    lightings: list[str] = MISSING
    params: list[int] | None = MISSING


@dataclass
class PredictionConfig:
    """`paired.screening.prediction`: model-level prediction (§6, App. H-I)."""

    alphas: list[float] = MISSING
    coverage: float = MISSING
    draws: int = MISSING


@dataclass
class ScreeningConfig:
    """`paired.screening`: image-level screening (§5, App. E) and model-level prediction (stage `screening`)."""

    seed: int = MISSING
    budgets: list[float] = MISSING
    primary_budget: float = MISSING
    group_draws: int = MISSING
    class_draws: int = MISSING
    derangements: int = MISSING
    prefix_sizes: list[int] = MISSING
    prefix_subsets: int = MISSING
    practical_effect: float = MISSING
    prediction: PredictionConfig = field(default_factory=PredictionConfig)


@dataclass
class PairedConfig:
    """`paired`: the records stage and the bounds / policies analyses."""

    source: str = MISSING
    records: RecordsConfig = field(default_factory=RecordsConfig)
    clean_coverage: float = MISSING
    policy_coverages: list[float] = MISSING
    lambdas: list[float] = MISSING
    primary_lambda: float = MISSING
    levels: list[str] = MISSING
    progress: bool = MISSING
    recapture: RecaptureConfig | None = None     # null: no recapture / screening stages for this source
    screening: ScreeningConfig | None = None


def zoo_entries(models: ListConfig) -> list[dict[str, Any]]:
    """Each zoo entry checked against the typed node of its kind; only the options it sets are kept (the zoo
    has defaults)."""
    kinds = {k: load_import_path(ZOO_KINDS.facts(k)["config"]) for k in ZOO_KINDS}
    out = []
    for i, entry in enumerate(OmegaConf.to_container(models)):
        key = f"paired.records.models[{i}]"
        node = kind_node(entry, key, kinds, "zoo model")
        for name in ("name", "family"):
            if OmegaConf.is_missing(node, name):
                raise ConfigError(f"{key}.{name}", MISSING_VALUE, "a value is required: a string")
        out.append({k: node[k] for k in entry})
    return out


def check_paired(p: dict[str, Any]) -> None:
    """Rules of `paired`: the records stage (pool, corruptions, zoo) and the bounds / policies analyses."""
    file_name("paired.source", p["source"])
    rec = p["records"]
    modality = POOLS.facts(rec["pool"])["modality"] if rec["pool"] in POOLS else None
    if modality is None:
        raise ConfigError("paired.records.pool", rec["pool"], f"one of {', '.join(POOLS)}")
    at_least("paired.records.seed", rec["seed"], 0)
    if modality == "vision":
        if rec["image_size"] is None:
            raise ConfigError("paired.records.image_size", None, "an integer ≥ 8 for an image pool")
        at_least("paired.records.image_size", rec["image_size"], 8, " (the digits' native resolution is 8)")
    elif rec["image_size"] is not None:
        raise ConfigError("paired.records.image_size", rec["image_size"], f"null: pool {rec['pool']!r} holds {modality}, not images")
    in_range("paired.records.dev_fraction", rec["dev_fraction"], 0, 1, "()", " (both dev and eval need images)")
    optional_at_least("paired.records.test_limit", rec["test_limit"], 1, "all images")
    fit = [n for n in sorted(PERTURBATIONS) if PERTURBATIONS.facts(n)["modality"] == modality]
    distinct_names("paired.records.corruptions", rec["corruptions"], fit, "corruptions")
    top = min(PERTURBATIONS.facts(n)["max_level"] for n in rec["corruptions"])
    non_empty("paired.records.severities", rec["severities"], f"integers in 1..{top}")
    for i, v in enumerate(rec["severities"]):
        if not 1 <= v <= top:
            raise ConfigError(f"paired.records.severities[{i}]", v, f"an integer in 1..{top} (0 is the identity)")
    distinct("paired.records.severities", rec["severities"])
    models = rec["models"]
    non_empty("paired.records.models", models, "zoo models")
    for i, m in enumerate(models):
        key = f"paired.records.models[{i}]"
        file_name(f"{key}.name", m["name"])
        if not m["family"].strip():
            raise ConfigError(f"{key}.family", m["family"], "a non-empty group name")
        if ZOO_KINDS.facts(m["kind"])["modality"] != modality:
            raise ConfigError(f"{key}.kind", m["kind"], f"a zoo kind of modality {modality!r} (pool {rec['pool']!r}): "
                              + ", ".join(ZOO_KINDS.where(modality=modality)))
        for opt, low in (("width", 1), ("epochs", 1), ("hidden", 1), ("max_iter", 1), ("feature_size", 1),
                         ("n_estimators", 1), ("n_neighbors", 1), ("seed", 0)):
            if opt in m:
                at_least(f"{key}.{opt}", m[opt], low)
        if "C" in m:
            positive(f"{key}.C", m["C"], " (inverse regularisation strength)")
        if "alpha" in m:
            positive(f"{key}.alpha", m["alpha"], " (additive smoothing)")
    names = [m["name"] for m in models]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"paired.records.models[{i}].name", name, "a model name not already used in paired.records.models "
                              "(names key the records)")
    in_range("paired.clean_coverage", p["clean_coverage"], 0, 1, "(]")
    non_empty("paired.policy_coverages", p["policy_coverages"], "coverages in (0, 1]")
    for i, v in enumerate(p["policy_coverages"]):
        in_range(f"paired.policy_coverages[{i}]", v, 0, 1, "(]")
    distinct("paired.policy_coverages", p["policy_coverages"])
    non_empty("paired.lambdas", p["lambdas"], "numbers in [0, 1]")
    for i, v in enumerate(p["lambdas"]):
        in_range(f"paired.lambdas[{i}]", v, 0, 1)
    distinct("paired.lambdas", p["lambdas"])
    primary = p["primary_lambda"]
    if not any(math.isclose(primary, lam, rel_tol=1e-9, abs_tol=1e-9) for lam in p["lambdas"]):
        raise ConfigError("paired.primary_lambda", primary, f"a value of the paired.lambdas grid: {', '.join(f'{v:g}' for v in p['lambdas'])}")
    distinct_names("paired.levels", p["levels"], list(PAIRED_LEVELS), "information levels")
    absent = [lvl for lvl in PAIRED_LEVELS if lvl not in p["levels"]]
    if absent:
        raise ConfigError("paired.levels", p["levels"], f"all of {', '.join(PAIRED_LEVELS)} (the policies stage compares I0 → Ik "
                          f"→ I5; {', '.join(absent)} missing)")


def check_screening(p: dict[str, Any]) -> None:
    """`paired.recapture` and `paired.screening` (either may be null: no such stage for the source)."""
    r = p["recapture"]
    if r is not None:
        choice("paired.recapture.source", r["source"], RECAPTURE_SOURCES)
        for key in ("root", "wnids", "train_root"):
            if r["source"] == "embedded" and r[key] is not None:
                raise ConfigError(f"paired.recapture.{key}", r[key], "null for the embedded source (it simulates the records pool)")
            if r["source"] != "embedded" and not (r[key] or "").strip():
                raise ConfigError(f"paired.recapture.{key}", r[key], f"a path: source {r['source']!r} reads its images from disk")
        at_least("paired.recapture.seed", r["seed"], 0)
        if r["source"] == "embedded":
            distinct_names("paired.recapture.lightings", r["lightings"], list(RECAPTURE_LIGHTINGS), "lighting levels")
        else:
            non_empty("paired.recapture.lightings", r["lightings"], "lighting or environment folder names")
            distinct("paired.recapture.lightings", r["lightings"])
        if r["params"] is not None:
            non_empty("paired.recapture.params", r["params"], f"camera settings in 1..{CAMERA_SETTINGS} (or null: all)")
            for i, v in enumerate(r["params"]):
                if not 1 <= v <= CAMERA_SETTINGS:
                    raise ConfigError(f"paired.recapture.params[{i}]", v, f"a camera setting in 1..{CAMERA_SETTINGS}")
            distinct("paired.recapture.params", r["params"])
    s = p["screening"]
    if s is None:
        return
    at_least("paired.screening.seed", s["seed"], 0)
    non_empty("paired.screening.budgets", s["budgets"], "budgets in (0, 1]")
    for i, v in enumerate(s["budgets"]):
        in_range(f"paired.screening.budgets[{i}]", v, 0, 1, "(]")
    distinct("paired.screening.budgets", s["budgets"])
    if not any(math.isclose(s["primary_budget"], q, rel_tol=1e-9, abs_tol=1e-12) for q in s["budgets"]):
        raise ConfigError("paired.screening.primary_budget", s["primary_budget"],
                          f"a value of paired.screening.budgets: {', '.join(f'{q:g}' for q in s['budgets'])}")
    at_least("paired.screening.group_draws", s["group_draws"], 2)
    at_least("paired.screening.class_draws", s["class_draws"], 2)
    at_least("paired.screening.derangements", s["derangements"], 1)
    non_empty("paired.screening.prefix_sizes", s["prefix_sizes"], "integers ≥ 1 (sizes ≥ the number of synthetic "
               "conditions are skipped: the full set is always reported)")
    for i, m in enumerate(s["prefix_sizes"]):
        at_least(f"paired.screening.prefix_sizes[{i}]", m, 1)
    distinct("paired.screening.prefix_sizes", s["prefix_sizes"])
    at_least("paired.screening.prefix_subsets", s["prefix_subsets"], 1)
    in_range("paired.screening.practical_effect", s["practical_effect"], 0, 1)
    pred = s["prediction"]
    non_empty("paired.screening.prediction.alphas", pred["alphas"], "ridge penalties > 0")
    for i, v in enumerate(pred["alphas"]):
        positive(f"paired.screening.prediction.alphas[{i}]", v, " (ridge penalty)")
    distinct("paired.screening.prediction.alphas", pred["alphas"])
    in_range("paired.screening.prediction.coverage", pred["coverage"], 0, 1, "(]")
    at_least("paired.screening.prediction.draws", pred["draws"], 2)

