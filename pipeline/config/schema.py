"""The typed schema of the composed configuration (conf/ through Hydra, or params.yaml) and `validate_config`.

Every group of `conf/config.yaml` is a dataclass usable as an OmegaConf structured config. Values come
from conf/ only: every field is mandatory (`???`), so a key missing from the composition is an error
rather than a silent default. `model` (the model under test, a group of its own: `model=<name>`),
`benchmark.dataset` and `benchmark.features` depend on their `kind`: each kind has its own dataclass
(`MODEL_KINDS`, `DATASET_KINDS`, `FEATURE_KINDS`), as has each model kind of the paired-evaluation zoo
(`ZOO_KINDS`), so unknown keys are rejected for every kind.

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
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, is_dataclass
from types import UnionType
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

from pipeline.config.errors import MISSING_VALUE, ConfigError, Text
from pipeline.device import DEVICE_CHOICES, is_device_name

# ---- the schema -------------------------------------------------------------------------------------


@dataclass
class PathsConfig:
    data: str = MISSING
    outputs: str = MISSING


@dataclass
class DigitsDataset:
    """The embedded scikit-learn digits, upsampled to `size` × `size` RGB."""

    modality: ClassVar[str] = "vision"
    kind: str = "digits"
    size: int = MISSING
    split_seed: int = MISSING
    test_limit: int | None = MISSING


@dataclass
class TinyImagenetDataset:
    """Tiny-ImageNet validation images read from `root`."""

    modality: ClassVar[str] = "vision"
    kind: str = "tiny_imagenet"
    root: str = MISSING
    limit: int | None = MISSING
    size: int | None = MISSING


@dataclass
class BBCNewsDataset:
    """The embedded text data set: BBC News lead paragraphs labelled by section (`pipeline.data.text_corpus`)."""

    modality: ClassVar[str] = "text"
    kind: str = "bbc_news"
    split_seed: int = MISSING
    test_size: int | None = MISSING


@dataclass
class HumanEvalDataset:
    """The embedded code data set: HumanEval problems with their tests (`pipeline.data.humaneval`), each
    prompt held `variants` times in D (ReCode's s perturbed variants per problem of RP_s@1)."""

    modality: ClassVar[str] = "code"
    kind: str = "humaneval"
    problems: int | None = MISSING          # `problems` HumanEval problems from index `first` (null = all from `first`)
    first: int = 0                          # index of the first problem of D (0 = HumanEval/0)
    variants: int = MISSING                 # s of RP_s@1: perturbed variants (seeds) per problem
    fidelity_variants: int | None = MISSING  # the first k variants of each problem that φ scores (null = all)
    timeout_s: float = MISSING              # sandbox wall-clock limit of one test run


@dataclass
class QQPDataset:
    """Quora Question Pairs read from a local GLUE copy or `datasets` folder at `root` (`pipeline.data.qqp`):
    the first `limit` dev pairs (null = all)."""

    modality: ClassVar[str] = "text"
    kind: str = "qqp"
    root: str | None = MISSING
    limit: int | None = MISSING


@dataclass
class DigitsCNNModel:
    """The small CNN trained by the prepare stage on the digits splits."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ("digits",)
    name: str = MISSING
    kind: str = "digits_cnn"
    width: int = MISSING
    epochs: int = MISSING
    seed: int = MISSING


@dataclass
class TorchvisionModel:
    """A torchvision classifier with local weights."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ()  # any dataset of its modality
    name: str = MISSING
    kind: str = "torchvision"
    arch: str = MISSING
    num_classes: int = MISSING
    weights_path: str | None = MISSING
    input_size: int = MISSING


@dataclass
class TextHeadModel:
    """A logistic-regression head on the frozen all-MiniLM-L6-v2 sentence encoder, trained by the prepare stage."""

    modality: ClassVar[str] = "text"
    datasets: ClassVar[tuple[str, ...]] = ("bbc_news",)
    name: str = MISSING
    kind: str = "text_head"
    C: float = MISSING
    max_iter: int = MISSING


@dataclass
class CodeRetrievalModel:
    """The memorising retrieval code model (`pipeline.models.code_retrieval`) over a bank of all 164 HumanEval
    problems and their canonical solutions: the nearest bank prompt's solution if its similarity ≥ threshold."""

    modality: ClassVar[str] = "code"
    datasets: ClassVar[tuple[str, ...]] = ("humaneval",)
    name: str = MISSING
    kind: str = "code_retrieval"
    threshold: float = MISSING
    ngrams: list[int] = MISSING   # [low, high]: character n-gram lengths of the TF-IDF embedding


@dataclass
class CodeLLMModel:
    """A local causal LM completing each prompt greedily (`pipeline.models.code_llm`): a GGUF file or a checkpoint
    folder, run by transformers or llama.cpp, with a persistent generation cache."""

    modality: ClassVar[str] = "code"
    datasets: ClassVar[tuple[str, ...]] = ("humaneval",)
    runtimes: ClassVar[tuple[str, ...]] = ("transformers", "llama_cpp")
    name: str = MISSING
    kind: str = "code_llm"
    path: str | None = MISSING    # GGUF file or checkpoint folder (conf/model/*.yaml read it from an environment variable)
    runtime: str = MISSING
    max_new_tokens: int = MISSING
    stop: list[str] = MISSING     # stop sequences: the completion ends before the first one


@dataclass
class SequenceClassifierModel:
    """A Hugging Face sequence-pair classification checkpoint in a local folder (`pipeline.models.pair_classifier`),
    e.g. RoBERTa-base fine-tuned on QQP; not trained here."""

    modality: ClassVar[str] = "text"
    datasets: ClassVar[tuple[str, ...]] = ("qqp",)
    name: str = MISSING
    kind: str = "sequence_classifier"
    weights_path: str | None = MISSING
    max_length: int = MISSING     # tokens per pair, special tokens included (longest-first truncation)


@dataclass
class DigitsCNNFeatures:
    """KID features: a second digits CNN, trained by the prepare stage (never the model under test)."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ("digits",)
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
    kind: str = "inception"
    dim: int = MISSING


DATASET_KINDS: dict[str, type] = {"digits": DigitsDataset, "tiny_imagenet": TinyImagenetDataset, "bbc_news": BBCNewsDataset,
                                  "humaneval": HumanEvalDataset, "qqp": QQPDataset}
MODEL_KINDS: dict[str, type] = {"digits_cnn": DigitsCNNModel, "torchvision": TorchvisionModel, "text_head": TextHeadModel,
                                "code_retrieval": CodeRetrievalModel, "sequence_classifier": SequenceClassifierModel,
                                "code_llm": CodeLLMModel}
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


@dataclass
class BenchmarkConfig:
    """`benchmark`: dataset, the space Θ, the task metric ψ, and what KID needs (kind-dependent feature
    network and subset sizes; null on a benchmark without KID)."""

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
    seed: int = MISSING
    batch_size: int = MISSING
    gallery_index: int = MISSING


@dataclass
class LiveSearchConfig:
    methods: list[str] = MISSING
    seeds: int = MISSING
    budget: int | None = MISSING


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
    methods: list[str] = MISSING
    metrics: list[str] | None = MISSING
    seeds: int = MISSING
    budget_factor: int = MISSING
    budget: int | None = MISSING
    eta_c: float = MISSING
    eta_m: float = MISSING
    mu: int | None = MISSING
    selection: str = MISSING
    eliminate_duplicates: bool = MISSING
    live: LiveSearchConfig = field(default_factory=LiveSearchConfig)
    table2_methods: list[str] = MISSING
    fig3_methods: list[str] = MISSING
    fig4_methods: list[str] = MISSING
    summary_benchmarks: list[str] | None = MISSING
    tune: TuneConfig = field(default_factory=TuneConfig)


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


ZOO_KINDS: dict[str, type] = {"cnn": ZooCNN, "mlp": ZooMLP, "logreg": ZooLogreg, "forest": ZooForest, "knn": ZooKNN,
                              "minilm_logreg": ZooTextLogreg, "minilm_mlp": ZooMiniLMMLP, "minilm_knn": ZooMiniLMKNN,
                              "tfidf_logreg": ZooTextLogreg, "tfidf_nb": ZooTfidfNB}


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


@dataclass
class ReportConfig:
    """Conventions of the reported tables and figures (`pipeline.front_composition`)."""

    count_identity: bool = MISSING


@dataclass
class Config:
    """The whole composition of conf/config.yaml (= params.yaml)."""

    model: Any = MISSING                       # the model under test (kind-dependent)
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
    device: str = MISSING                      # where models and fidelity metrics run (pipeline.device)
    shard: int = MISSING
    num_shards: int = MISSING
    paths: PathsConfig = field(default_factory=PathsConfig)
    report: ReportConfig = field(default_factory=ReportConfig)


def register_schema(name: str = "config_schema") -> None:
    """Store `Config` in Hydra's ConfigStore under `name` (for a defaults list that extends the schema)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name=name, node=Config)


# ---- constants of the rules -------------------------------------------------------------------------

PAPER_MU = 110
PAPER_TUNE_MU = (20, 50, 80, 110)
SEARCH_MODES = ("table", "live")
PAIRED_LEVELS = ("I0", "Ik", "I5")
RECAPTURE_SOURCES = ("embedded", "es", "diverse")  # paired.recapture.source (pipeline/paired/es_source.py)
DIGIT_SPLITS = ("train", "dev", "test")
ADEQUACY_MODELS = ("digits_cnn", "text_head")  # model kinds with an adequacy observer (pipeline.builders.OBSERVERS)
_NAME = re.compile(r"^(?!\.+$)[A-Za-z0-9_.=-]+$")  # not "." or ".."


def derived_mu(space_size: int) -> int:
    """μ for a space of `space_size` configurations: min(110, max(2, ⌊|Θ|/2⌋))."""
    return min(PAPER_MU, max(2, int(space_size) // 2))


def derived_tune_mu(space_size: int) -> list[int]:
    """The paper's μ grid (20, 50, 80, 110) scaled to `derived_mu(space_size)`: rounded, ≥ 2, no repeats."""
    mu = derived_mu(space_size)
    return sorted({max(2, math.floor(m * mu / PAPER_MU + 0.5)) for m in PAPER_TUNE_MU})


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


# ---- turning OmegaConf's errors into one line -------------------------------------------------------

_PLURAL = {int: "integers", float: "numbers", str: "strings", bool: "booleans"}
_SINGULAR = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def describe_type(tp: Any) -> str:
    """What a value of type hint `tp` looks like, in words."""
    if tp is Any:
        return "any value"
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        inner = [a for a in args if a is not type(None)]
        return "null or " + (describe_type(inner[0]) if len(inner) == 1 else "a value")
    if origin is list:
        elem = args[0] if args else Any
        return "a list of " + _PLURAL.get(elem, "values" if elem is Any else describe_type(elem))
    if is_dataclass(tp):
        return "a mapping with keys " + ", ".join(f.name for f in dataclasses.fields(tp))
    return _SINGULAR.get(tp, getattr(tp, "__name__", str(tp)))


def _path(key: str) -> list[str | int]:
    return [int(t) if t.isdigit() else t for t in re.findall(r"[^.\[\]]+", key)]


def _lookup(data: Any, key: str) -> Any:
    for token in _path(key):
        try:
            data = data[token]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _strip_optional(tp: Any) -> Any:
    if get_origin(tp) in (Union, UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        return inner[0] if len(inner) == 1 else tp
    return tp


def _field_type(err: OmegaConfBaseException) -> Any:
    """The declared type of the node an OmegaConf error is about, if it can be found."""
    owner = err.object_type if is_dataclass(err.object_type) else err.ref_type
    if is_dataclass(owner) and isinstance(err.key, str):
        return get_type_hints(owner).get(err.key)
    ref = _strip_optional(err.ref_type)
    if get_origin(ref) is list and isinstance(err.key, int):
        return get_args(ref)[0]
    return None


def _wrap(err: OmegaConfBaseException, data: Any, prefix: str = "", owner: str | None = None) -> ConfigError:
    """A ConfigError naming the full dotted key, the bad value and what is allowed."""
    key = prefix + (err.full_key or "")
    if isinstance(err, ConfigKeyError):
        parent = key.rpartition(".")[0] or "the top level"
        cls = err.object_type if is_dataclass(err.object_type) else err.ref_type
        valid = ", ".join(sorted(f.name for f in dataclasses.fields(cls))) if is_dataclass(cls) else "none"
        return ConfigError(key, _lookup(data, key[len(prefix):]), f"not a key of {owner or parent}; valid keys: {valid}")
    tp = _field_type(err)
    value = err.value if err.value is not None else _lookup(data, key[len(prefix):])
    if isinstance(value, (DictConfig, ListConfig)):
        value = OmegaConf.to_container(value)
    expected = describe_type(tp) if tp is not None else (err.msg or str(err)).splitlines()[0]
    return ConfigError(key or "config", value, expected)


def _prewalk(cls: type, data: Any, key: str) -> None:
    """A group given as a scalar (e.g. `search.live=3`): OmegaConf's merge error would not name the key."""
    if not isinstance(data, Mapping):
        raise ConfigError(key or "config", data, describe_type(cls))
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in data and is_dataclass(hints[f.name]):
            _prewalk(hints[f.name], data[f.name], f"{key}.{f.name}" if key else f.name)


def _merge(schema: type, data: Mapping[str, Any], prefix: str = "", owner: str | None = None) -> DictConfig:
    _prewalk(schema, data, prefix.rstrip("."))
    try:
        return OmegaConf.merge(OmegaConf.structured(schema), data)
    except OmegaConfBaseException as err:
        raise _wrap(err, data, prefix, owner) from None


def _plain(cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(cfg, DictConfig):
        try:
            return OmegaConf.to_container(cfg, resolve=True)
        except OmegaConfBaseException as err:
            value = _lookup(OmegaConf.to_container(cfg, resolve=False), err.full_key or "")
            first = (err.msg or str(err)).splitlines()[0]
            raise ConfigError(err.full_key or "config", value, f"an interpolation that resolves ({first})") from None
    if not isinstance(cfg, Mapping):
        raise ConfigError("config", cfg, "a mapping of config groups")
    return OmegaConf.to_container(OmegaConf.create(dict(cfg)), resolve=True)


def _kind_node(data: Any, key: str, table: Mapping[str, type], what: str) -> DictConfig:
    """`data` merged into the dataclass of its `kind`; unknown kinds and keys are errors."""
    if not isinstance(data, Mapping):
        raise ConfigError(key, data, f"a mapping with a kind among {', '.join(table)}")
    kind = data.get("kind")
    if kind not in table:
        raise ConfigError(f"{key}.kind", kind, f"one of {', '.join(table)}")
    return _merge(table[kind], data, f"{key}.", owner=f"{key} (a {what} of kind {kind!r})")


_IS = {
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    str: lambda v: isinstance(v, str),
    bool: lambda v: isinstance(v, bool),
}


def _typecheck(tp: Any, value: Any, key: str) -> None:
    """Every value of the merged config has its declared type (a second line of defence behind
    OmegaConf's merge, which lets e.g. a nested list through into a list of numbers)."""
    if tp is Any:
        return
    if get_origin(tp) in (Union, UnionType):
        if value is None:
            return
        tp = _strip_optional(tp)
    if is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise ConfigError(key, value, describe_type(tp))
        hints = get_type_hints(tp)
        for f in dataclasses.fields(tp):
            if f.name in value:
                _typecheck(hints[f.name], value[f.name], f"{key}.{f.name}" if key else f.name)
    elif get_origin(tp) is list:
        if not isinstance(value, list):
            raise ConfigError(key, value, describe_type(tp))
        for i, v in enumerate(value):
            _typecheck(get_args(tp)[0], v, f"{key}[{i}]")
    elif tp in _IS and not _IS[tp](value):
        raise ConfigError(key, value, describe_type(tp))


def _missing(cfg: DictConfig) -> None:
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        node_type = _declared_type(missing[0])
        raise ConfigError(missing[0], MISSING_VALUE, "a value is required" + (f": {describe_type(node_type)}" if node_type else ""))


def _declared_type(key: str) -> Any:
    cls: Any = Config
    for token in _path(key):
        if not is_dataclass(cls) or not isinstance(token, str):
            return None
        cls = get_type_hints(cls).get(token)
    return cls


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
            declared = _declared_type(key)
            first = (getattr(err, "msg", None) or str(err)).splitlines()[0]
            allowed = describe_type(declared) if declared is not None else f"a value that fits {key} ({first})"
            raise ConfigError(key, Text(text), allowed) from None
    return cfg


# ---- rule helpers ------------------------------------------------------------------------------------

def _at_least(key: str, value: int, low: int, note: str = "") -> None:
    if value < low:
        raise ConfigError(key, value, f"an integer ≥ {low}{note}")


def _optional_at_least(key: str, value: int | None, low: int, null_means: str) -> None:
    if value is not None and value < low:
        raise ConfigError(key, value, f"null ({null_means}) or an integer ≥ {low}")


def _in_range(key: str, value: float, low: float, high: float, closed: str = "[]", note: str = "") -> None:
    ok_low = value >= low if closed[0] == "[" else value > low
    ok_high = value <= high if closed[1] == "]" else value < high
    if not (ok_low and ok_high and math.isfinite(value)):
        raise ConfigError(key, value, f"a number in {closed[0]}{low:g}, {high:g}{closed[1]}{note}")


def _positive(key: str, value: float, note: str = "") -> None:
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(key, value, f"a finite number > 0{note}")


def _choice(key: str, value: Any, choices: Sequence[Any], note: str = "") -> None:
    if value not in choices:
        raise ConfigError(key, value, f"one of {', '.join(str(c) for c in choices)}{note}")


def _non_empty(key: str, values: Sequence[Any], what: str) -> None:
    if len(values) == 0:
        raise ConfigError(key, list(values), f"a non-empty list of {what}")


def _distinct(key: str, values: Sequence[Any]) -> None:
    seen: set[Any] = set()
    for i, v in enumerate(values):
        if v in seen:
            raise ConfigError(f"{key}[{i}]", v, f"a value not already listed in {key} (each entry once)")
        seen.add(v)


def _names(key: str, values: Sequence[str], choices: Sequence[str], what: str, note: str = "") -> None:
    """A non-empty list of distinct names, each among `choices`."""
    _non_empty(key, values, f"{what} among {', '.join(choices)}")
    for i, v in enumerate(values):
        _choice(f"{key}[{i}]", v, choices, note)
    _distinct(key, values)


def _file_names(key: str, values: Sequence[str] | None, null_means: str) -> None:
    if values is None:
        return
    _non_empty(key, values, f"names (or null: {null_means})")
    for i, v in enumerate(values):
        _file_name(f"{key}[{i}]", v)
    _distinct(key, values)


def _file_name(key: str, value: str) -> None:
    if not _NAME.match(value):
        raise ConfigError(key, value, "a non-empty name of letters, digits and _ . = - (it names files and folders)")


# ---- the rules ---------------------------------------------------------------------------------------

def validate_config(cfg: DictConfig | Mapping[str, Any]) -> DictConfig:
    """The configuration `cfg` (Hydra's composition, params.yaml, or a dict) merged into `Config`,
    with derived defaults filled in and every rule checked. A top-level `hydra` node is ignored.
    Raises `ConfigError` (one line: key, bad value, what is allowed) on the first violation."""
    data = _plain(cfg)
    data.pop("hydra", None)
    merged = _merge(Config, data)
    _missing(merged)
    bench = data["benchmark"]
    merged.benchmark.dataset = _kind_node(bench.get("dataset"), "benchmark.dataset", DATASET_KINDS, "dataset")
    merged.model = _kind_node(data.get("model"), "model", MODEL_KINDS, "model")
    if bench.get("features") is not None:
        merged.benchmark.features = _kind_node(bench.get("features"), "benchmark.features", FEATURE_KINDS, "feature extractor")
    merged.paired.records.models = _zoo(merged.paired.records.models)
    _missing(merged)
    c = OmegaConf.to_container(merged)
    _typecheck(Config, c, "")
    for key, node, table in (("model", c["model"], MODEL_KINDS), ("benchmark.dataset", c["benchmark"]["dataset"], DATASET_KINDS),
                             ("benchmark.features", c["benchmark"]["features"], FEATURE_KINDS)):
        if node is not None:
            _typecheck(table[node["kind"]], node, key)
    for i, entry in enumerate(c["paired"]["records"]["models"]):
        _typecheck(ZOO_KINDS[entry["kind"]], entry, f"paired.records.models[{i}]")
    _check_top(c)
    size = _check_benchmark(c["benchmark"], c["model"], c["fidelity"], c["modality"])
    if c["search"]["tune"]["mu"] is None and c["search"]["tune"]["benchmarks"]:
        raise ConfigError("search.tune.mu", None, "a list of integers ≥ 2: μ cannot be derived when search.tune.benchmarks names "
                          "other benchmarks (their Θ is unknown)")
    derive_defaults(merged)
    c = OmegaConf.to_container(merged)
    _check_search(c["search"], c["benchmark"], c["fidelity"], size)
    _check_paired(c["paired"])
    _check_screening(c["paired"])
    _check_fuzz(c["fuzz"])
    return merged


def _zoo(models: ListConfig) -> list[dict[str, Any]]:
    """Each zoo entry checked against its kind; only the options it sets are kept (the zoo has defaults)."""
    out = []
    for i, entry in enumerate(OmegaConf.to_container(models)):
        key = f"paired.records.models[{i}]"
        node = _kind_node(entry, key, ZOO_KINDS, "zoo model")
        for name in ("name", "family"):
            if OmegaConf.is_missing(node, name):
                raise ConfigError(f"{key}.{name}", MISSING_VALUE, "a value is required: a string")
        out.append({k: node[k] for k in entry})
    return out


def _check_top(c: dict[str, Any]) -> None:
    _at_least("seed", c["seed"], 0)
    for i, name in enumerate(c["suite"]):
        _file_name(f"suite[{i}]", name)
    _distinct("suite", c["suite"])
    for i, name in enumerate(c["paired_suite"]):
        _file_name(f"paired_suite[{i}]", name)
    _distinct("paired_suite", c["paired_suite"])
    _at_least("workers", c["workers"], 0, " (0 = all cores)")
    if not is_device_name(c["device"]):
        raise ConfigError("device", c["device"], f"one of {DEVICE_CHOICES}")
    _at_least("num_shards", c["num_shards"], 1)
    if not 0 <= c["shard"] < c["num_shards"]:
        raise ConfigError("shard", c["shard"], f"an integer in 0..{c['num_shards'] - 1} (num_shards = {c['num_shards']})")
    for key in ("data", "outputs"):
        if not c["paths"][key].strip():
            raise ConfigError(f"paths.{key}", c["paths"][key], "a non-empty folder path")


def _check_benchmark(b: dict[str, Any], model: dict[str, Any], fidelity: list[str], chosen: str | None) -> int:
    """Rules of the benchmark, the model under test, the fidelity metrics and the modality choice; returns |Θ|."""
    from pipeline.benchmark import TASK_METRICS
    from pipeline.builders import FIDELITY
    from pipeline.perturb.registry import available, get_perturbation

    _file_name("benchmark.name", b["name"])
    families = {name: get_perturbation(name) for name in available()}
    modality = b["modality"]
    modalities = sorted({p.modality for p in families.values()})
    _choice("benchmark.modality", modality, modalities)
    if chosen is not None:
        _choice("modality", chosen, modalities)
        if chosen != modality:
            raise ConfigError("modality", chosen, f"the modality of benchmark {b['name']!r}, {modality!r} (`modality=` picks a "
                              "benchmark of its own; do not combine it with a benchmark of another modality)")
    _file_name("model.name", model["name"])
    ds, feats = b["dataset"], b["features"]
    for key, node, table in (("model", model, MODEL_KINDS), ("benchmark.dataset", ds, DATASET_KINDS),
                             ("benchmark.features", feats, FEATURE_KINDS)):
        if node is None:
            continue
        what = key.rpartition(".")[2]
        fits = [k for k, cls in table.items() if cls.modality == modality]
        if table[node["kind"]].modality != modality:
            raise ConfigError(f"{key}.kind", node["kind"], f"a {what} kind of modality {modality!r}: "
                              f"{', '.join(fits) or 'none in the schema yet'}")
        needs = getattr(table[node["kind"]], "datasets", ())
        if needs and ds["kind"] not in needs:
            fits = [k for k, cls in table.items() if not cls.datasets or ds["kind"] in cls.datasets]
            raise ConfigError(f"{key}.kind", node["kind"], f"a kind that fits dataset {ds['kind']!r}: {', '.join(fits)} "
                              f"({node['kind']!r} is trained by the prepare stage on the {', '.join(needs)} splits)")
    limit = None
    if ds["kind"] == "digits":
        _at_least("benchmark.dataset.size", ds["size"], 8, " (the digits' native resolution is 8)")
        _at_least("benchmark.dataset.split_seed", ds["split_seed"], 0)
        _optional_at_least("benchmark.dataset.test_limit", ds["test_limit"], 1, "all images")
        limit = ds["test_limit"]
    elif ds["kind"] == "bbc_news":
        _at_least("benchmark.dataset.split_seed", ds["split_seed"], 0)
        _optional_at_least("benchmark.dataset.test_size", ds["test_size"], 5, "the full test split; one lead per section at least")
        limit = ds["test_size"]
    elif ds["kind"] == "humaneval":
        from pipeline.data.humaneval import HUMANEVAL_SIZE

        if not 0 <= ds["first"] < HUMANEVAL_SIZE:
            raise ConfigError("benchmark.dataset.first", ds["first"], f"an integer in 0..{HUMANEVAL_SIZE - 1} (a HumanEval index)")
        left = HUMANEVAL_SIZE - ds["first"]
        if ds["problems"] is not None and not 1 <= ds["problems"] <= left:
            raise ConfigError("benchmark.dataset.problems", ds["problems"], f"null (all {left} from benchmark.dataset.first) or "
                              f"an integer in 1..{left}")
        _at_least("benchmark.dataset.variants", ds["variants"], 1, " (RP5@1: 5)")
        if ds["fidelity_variants"] is not None and not 1 <= ds["fidelity_variants"] <= ds["variants"]:
            raise ConfigError("benchmark.dataset.fidelity_variants", ds["fidelity_variants"], f"null (all) or an integer in "
                              f"1..{ds['variants']} (benchmark.dataset.variants)")
        _positive("benchmark.dataset.timeout_s", ds["timeout_s"], " (seconds)")
        _choice("benchmark.task_metric", b["task_metric"], ["robust_pass"], " (a code benchmark's model answers pass or fail "
                "per variant)")
        limit = (ds["problems"] or left) * ds["variants"]
    elif ds["kind"] == "qqp":
        if ds["root"] is None or not ds["root"].strip():
            raise ConfigError("benchmark.dataset.root", ds["root"], "a local QQP copy: a GLUE folder (QQP/dev.tsv or dev.tsv) or a "
                              "`datasets` save_to_disk folder; set the environment variable QQP_ROOT (read by "
                              "conf/benchmark/qqp.yaml) or pass benchmark.dataset.root=<folder>")
        _optional_at_least("benchmark.dataset.limit", ds["limit"], 1, "the whole dev split")
        limit = ds["limit"]
    else:
        if not ds["root"].strip():
            raise ConfigError("benchmark.dataset.root", ds["root"], "a non-empty folder path")
        _optional_at_least("benchmark.dataset.limit", ds["limit"], 1, "all images")
        _optional_at_least("benchmark.dataset.size", ds["size"], 1, "keep the native size")
        limit = ds["limit"]
    for key, node in (("model", model), ("benchmark.features", feats)):
        if node is not None and node["kind"] == "digits_cnn":
            _at_least(f"{key}.width", node["width"], 1)
            _at_least(f"{key}.epochs", node["epochs"], 1)
            _at_least(f"{key}.seed", node["seed"], 0)
    if model["kind"] == "text_head":
        _positive("model.C", model["C"], " (inverse regularisation strength)")
        _at_least("model.max_iter", model["max_iter"], 1)
    if model["kind"] == "code_retrieval":
        _in_range("model.threshold", model["threshold"], 0, 1, "[]", " (cosine similarity at which the model answers)")
        grams = model["ngrams"]
        if len(grams) != 2 or not 1 <= grams[0] <= grams[1]:
            raise ConfigError("model.ngrams", grams, "[low, high] with 1 ≤ low ≤ high (character n-gram lengths)")
    if model["kind"] == "code_llm":
        if model["path"] is None or not model["path"].strip():
            raise ConfigError("model.path", model["path"], "a local GGUF file or causal-LM checkpoint folder; set the "
                              "environment variable CODE_LLM_GGUF (read by conf/model/qwen_coder_gguf.yaml; `make llm` "
                              "fetches that model) or CODEGEN_WEIGHTS (conf/model/codegen_2b_mono.yaml), or pass model.path=<path>")
        _choice("model.runtime", model["runtime"], CodeLLMModel.runtimes)
        _at_least("model.max_new_tokens", model["max_new_tokens"], 1)
        if any(not s for s in model["stop"]):
            raise ConfigError("model.stop", list(model["stop"]), "a list of non-empty stop sequences")
    if model["kind"] == "sequence_classifier":
        if model["weights_path"] is None or not model["weights_path"].strip():
            raise ConfigError("model.weights_path", model["weights_path"], "a local Hugging Face sequence-classification "
                              "checkpoint folder; set the environment variable ROBERTA_QQP_WEIGHTS (read by "
                              "conf/model/roberta_qqp.yaml) or pass model.weights_path=<folder>")
        _at_least("model.max_length", model["max_length"], 2, " (tokens per pair, special tokens included)")
    if model["kind"] == "torchvision":
        _at_least("model.num_classes", model["num_classes"], 1)
        _at_least("model.input_size", model["input_size"], 1)
    if feats is not None and feats["kind"] == "inception":
        _choice("benchmark.features.dim", feats["dim"], InceptionFeatures.dims)

    perts = b["perturbations"]
    fit = [n for n, p in families.items() if p.modality == modality]
    _non_empty("benchmark.perturbations", perts, f"perturbations of modality {modality!r} among {', '.join(fit)}")
    for i, name in enumerate(perts):
        if name not in families or families[name].modality != modality:
            other = f" ({name!r} is {families[name].modality!r})" if name in families else ""
            raise ConfigError(f"benchmark.perturbations[{i}]", name, f"a perturbation of modality {modality!r}{other}: {', '.join(fit)}")
    _distinct("benchmark.perturbations", perts)
    if b["store"]["max_order"] is not None:
        _in_range("benchmark.store.max_order", b["store"]["max_order"], 0, len(perts), "[]",
                  " (the number of non-zero levels of a stored θ; null = all of Θ)")
    top = min(families[n].max_level for n in perts)
    if not 2 <= b["levels"] <= top + 1:
        raise ConfigError("benchmark.levels", b["levels"], f"an integer in 2..{top + 1} (level 0 = identity; the perturbations "
                          f"have levels 0..{top})")
    _choice("benchmark.task_metric", b["task_metric"], sorted(TASK_METRICS))
    fit = [n for n, f in FIDELITY.items() if f.modality == modality]
    _non_empty("fidelity", fidelity, f"fidelity metrics among {', '.join(fit)} (modality {modality!r})")
    for i, name in enumerate(fidelity):
        if name not in FIDELITY or FIDELITY[name].modality != modality:
            other = f" ({name!r} is {FIDELITY[name].modality!r})" if name in FIDELITY else ""
            raise ConfigError(f"fidelity[{i}]", name, f"one of {', '.join(fit)}{other}")
    _distinct("fidelity", fidelity)
    if "kid" in fidelity:
        for key in ("features", "kid"):
            if b[key] is None:
                raise ConfigError(f"benchmark.{key}", None, "a mapping: KID is among the fidelity metrics (its feature network "
                                  "and subset sizes)")
        _at_least("benchmark.kid.subset_size", b["kid"]["subset_size"], 1)
        _at_least("benchmark.kid.subsets", b["kid"]["subsets"], 1)
    adequacy = b["adequacy"]
    if adequacy is not None:
        from pipeline.adequacy import ADEQUACY

        if model["kind"] not in ADEQUACY_MODELS:
            raise ConfigError("benchmark.adequacy", adequacy, f"null: the adequacy metrics read the layers of a model of kind "
                              f"{', '.join(ADEQUACY_MODELS)}, not {model['kind']!r}")
        _names("benchmark.adequacy.metrics", adequacy["metrics"], list(ADEQUACY), "adequacy metrics")
        _in_range("benchmark.adequacy.nac_threshold", adequacy["nac_threshold"], 0, 1, "[)")
        _at_least("benchmark.adequacy.kmnc_sections", adequacy["kmnc_sections"], 1)
        _at_least("benchmark.adequacy.tknc_k", adequacy["tknc_k"], 1)
    _at_least("benchmark.seed", b["seed"], 0)
    _at_least("benchmark.batch_size", b["batch_size"], 1)
    _at_least("benchmark.gallery_index", b["gallery_index"], 0)
    if limit is not None and b["gallery_index"] >= limit:
        raise ConfigError("benchmark.gallery_index", b["gallery_index"], f"an integer in 0..{limit - 1} (the dataset keeps {limit} inputs)")
    return b["levels"] ** len(perts)


def _population_methods(methods: Sequence[str], classes: Mapping[str, Any]) -> list[str]:
    return [m for m in methods if "mu" in classes[m].hyperparameters()]


def _check_search(s: dict[str, Any], bench: dict[str, Any], fidelity: list[str], size: int) -> None:
    from pipeline.search.budget import search_budget
    from pipeline.search.registry import METHODS

    valid = list(METHODS)
    theta = f"|Θ| = {bench['levels']}^{len(bench['perturbations'])} = {size}"
    _choice("search.mode", s["mode"], SEARCH_MODES)
    from pipeline.search.variation import TOURNAMENTS

    _choice("search.selection", s["selection"], list(TOURNAMENTS), " (NSGA-II parent selection)")
    _names("search.methods", s["methods"], valid, "search methods")
    if s["metrics"] is not None:
        _names("search.metrics", s["metrics"], fidelity, "fidelity metrics", " (search.metrics ⊆ fidelity)")
    _at_least("search.seeds", s["seeds"], 1)
    _at_least("search.budget_factor", s["budget_factor"], 1, " (B = budget_factor × |Θ|)")
    _optional_at_least("search.budget", s["budget"], 1, f"B = budget_factor × |Θ| = {s['budget_factor'] * size}")
    _positive("search.eta_c", s["eta_c"], " (SBX distribution index)")
    _positive("search.eta_m", s["eta_m"], " (polynomial-mutation distribution index)")
    mu = s["mu"]
    if not 2 <= mu <= size:
        raise ConfigError("search.mu", mu, f"null (derived: {derived_mu(size)}) or an integer in 2..{size} (μ ≤ {theta}: the "
                          "initial population is drawn without replacement)")
    budget = search_budget(size, s["budget"], s["budget_factor"])
    population = _population_methods(s["methods"], METHODS)
    if population and budget < mu:
        raise ConfigError("search.budget", s["budget"], f"null or an integer ≥ search.mu = {mu} ({', '.join(population)} "
                          "start with a population of μ proposals)")
    live = s["live"]
    _names("search.live.methods", live["methods"], valid, "search methods")
    _at_least("search.live.seeds", live["seeds"], 1)
    _optional_at_least("search.live.budget", live["budget"], 1, f"the table-mode B = {budget}")
    population = _population_methods(live["methods"], METHODS)
    if population and live["budget"] is not None and live["budget"] < mu:
        raise ConfigError("search.live.budget", live["budget"], f"null or an integer ≥ search.mu = {mu} ({', '.join(population)} "
                          "start with a population of μ proposals)")
    for key in ("table2_methods", "fig3_methods", "fig4_methods"):
        _names(f"search.{key}", s[key], s["methods"], "search methods", " (a subset of search.methods)")
    _file_names("search.summary_benchmarks", s["summary_benchmarks"], "every benchmark with traces")
    tune = s["tune"]
    for key in ("eta_c", "eta_m"):
        _non_empty(f"search.tune.{key}", tune[key], "numbers > 0")
        for i, v in enumerate(tune[key]):
            _positive(f"search.tune.{key}[{i}]", v)
        _distinct(f"search.tune.{key}", tune[key])
    _non_empty("search.tune.mu", tune["mu"], "integers ≥ 2 (or null: derived)")
    high = size if tune["benchmarks"] is None else None
    for i, v in enumerate(tune["mu"]):
        if v < 2 or (high is not None and v > high):
            allowed = f"an integer in 2..{high} (μ ≤ {theta})" if high is not None else "an integer ≥ 2"
            raise ConfigError(f"search.tune.mu[{i}]", v, allowed)
    _distinct("search.tune.mu", tune["mu"])
    _at_least("search.tune.seeds", tune["seeds"], 1)
    _in_range("search.tune.threshold", tune["threshold"], 0, 1)
    _file_names("search.tune.benchmarks", tune["benchmarks"], "the configured benchmark")


def _check_paired(p: dict[str, Any]) -> None:
    from pipeline.perturb.registry import available, get_perturbation

    from pipeline.models.zoo import MODALITY as ZOO_MODALITY
    from pipeline.paired.pools import POOLS

    _file_name("paired.source", p["source"])
    rec = p["records"]
    modality = POOLS.get(rec["pool"]).modality if rec["pool"] in POOLS else None
    if modality is None:
        raise ConfigError("paired.records.pool", rec["pool"], f"one of {', '.join(POOLS)}")
    _at_least("paired.records.seed", rec["seed"], 0)
    if modality == "vision":
        if rec["image_size"] is None:
            raise ConfigError("paired.records.image_size", None, "an integer ≥ 8 for an image pool")
        _at_least("paired.records.image_size", rec["image_size"], 8, " (the digits' native resolution is 8)")
    elif rec["image_size"] is not None:
        raise ConfigError("paired.records.image_size", rec["image_size"], f"null: pool {rec['pool']!r} holds {modality}, not images")
    _in_range("paired.records.dev_fraction", rec["dev_fraction"], 0, 1, "()", " (both dev and eval need images)")
    _optional_at_least("paired.records.test_limit", rec["test_limit"], 1, "all images")
    families = {name: get_perturbation(name) for name in available()}
    fit = [n for n, f in families.items() if f.modality == modality]
    _names("paired.records.corruptions", rec["corruptions"], fit, "corruptions")
    top = min(families[n].max_level for n in rec["corruptions"])
    _non_empty("paired.records.severities", rec["severities"], f"integers in 1..{top}")
    for i, v in enumerate(rec["severities"]):
        if not 1 <= v <= top:
            raise ConfigError(f"paired.records.severities[{i}]", v, f"an integer in 1..{top} (0 is the identity)")
    _distinct("paired.records.severities", rec["severities"])
    models = rec["models"]
    _non_empty("paired.records.models", models, "zoo models")
    for i, m in enumerate(models):
        key = f"paired.records.models[{i}]"
        _file_name(f"{key}.name", m["name"])
        if not m["family"].strip():
            raise ConfigError(f"{key}.family", m["family"], "a non-empty group name")
        if ZOO_MODALITY[m["kind"]] != modality:
            raise ConfigError(f"{key}.kind", m["kind"], f"a zoo kind of modality {modality!r} (pool {rec['pool']!r}): "
                              + ", ".join(k for k, v in ZOO_MODALITY.items() if v == modality))
        for opt, low in (("width", 1), ("epochs", 1), ("hidden", 1), ("max_iter", 1), ("feature_size", 1),
                         ("n_estimators", 1), ("n_neighbors", 1), ("seed", 0)):
            if opt in m:
                _at_least(f"{key}.{opt}", m[opt], low)
        if "C" in m:
            _positive(f"{key}.C", m["C"], " (inverse regularisation strength)")
        if "alpha" in m:
            _positive(f"{key}.alpha", m["alpha"], " (additive smoothing)")
    names = [m["name"] for m in models]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(f"paired.records.models[{i}].name", name, "a model name not already used in paired.records.models "
                              "(names key the records)")
    _in_range("paired.clean_coverage", p["clean_coverage"], 0, 1, "(]")
    _non_empty("paired.policy_coverages", p["policy_coverages"], "coverages in (0, 1]")
    for i, v in enumerate(p["policy_coverages"]):
        _in_range(f"paired.policy_coverages[{i}]", v, 0, 1, "(]")
    _distinct("paired.policy_coverages", p["policy_coverages"])
    _non_empty("paired.lambdas", p["lambdas"], "numbers in [0, 1]")
    for i, v in enumerate(p["lambdas"]):
        _in_range(f"paired.lambdas[{i}]", v, 0, 1)
    _distinct("paired.lambdas", p["lambdas"])
    primary = p["primary_lambda"]
    if not any(math.isclose(primary, lam, rel_tol=1e-9, abs_tol=1e-9) for lam in p["lambdas"]):
        raise ConfigError("paired.primary_lambda", primary, f"a value of the paired.lambdas grid: {', '.join(f'{v:g}' for v in p['lambdas'])}")
    _names("paired.levels", p["levels"], list(PAIRED_LEVELS), "information levels")
    absent = [lvl for lvl in PAIRED_LEVELS if lvl not in p["levels"]]
    if absent:
        raise ConfigError("paired.levels", p["levels"], f"all of {', '.join(PAIRED_LEVELS)} (the policies stage compares I0 → Ik "
                          f"→ I5; {', '.join(absent)} missing)")


def _check_screening(p: dict[str, Any]) -> None:
    """`paired.recapture` and `paired.screening` (either may be null: no such stage for the source)."""
    from pipeline.perturb.recapture import LIGHTINGS, N_PARAMS

    r = p["recapture"]
    if r is not None:
        _choice("paired.recapture.source", r["source"], RECAPTURE_SOURCES)
        for key in ("root", "wnids", "train_root"):
            if r["source"] == "embedded" and r[key] is not None:
                raise ConfigError(f"paired.recapture.{key}", r[key], "null for the embedded source (it simulates the records pool)")
            if r["source"] != "embedded" and not (r[key] or "").strip():
                raise ConfigError(f"paired.recapture.{key}", r[key], f"a path: source {r['source']!r} reads its images from disk")
        _at_least("paired.recapture.seed", r["seed"], 0)
        if r["source"] == "embedded":
            _names("paired.recapture.lightings", r["lightings"], sorted(LIGHTINGS), "lighting levels")
        else:
            _non_empty("paired.recapture.lightings", r["lightings"], "lighting or environment folder names")
            _distinct("paired.recapture.lightings", r["lightings"])
        if r["params"] is not None:
            _non_empty("paired.recapture.params", r["params"], f"camera settings in 1..{N_PARAMS} (or null: all)")
            for i, v in enumerate(r["params"]):
                if not 1 <= v <= N_PARAMS:
                    raise ConfigError(f"paired.recapture.params[{i}]", v, f"a camera setting in 1..{N_PARAMS}")
            _distinct("paired.recapture.params", r["params"])
    s = p["screening"]
    if s is None:
        return
    _at_least("paired.screening.seed", s["seed"], 0)
    _non_empty("paired.screening.budgets", s["budgets"], "budgets in (0, 1]")
    for i, v in enumerate(s["budgets"]):
        _in_range(f"paired.screening.budgets[{i}]", v, 0, 1, "(]")
    _distinct("paired.screening.budgets", s["budgets"])
    if not any(math.isclose(s["primary_budget"], q, rel_tol=1e-9, abs_tol=1e-12) for q in s["budgets"]):
        raise ConfigError("paired.screening.primary_budget", s["primary_budget"],
                          f"a value of paired.screening.budgets: {', '.join(f'{q:g}' for q in s['budgets'])}")
    _at_least("paired.screening.group_draws", s["group_draws"], 2)
    _at_least("paired.screening.class_draws", s["class_draws"], 2)
    _at_least("paired.screening.derangements", s["derangements"], 1)
    _non_empty("paired.screening.prefix_sizes", s["prefix_sizes"], "integers ≥ 1 (sizes ≥ the number of synthetic "
               "conditions are skipped: the full set is always reported)")
    for i, m in enumerate(s["prefix_sizes"]):
        _at_least(f"paired.screening.prefix_sizes[{i}]", m, 1)
    _distinct("paired.screening.prefix_sizes", s["prefix_sizes"])
    _at_least("paired.screening.prefix_subsets", s["prefix_subsets"], 1)
    _in_range("paired.screening.practical_effect", s["practical_effect"], 0, 1)
    pred = s["prediction"]
    _non_empty("paired.screening.prediction.alphas", pred["alphas"], "ridge penalties > 0")
    for i, v in enumerate(pred["alphas"]):
        _positive(f"paired.screening.prediction.alphas[{i}]", v, " (ridge penalty)")
    _distinct("paired.screening.prediction.alphas", pred["alphas"])
    _in_range("paired.screening.prediction.coverage", pred["coverage"], 0, 1, "(]")
    _at_least("paired.screening.prediction.draws", pred["draws"], 2)


def _check_fuzz(f: dict[str, Any]) -> None:
    from pipeline.fuzz.adapters import ADAPTERS
    from pipeline.fuzz.campaign import FRONTIER_SCOPES
    from pipeline.perturb.continuous import FAMILIES
    from pipeline.perturb.imagenet_c import MAX_SEVERITY

    _choice("fuzz.adapter", f["adapter"], list(ADAPTERS))
    _at_least("fuzz.seed", f["seed"], 0)
    for name, a in f["adapters"].items():
        key = f"fuzz.adapters.{name}"
        _optional_at_least(f"{key}.max_subset_dims", a["max_subset_dims"], 1, "every subset")
        _at_least(f"{key}.n_mri_perturbations", a["n_mri_perturbations"], 1)
        _positive(f"{key}.mri_scale", a["mri_scale"], " (σ of the log-normal factor)")
        w = a["mri_weights"]
        if len(w) != 3 or not all(math.isfinite(x) and x >= 0 for x in w) or not sum(w) > 0:
            raise ConfigError(f"{key}.mri_weights", w, "three non-negative numbers, not all 0 (weights of mean, P75, P95)")
        tol = a["adversarial_tolerance"]
        if not (tol >= 0 and math.isfinite(tol)):
            raise ConfigError(f"{key}.adversarial_tolerance", tol, "a finite number ≥ 0")
        _at_least(f"{key}.n_adversarial_steps", a["n_adversarial_steps"], 2, " (the base value and one step)")
        if not 2 <= a["n_coarse"] <= a["n_adversarial_steps"]:
            raise ConfigError(f"{key}.n_coarse", a["n_coarse"], f"an integer in 2..{a['n_adversarial_steps']} "
                              f"(2..{key}.n_adversarial_steps)")
        _choice(f"{key}.frontier", a["frontier"], list(FRONTIER_SCOPES))
        _optional_at_least(f"{key}.n_frontier_perturbations", a["n_frontier_perturbations"], 1, "n_mri_perturbations")
        _in_range(f"{key}.cvar_alpha", a["cvar_alpha"], 0, 1, "(]")
        if "candidate_values" in a:
            _non_empty(f"{key}.candidate_values", a["candidate_values"], "finite numbers > 0")
            for i, v in enumerate(a["candidate_values"]):
                _positive(f"{key}.candidate_values[{i}]", v)
        if "split" in a:
            if not a["data_dir"].strip():
                raise ConfigError(f"{key}.data_dir", a["data_dir"], "a non-empty folder name under paths.data")
            _choice(f"{key}.split", a["split"], DIGIT_SPLITS)
            _optional_at_least(f"{key}.n_per_class", a["n_per_class"], 1, "every image of the split")
    geo = f["adapters"]["geometric"]
    _at_least("fuzz.adapters.geometric.split_seed", geo["split_seed"], 0)
    _in_range("fuzz.adapters.geometric.test_fraction", geo["test_fraction"], 0, 1, "()")
    sev = f["adapters"]["severity"]
    _names("fuzz.adapters.severity.families", sev["families"], list(FAMILIES), "perturbation families")
    if sev["max_subset_dims"] is not None and sev["max_subset_dims"] > len(sev["families"]):
        raise ConfigError("fuzz.adapters.severity.max_subset_dims", sev["max_subset_dims"],
                          f"null or an integer in 1..{len(sev['families'])} (the number of families)")
    _at_least("fuzz.adapters.severity.perturbation_seed", sev["perturbation_seed"], 0)
    _in_range("fuzz.adapters.severity.operating_severity", sev["operating_severity"], 0, MAX_SEVERITY, "(]")
