"""From plain benchmark specs (dicts, as composed from conf/benchmark/*.yaml) and prepared assets to
`Benchmark` objects. Each dataset, model, feature extractor and fidelity metric kind is a registry
entry here (preparing the assets is `pipeline.preparation`); the scripts layer passes specs and
folders, the library never reads configs itself."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from pipeline.benchmark import Benchmark, get_task_metric
from pipeline.code import robust_pass as _robust_pass  # noqa: F401  (registers the task metric robust_pass)
from pipeline.device import resolve_device
from pipeline.fidelity.kid import EmbeddingFeatures, KIDFidelity
from pipeline.fidelity.ssim import SSIMFidelity
from pipeline.models.cnn import load_cnn, predict_proba
from pipeline.perturb.registry import get_perturbation
from pipeline.registry import Registry
from pipeline.space import Space

Spec = dict[str, Any]


# ---- datasets: spec -> (clean test images, labels) -------------------------------------------------

def _digits_test(ds: Spec, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(data_dir / "splits.npz") as z:
        x, y = z["test_x"], z["test_y"]
    limit = ds.get("test_limit")
    return (x[:limit], y[:limit]) if limit is not None else (x, y)


def _tiny_imagenet_test(ds: Spec, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    from pipeline.data.tiny_imagenet import load_tiny_imagenet_val

    return load_tiny_imagenet_val(ds["root"], limit=ds.get("limit"), size=ds.get("size"))


def _bbc_news_test(ds: Spec, data_dir: Path) -> tuple[list[str], np.ndarray]:
    test = json.loads((data_dir / "test.json").read_text(encoding="utf-8"))
    return list(test["texts"]), np.asarray(test["labels"], dtype=np.int64)


def _humaneval_test(ds: Spec, data_dir: Path) -> tuple[list[str], np.ndarray]:
    # D of a code benchmark: each problem's prompt `variants` times in a row (input i·s + k = variant k of
    # problem i, so composition seeds the s copies differently); the label of a row is its problem's index
    from pipeline.code.assets import load_code_set

    return load_code_set(data_dir)[:2]


def _qqp_test(ds: Spec, data_dir: Path) -> tuple[list[tuple[str, str]], np.ndarray]:
    from pipeline.data.qqp import read_pairs

    return read_pairs(data_dir / "test.json")  # D as `prepare` read it from the local QQP copy: question pairs


DATASETS: Registry[Callable[[Spec, Path], tuple[Any, np.ndarray]]] = Registry("dataset")
DATASETS.register("digits", _digits_test)
DATASETS.register("tiny_imagenet", _tiny_imagenet_test)
DATASETS.register("bbc_news", _bbc_news_test)
DATASETS.register("humaneval", _humaneval_test)
DATASETS.register("qqp", _qqp_test)


# ---- models: (spec, data folder, batch size) -> predict(inputs) -> one prediction per input ----------
# (what the task metric ψ compares with the labels: a class for classifiers)

Predict = Callable[[Any], np.ndarray]


def _digits_cnn(spec: Spec, data_dir: Path, batch: int) -> Predict:
    net = load_cnn(data_dir / "model.pt").to(resolve_device(spec.get("device", "cpu"), "model.device"))
    return lambda x: predict_proba(net, x, batch).argmax(1)


def _torchvision(spec: Spec, data_dir: Path, batch: int) -> Predict:
    from pipeline.models.torchvision_classifier import TorchvisionClassifier

    net = TorchvisionClassifier(spec["arch"], int(spec["num_classes"]), spec.get("weights_path"), int(spec.get("input_size", 224)))
    net = net.to(resolve_device(spec.get("device", "cpu"), "model.device"))
    return lambda x: predict_proba(net, x, batch).argmax(1)


def _text_classifier(spec: Spec, data_dir: Path) -> Any:
    from pipeline.models.text_encoder import TextClassifier, default_encoder

    with np.load(data_dir / "model.npz") as z:
        return TextClassifier.from_state({k: z[k] for k in z.files}, default_encoder(spec.get("device", "cpu")))  # shared with BERT-F1


def _text_head(spec: Spec, data_dir: Path, batch: int) -> Predict:
    head = _text_classifier(spec, data_dir)
    return lambda texts: head.predict(list(texts))


def _code_retrieval(spec: Spec, data_dir: Path, batch: int) -> Predict:
    # predict(prompts) -> passed per row: the retrieved completion executed against its problem's tests in
    # the sandbox, through a per-process execution cache (ψ = RP_s@1 groups the rows by problem)
    from pipeline.code.assets import code_predictor

    return code_predictor(spec, data_dir)


def _sequence_classifier(spec: Spec, data_dir: Path, batch: int) -> Predict:
    # a local Hugging Face checkpoint (strings or question pairs -> class), the one `prepare` recorded
    from pipeline.models.pair_classifier import PairClassifier, check_weights

    check_weights(spec["weights_path"], json.loads((data_dir / "weights.json").read_text(encoding="utf-8")))
    return PairClassifier(spec["weights_path"], batch_size=batch, max_length=int(spec["max_length"]),
                          device=resolve_device(spec.get("device", "cpu"), "model.device")).predict


MODELS: Registry[Callable[[Spec, Path, int], Predict]] = Registry("model")
MODELS.register("digits_cnn", _digits_cnn)
MODELS.register("torchvision", _torchvision)
MODELS.register("text_head", _text_head)
MODELS.register("code_retrieval", _code_retrieval)
MODELS.register("code_llm", _code_retrieval)  # a local causal LM (pipeline.models.code_llm): code_predictor picks by kind
MODELS.register("sequence_classifier", _sequence_classifier)


# ---- observers: the model's forward pass with its input-level adequacy metrics (TestNav §4.4) --------
# benchmark spec, data folder, batch size -> observe(inputs) -> (predictions, {metric: value})

def _digits_cnn_observer(spec: Spec, data_dir: Path, batch: int) -> Callable[[Any], tuple[np.ndarray, dict[str, float]]]:
    from pipeline.adequacy import ActivationProfile, AdequacySettings, adequacy_scores
    from pipeline.adequacy.hooks import capture
    from pipeline.models.cnn import to_tensor

    net = load_cnn(data_dir / "model.pt").to(resolve_device(spec["model"].get("device", "cpu"), "model.device"))
    settings = AdequacySettings.from_spec(spec["adequacy"])
    profile = ActivationProfile.load(data_dir / "adequacy_profile.npz")
    names = list(spec["adequacy"]["metrics"])

    def observe(x: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
        logits, acts = capture(net, settings.layers, x, batch, transform=to_tensor)
        # predictions exactly as `predict_proba(...).argmax(1)` computes them (softmax before argmax)
        predictions = torch.softmax(torch.from_numpy(logits), dim=1).double().numpy().argmax(1)
        return predictions, adequacy_scores(names, logits, acts, profile, settings)

    return observe


def _text_head_observer(spec: Spec, data_dir: Path, batch: int) -> Callable[[Any], tuple[np.ndarray, dict[str, float]]]:
    # the encoder's one forward pass per text gives the head's prediction and the activations
    # (`pipeline.adequacy.text_model`); decision_function and predict read the same cached encodings
    from pipeline.adequacy import ActivationProfile, adequacy_scores
    from pipeline.adequacy.text_model import Projection, encoder_views, text_activations, text_settings

    head = _text_classifier(spec["model"], data_dir)
    settings = text_settings(spec["adequacy"], head.encoder.num_layers)
    profile, projection = ActivationProfile.load(data_dir / "adequacy_profile.npz"), Projection.load(data_dir / "adequacy_projection.npz")
    names = list(spec["adequacy"]["metrics"])

    def observe(texts: Any) -> tuple[np.ndarray, dict[str, float]]:
        texts = list(texts)
        layers, sentences = encoder_views(head.encoder.encode(texts))
        acts = text_activations(layers, sentences, projection)
        return head.predict(texts), adequacy_scores(names, head.decision_function(texts), acts, profile, settings)

    return observe


OBSERVERS: Registry[Callable[[Spec, Path, int], Callable[[Any], tuple[np.ndarray, dict[str, float]]]]] = Registry("adequacy model")
OBSERVERS.register("digits_cnn", _digits_cnn_observer)
OBSERVERS.register("text_head", _text_head_observer)


# ---- feature extractors for KID: spec -> module ---------------------------------------------------

def _digits_features(spec: Spec, data_dir: Path) -> torch.nn.Module:
    return EmbeddingFeatures(load_cnn(data_dir / "features.pt"))


def _inception(spec: Spec, data_dir: Path) -> torch.nn.Module:
    # torchmetrics' Inception-v3 (torch-fidelity weights); real images only, needs the weights locally.
    from torchmetrics.image.fid import NoTrainInceptionV3

    return NoTrainInceptionV3(name="inception-v3-compat", features_list=[str(spec.get("dim", 2048))])


FEATURES: Registry[Callable[[Spec, Path], torch.nn.Module]] = Registry("feature extractor")
FEATURES.register("digits_cnn", _digits_features)
FEATURES.register("inception", _inception)


def _ssim(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    return SSIMFidelity(clean, device=resolve_device(spec.get("device", "cpu")))  # its own batch of 512 pairs, as before


def _kid(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    kid = spec.get("kid") or {}
    return KIDFidelity(clean, FEATURES.get(spec["features"]["kind"])(spec["features"], data_dir), subset_size=int(kid.get("subset_size", 1000)),
                       subsets=int(kid.get("subsets", 100)), seed=int(spec.get("seed", 0)),
                       batch_size=int(spec.get("batch_size", 512)), device=resolve_device(spec.get("device", "cpu")))


def _chrf(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.text import ChrFFidelity

    return ChrFFidelity(list(clean))


def _bert_f1(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.text import BERTScoreFidelity
    from pipeline.models.text_encoder import default_encoder

    # the process-wide MiniLM encoder of the device: one forward pass with the text model
    return BERTScoreFidelity(list(clean), default_encoder(spec.get("device", "cpu")))


def _code_rows(clean: Any, spec: Spec) -> list[int] | None:
    from pipeline.fidelity.code import variant_rows

    ds = spec["dataset"]
    return variant_rows(len(clean), int(ds["variants"]), ds.get("fidelity_variants"))


def _chrf_code(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.code import code_chrf

    return code_chrf(list(clean), rows=_code_rows(clean, spec))  # whitespace counts (pipeline.fidelity.code)


def _bert_f1_code(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.code import CodeBERTScoreFidelity
    from pipeline.models.text_encoder import default_encoder

    return CodeBERTScoreFidelity(list(clean), default_encoder(spec.get("device", "cpu")), rows=_code_rows(clean, spec))


@dataclass(frozen=True)
class FidelityKind:
    """A fidelity metric φ: the modality of the inputs it compares and its factory
    (clean inputs, benchmark spec, data folder) -> φ(perturbed inputs), higher = closer to D."""

    modality: str
    build: Callable[[Any, Spec, Path], Callable[[Any], float]]


FIDELITY: Registry[FidelityKind] = Registry("fidelity metric")
FIDELITY.register("ssim", FidelityKind("vision", _ssim))
FIDELITY.register("kid", FidelityKind("vision", _kid))
FIDELITY.register("chrf", FidelityKind("text", _chrf))
FIDELITY.register("bert_f1", FidelityKind("text", _bert_f1))
FIDELITY.register("chrf_code", FidelityKind("code", _chrf_code))
FIDELITY.register("bert_f1_code", FidelityKind("code", _bert_f1_code))


# ---- the benchmark ---------------------------------------------------------------------------------

def build_space(spec: Spec) -> Space:
    """The space Θ of a spec, after the checks that need no data: perturbation and metric names, levels."""
    space = Space(tuple(spec["perturbations"]), int(spec["levels"]))
    for name in space.names:
        family = get_perturbation(name)  # fails with the list of valid names
        if family.max_level < space.levels - 1:
            raise ValueError(f"perturbation {name!r} has levels 0..{family.max_level}; the space asks for 0..{space.levels - 1}")
    for m in spec["fidelity"]:
        FIDELITY.get(m)
    get_task_metric(spec.get("task_metric", "accuracy"))
    return space


def build_inputs(spec: Spec, data_dir: str | Path) -> tuple[Space, list[Any], Any, np.ndarray]:
    """(Θ, the perturbations T_1..T_n, the clean set D, its labels) of `spec`: what T_θ depends on, without
    the model or the metrics (the `perturb` stage needs no more)."""
    space = build_space(spec)
    clean, labels = DATASETS.get(spec["dataset"]["kind"])(spec["dataset"], Path(data_dir))
    if len(labels) == 0:
        raise ValueError(f"dataset of benchmark {spec['name']!r} is empty")
    return space, [get_perturbation(n) for n in space.names], clean, labels


def build_benchmark(spec: Spec, data_dir: str | Path) -> Benchmark:
    """The benchmark of `spec` over the assets in `data_dir` (written by `prepare`)."""
    data_dir = Path(data_dir)
    space, perturbations, clean, labels = build_inputs(spec, data_dir)
    metrics = list(spec["fidelity"])
    task_metric = get_task_metric(spec.get("task_metric", "accuracy"))
    predict = MODELS.get(spec["model"]["kind"])(spec["model"], data_dir, int(spec.get("batch_size", 512)))
    fidelity = {m: FIDELITY[m].build(clean, spec, data_dir) for m in metrics}
    observe = OBSERVERS.get(spec["model"]["kind"])(spec, data_dir, int(spec.get("batch_size", 512))) if spec.get("adequacy") else None
    return Benchmark(
        name=spec["name"], space=space, perturbations=perturbations, clean=clean, labels=labels,
        predict=predict, task_metric=task_metric, fidelity=fidelity, observe=observe,
        seed=int(spec.get("seed", 0)),
    )
