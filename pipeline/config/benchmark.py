"""`benchmark` (conf/benchmark/): the clean test set D (`pipeline.config.dataset`), the space Θ of
perturbations and levels, the task metric ψ, the KID feature network and the adequacy settings; and the
rules tying them to the model under test and the fidelity metrics."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from omegaconf import MISSING

from pipeline.plugins.catalog import (
    ADEQUACY,
    FIDELITY,
    MAX_LEVEL,
    MODALITIES,
    PERTURBATIONS,
    TASK_METRICS,
    VISION,
)
from pipeline.config.dataset import DATASET_KINDS, check_dataset
from pipeline.config.errors import ConfigError
from pipeline.config.model import MODEL_KINDS, check_cnn, check_model
from pipeline.config.rules import (
    at_least,
    choice,
    distinct,
    distinct_names,
    file_name,
    in_range,
    non_empty,
)
from pipeline.plugins.registry import is_import_path


@dataclass
class DigitsCNNFeatures:
    """KID features: a second digits CNN, trained by the prepare stage (never the model under test)."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ("digits",)
    target: ClassVar[str] = "pipeline.benchmark.build:digits_features"
    kind: str = "digits_cnn"
    width: int = MISSING
    epochs: int = MISSING
    seed: int = MISSING


@dataclass
class InceptionFeatures:
    """torchmetrics' Inception-v3 features of dimension `dim`."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ()
    dims: ClassVar[tuple[int, ...]] = (64, 192, 768, 2048)
    target: ClassVar[str] = "pipeline.benchmark.build:inception_features"
    kind: str = "inception"
    dim: int = MISSING


FEATURE_KINDS: dict[str, type] = {"digits_cnn": DigitsCNNFeatures, "inception": InceptionFeatures}


@dataclass
class KidConfig:
    subset_size: int = MISSING
    subsets: int = MISSING


@dataclass
class PerturbStoreConfig:
    """The perturbation store of a benchmark (stage `perturb`, `pipeline.perturb.materialize`): T_θ on disk,
    read by the ground truth of every model and shard of the benchmark."""

    enabled: bool = True        # false: every ground truth perturbs in memory (prefix reuse)
    max_order: int | None = None  # store only θ with at most this many non-zero levels (null: all of Θ)


@dataclass
class AdequacyConfig:
    """The input-level adequacy metrics computed per configuration in the ground-truth forward pass
    (TestNav §4.4, Fig. 4; `pipeline.adequacy`, whose settings docstring gives the reasons for the values)."""

    metrics: list[str] = MISSING
    nac_threshold: float = MISSING
    kmnc_sections: int = MISSING
    tknc_k: int = MISSING


# `benchmark.adapt_inputs`: how a vision benchmark brings clean images smaller than a perturbation needs (the
# ImageNet-C corruptions: 32 x 32) up to that size before any work (`pipeline.benchmark.conformance`); null refuses them
ADAPT_INPUTS = {"pad": "pad each image with its edge pixels, centred",
                "resize": "resize each image, bilinear, keeping its aspect"}


@dataclass
class BenchmarkConfig:
    """`benchmark`: dataset, the space Θ, the task metric ψ, and what KID needs (kind-dependent feature
    network and subset sizes; null on a benchmark without KID). `adapt_inputs`: null, or how images smaller
    than a perturbation needs are brought up to its size (`ADAPT_INPUTS`); images that fit are left as they are."""

    name: str = MISSING
    modality: str = MISSING
    dataset: Any = MISSING
    features: Any = None
    perturbations: list[str] = MISSING
    levels: int = MISSING
    task_metric: str = MISSING
    kid: KidConfig | None = None
    adequacy: AdequacyConfig | None = None
    store: PerturbStoreConfig = field(default_factory=PerturbStoreConfig)
    adapt_inputs: str | None = None
    seed: int = MISSING
    batch_size: int = MISSING
    gallery_index: int = MISSING


def check_benchmark(b: dict[str, Any], model: dict[str, Any], fidelity: list[str], chosen: str | None) -> int:
    """Rules of the benchmark, the model under test, the fidelity metrics and the modality choice; returns |Θ|."""
    file_name("benchmark.name", b["name"])
    modality = b["modality"]
    modalities = sorted(MODALITIES)
    choice("benchmark.modality", modality, modalities)
    if chosen is not None:
        choice("modality", chosen, modalities)
        if chosen != modality:
            raise ConfigError("modality", chosen, f"the modality of benchmark {b['name']!r}, {modality!r} (`modality=` picks a "
                              "benchmark of its own; do not combine it with a benchmark of another modality)")
    file_name("model.name", model["name"])
    ds, feats = b["dataset"], b["features"]
    for key, node, table in (("model", model, MODEL_KINDS), ("benchmark.dataset", ds, DATASET_KINDS),
                             ("benchmark.features", feats, FEATURE_KINDS)):
        if node is None:
            continue
        what = key.rpartition(".")[2]
        fits = [k for k, cls in table.items() if cls.modality == modality]
        if table[node["kind"]].modality not in (None, modality):
            raise ConfigError(f"{key}.kind", node["kind"], f"a {what} kind of modality {modality!r}: "
                              f"{', '.join(fits) or 'none in the schema yet'}")
        needs = getattr(table[node["kind"]], "datasets", ())
        if needs and ds["kind"] not in needs:
            fits = [k for k, cls in table.items() if not cls.datasets or ds["kind"] in cls.datasets]
            raise ConfigError(f"{key}.kind", node["kind"], f"a kind that fits dataset {ds['kind']!r}: {', '.join(fits)} "
                              f"({node['kind']!r} is trained by the prepare stage on the {', '.join(needs)} splits)")
    limit = check_dataset(ds, b["task_metric"])
    check_model(model)
    if feats is not None and feats["kind"] == "digits_cnn":
        check_cnn("benchmark.features", feats)
    if feats is not None and feats["kind"] == "inception":
        choice("benchmark.features.dim", feats["dim"], InceptionFeatures.dims)

    perts = b["perturbations"]
    fit = [n for n in sorted(PERTURBATIONS) if PERTURBATIONS.facts(n)["modality"] == modality]
    non_empty("benchmark.perturbations", perts, f"perturbations of modality {modality!r} among {', '.join(fit)}")
    for i, name in enumerate(perts):
        if is_import_path(name):
            continue  # a plug-in: its modality and levels are checked when the stage builds it
        if name not in PERTURBATIONS or PERTURBATIONS.facts(name)["modality"] != modality:
            other = f" ({name!r} is {PERTURBATIONS.facts(name)['modality']!r})" if name in PERTURBATIONS else ""
            raise ConfigError(f"benchmark.perturbations[{i}]", name, f"a perturbation of modality {modality!r}{other}: {', '.join(fit)}")
    distinct("benchmark.perturbations", perts)
    adapt = b["adapt_inputs"]
    if adapt is not None and modality != VISION:
        raise ConfigError("benchmark.adapt_inputs", adapt,
                          f"null (benchmark {b['name']!r} is {modality!r}; pad and resize adapt images)")
    if adapt is not None and adapt not in ADAPT_INPUTS:
        ways = "; ".join(f"{k} ({v})" for k, v in ADAPT_INPUTS.items())
        raise ConfigError("benchmark.adapt_inputs", adapt,
                          f"null (refuse images smaller than a perturbation needs) or one of: {ways}")
    if b["store"]["max_order"] is not None:
        in_range("benchmark.store.max_order", b["store"]["max_order"], 0, len(perts), "[]",
                  " (the number of non-zero levels of a stored θ; null = all of Θ)")
    top = min((PERTURBATIONS.facts(n)["max_level"] for n in perts if n in PERTURBATIONS), default=MAX_LEVEL)
    if not 2 <= b["levels"] <= top + 1:
        raise ConfigError("benchmark.levels", b["levels"], f"an integer in 2..{top + 1} (level 0 = identity; the perturbations "
                          f"have levels 0..{top})")
    if not is_import_path(b["task_metric"]):
        choice("benchmark.task_metric", b["task_metric"], sorted(TASK_METRICS))
    fit = FIDELITY.where(modality=modality)
    non_empty("fidelity", fidelity, f"fidelity metrics among {', '.join(fit)} (modality {modality!r})")
    for i, name in enumerate(fidelity):
        if is_import_path(name):
            continue
        if name not in FIDELITY or FIDELITY.facts(name)["modality"] != modality:
            other = f" ({name!r} is {FIDELITY.facts(name)['modality']!r})" if name in FIDELITY else ""
            raise ConfigError(f"fidelity[{i}]", name, f"one of {', '.join(fit)}{other}")
    distinct("fidelity", fidelity)
    if "kid" in fidelity:
        for key in ("features", "kid"):
            if b[key] is None:
                raise ConfigError(f"benchmark.{key}", None, "a mapping: KID is among the fidelity metrics (its feature network "
                                  "and subset sizes)")
        at_least("benchmark.kid.subset_size", b["kid"]["subset_size"], 1)
        at_least("benchmark.kid.subsets", b["kid"]["subsets"], 1)
    adequacy = b["adequacy"]
    if adequacy is not None:
        observers = [k for k, cls in MODEL_KINDS.items() if getattr(cls, "adequacy", False)]
        if model["kind"] not in observers:
            raise ConfigError("benchmark.adequacy", adequacy, f"null: the adequacy metrics read the layers of a model of kind "
                              f"{', '.join(observers)}, not {model['kind']!r}")
        distinct_names("benchmark.adequacy.metrics", adequacy["metrics"], list(ADEQUACY), "adequacy metrics")
        in_range("benchmark.adequacy.nac_threshold", adequacy["nac_threshold"], 0, 1, "[)")
        at_least("benchmark.adequacy.kmnc_sections", adequacy["kmnc_sections"], 1)
        at_least("benchmark.adequacy.tknc_k", adequacy["tknc_k"], 1)
    at_least("benchmark.seed", b["seed"], 0)
    at_least("benchmark.batch_size", b["batch_size"], 1)
    at_least("benchmark.gallery_index", b["gallery_index"], 0)
    if limit is not None and b["gallery_index"] >= limit:
        raise ConfigError("benchmark.gallery_index", b["gallery_index"], f"an integer in 0..{limit - 1} (the dataset keeps {limit} inputs)")
    return b["levels"] ** len(perts)

