"""`model`: the model under test, a config group of its own (`model=<name>`, conf/model/). Its `kind` names
the typed node below (the keys it takes, its modality, the data sets it fits); its `_target_` names the
implementation `hydra.utils.instantiate` builds (`pipeline.benchmark.plugin_code`). Kind `external` is a user's model:
any `_target_` and any keys, checked against `pipeline.plugins.protocols` when the stage builds it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from omegaconf import MISSING

from pipeline.config.errors import ConfigError
from pipeline.config.rules import at_least, choice, in_range, positive
from pipeline.plugins.registry import is_import_path


@dataclass
class DigitsCNNModel:
    """The small CNN trained by the prepare stage on the digits splits."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ("digits",)
    adequacy: ClassVar[bool] = True   # exposes the layers the adequacy metrics read (an observer)
    trained: ClassVar[bool] = True    # trained by the prepare stage
    name: str = MISSING
    kind: str = "digits_cnn"
    _target_: str = MISSING
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
    _target_: str = MISSING
    arch: str = MISSING
    num_classes: int = MISSING
    weights_path: str | None = MISSING
    input_size: int = MISSING


@dataclass
class TextHeadModel:
    """A logistic-regression head on the frozen all-MiniLM-L6-v2 sentence encoder, trained by the prepare stage."""

    modality: ClassVar[str] = "text"
    datasets: ClassVar[tuple[str, ...]] = ("bbc_news",)
    adequacy: ClassVar[bool] = True
    trained: ClassVar[bool] = True
    name: str = MISSING
    kind: str = "text_head"
    _target_: str = MISSING
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
    _target_: str = MISSING
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
    _target_: str = MISSING
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
    _target_: str = MISSING
    weights_path: str | None = MISSING
    max_length: int = MISSING     # tokens per pair, special tokens included (longest-first truncation)


@dataclass
class HFImageClassifierModel:
    """A Hugging Face image-classification checkpoint in a local `save_pretrained` folder, loaded through
    transformers' Auto classes (`pipeline.models.hf_classifiers`); not trained here."""

    modality: ClassVar[str] = "vision"
    datasets: ClassVar[tuple[str, ...]] = ()
    name: str = MISSING
    kind: str = "hf_image_classifier"
    _target_: str = MISSING
    path: str | None = MISSING


@dataclass
class HFSequenceClassifierModel:
    """A Hugging Face sequence-classification checkpoint in a local `save_pretrained` folder (texts or text
    pairs), loaded through transformers' Auto classes (`pipeline.models.hf_classifiers`); not trained here."""

    modality: ClassVar[str] = "text"
    datasets: ClassVar[tuple[str, ...]] = ()
    name: str = MISSING
    kind: str = "hf_sequence_classifier"
    _target_: str = MISSING
    path: str | None = MISSING
    max_length: int = MISSING     # tokens per input, special tokens included


@dataclass
class ExternalModel:
    """A user's model (`model=external`): `_target_` names a class or factory in their own package; every
    other key is passed to it (`+model.<key>=<value>`). Black box: no adequacy metrics, nothing trained."""

    modality: ClassVar[str | None] = None   # any: the benchmark's
    datasets: ClassVar[tuple[str, ...]] = ()
    open: ClassVar[bool] = True             # keys beyond these are the implementation's own arguments
    name: str = MISSING
    kind: str = "external"
    _target_: str = MISSING


MODEL_KINDS: dict[str, type] = {"digits_cnn": DigitsCNNModel, "torchvision": TorchvisionModel, "text_head": TextHeadModel,
                                "code_retrieval": CodeRetrievalModel, "sequence_classifier": SequenceClassifierModel,
                                "code_llm": CodeLLMModel, "hf_image_classifier": HFImageClassifierModel,
                                "hf_sequence_classifier": HFSequenceClassifierModel, "external": ExternalModel}


def check_cnn(key: str, node: dict[str, Any]) -> None:
    """A digits CNN's training settings (the model under test or the KID feature network)."""
    at_least(f"{key}.width", node["width"], 1)
    at_least(f"{key}.epochs", node["epochs"], 1)
    at_least(f"{key}.seed", node["seed"], 0)


def check_model(model: dict[str, Any]) -> None:
    """The ranges and required paths of each built-in model kind."""
    if model["kind"] == "digits_cnn":
        check_cnn("model", model)
    if model["kind"] == "text_head":
        positive("model.C", model["C"], " (inverse regularisation strength)")
        at_least("model.max_iter", model["max_iter"], 1)
    if model["kind"] == "code_retrieval":
        in_range("model.threshold", model["threshold"], 0, 1, "[]", " (cosine similarity at which the model answers)")
        grams = model["ngrams"]
        if len(grams) != 2 or not 1 <= grams[0] <= grams[1]:
            raise ConfigError("model.ngrams", grams, "[low, high] with 1 ≤ low ≤ high (character n-gram lengths)")
    if model["kind"] == "code_llm":
        if model["path"] is None or not model["path"].strip():
            raise ConfigError("model.path", model["path"], "a local GGUF file or causal-LM checkpoint folder; set the "
                              "environment variable CODE_LLM_GGUF (read by conf/model/qwen_coder_gguf.yaml; `make llm` "
                              "fetches that model) or CODEGEN_WEIGHTS (conf/model/codegen_2b_mono.yaml), or pass model.path=<path>")
        choice("model.runtime", model["runtime"], CodeLLMModel.runtimes)
        at_least("model.max_new_tokens", model["max_new_tokens"], 1)
        if any(not s for s in model["stop"]):
            raise ConfigError("model.stop", list(model["stop"]), "a list of non-empty stop sequences")
    if model["kind"] == "sequence_classifier":
        if model["weights_path"] is None or not model["weights_path"].strip():
            raise ConfigError("model.weights_path", model["weights_path"], "a local Hugging Face sequence-classification "
                              "checkpoint folder; set the environment variable ROBERTA_QQP_WEIGHTS (read by "
                              "conf/model/roberta_qqp.yaml) or pass model.weights_path=<folder>")
        at_least("model.max_length", model["max_length"], 2, " (tokens per pair, special tokens included)")
    if model["kind"] == "torchvision":
        at_least("model.num_classes", model["num_classes"], 1)
        at_least("model.input_size", model["input_size"], 1)
    if model["kind"] in ("hf_image_classifier", "hf_sequence_classifier"):
        if model["path"] is None or not model["path"].strip():
            raise ConfigError("model.path", model["path"], "a local folder written by transformers' save_pretrained "
                              "(config.json, the weights and the processor or tokenizer files)")
    if model["kind"] == "hf_sequence_classifier":
        at_least("model.max_length", model["max_length"], 2, " (tokens per input, special tokens included)")
    if model["kind"] == "external" and not is_import_path(model["_target_"]):
        raise ConfigError("model._target_", model["_target_"], "the import path of the model's class or factory in your own "
                          "package, e.g. my_pkg.models.MyModel (importable through PYTHONPATH or installed)")
