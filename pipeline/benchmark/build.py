"""From plain benchmark specs (dicts, as composed from conf/benchmark/*.yaml) and prepared assets to
`Benchmark` objects. The model under test and the clean test set are plug-ins built from their `_target_`
(`pipeline.benchmark.plugin_code`); perturbations, fidelity metrics, the task metric and the KID feature network are
names of the catalog (`pipeline.plugins.catalog`) or a plug-in's import path. Preparing the assets is
`pipeline.benchmark.preparation`; the scripts layer passes specs and folders, the library never reads configs."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from pipeline.benchmark.problem import Benchmark, get_task_metric
from pipeline.plugins.catalog import FIDELITY
from pipeline.config.benchmark import FEATURE_KINDS
from pipeline.benchmark.conformance import checked_predictions, conform_inputs
from pipeline.runtime.device import resolve_device
from pipeline.fidelity.kid import EmbeddingFeatures, KIDFidelity
from pipeline.fidelity.ssim import SSIMFidelity
from pipeline.models.cnn import load_cnn
from pipeline.perturb.materialize import PerturbationStore, order_bound
from pipeline.perturb.registry import get_perturbation
from pipeline.benchmark.plugin_code import DATASET_PROTOCOLS, MODEL_PROTOCOLS, build, check_instance, check_perturbations
from pipeline.plugins.protocols import FidelityMetric, Perturbation
from pipeline.plugins.registry import load_import_path
from pipeline.front.space import Space

Spec = dict[str, Any]


# ---- feature extractors for KID: spec -> module ---------------------------------------------------

def digits_features(spec: Spec, data_dir: Path) -> torch.nn.Module:
    return EmbeddingFeatures(load_cnn(data_dir / "features.pt"))


def inception_features(spec: Spec, data_dir: Path) -> torch.nn.Module:
    # torchmetrics' Inception-v3 (torch-fidelity weights); real images only, needs the weights locally.
    from torchmetrics.image.fid import NoTrainInceptionV3

    return NoTrainInceptionV3(name="inception-v3-compat", features_list=[str(spec.get("dim", 2048))])


def ssim_metric(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    return SSIMFidelity(clean, device=resolve_device(spec.get("device", "cpu")))  # its own batch of 512 pairs, as before


def kid_metric(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    kid = spec.get("kid") or {}
    return KIDFidelity(clean, feature_network(spec["features"], data_dir), subset_size=int(kid.get("subset_size", 1000)),
                       subsets=int(kid.get("subsets", 100)), seed=int(spec.get("seed", 0)),
                       batch_size=int(spec.get("batch_size", 512)), device=resolve_device(spec.get("device", "cpu")))


def chrf_metric(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.text import ChrFFidelity

    return ChrFFidelity(list(clean))


def bert_f1_metric(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.text import BERTScoreFidelity
    from pipeline.models.text_encoder import default_encoder

    # the process-wide MiniLM encoder of the device: one forward pass with the text model
    return BERTScoreFidelity(list(clean), default_encoder(spec.get("device", "cpu")))


def _code_rows(clean: Any, spec: Spec) -> list[int] | None:
    from pipeline.fidelity.code import variant_rows

    ds = spec["dataset"]
    return variant_rows(len(clean), int(ds["variants"]), ds.get("fidelity_variants"))


def chrf_code_metric(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.code import code_chrf

    return code_chrf(list(clean), rows=_code_rows(clean, spec))  # whitespace counts (pipeline.fidelity.code)


def bert_f1_code_metric(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    from pipeline.fidelity.code import CodeBERTScoreFidelity
    from pipeline.models.text_encoder import default_encoder

    return CodeBERTScoreFidelity(list(clean), default_encoder(spec.get("device", "cpu")), rows=_code_rows(clean, spec))


def feature_network(features: Spec, data_dir: Path) -> torch.nn.Module:
    """The KID feature network of `benchmark.features` (its kind names the factory: `FEATURE_KINDS`)."""
    return load_import_path(FEATURE_KINDS[features["kind"]].target)(features, data_dir)


def fidelity_metric(name: str, clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    """φ called `name` (the catalog's, or a plug-in's `module:factory`), built on the clean inputs D: a factory
    `(clean, benchmark spec, data folder) -> φ(perturbed inputs)`, higher = closer to D."""
    metric = FIDELITY.get(name)(clean, spec, data_dir)
    if not callable(metric):
        raise ValueError(f"fidelity metric {name!r}: its factory returned {metric!r}, not a callable φ(perturbed) -> float "
                         f"(pipeline.plugins.protocols.{FidelityMetric.__name__})")
    return metric


# ---- the benchmark ---------------------------------------------------------------------------------

def build_space(spec: Spec) -> Space:
    """The space Θ of a spec, after the checks that need no data: perturbation and metric names, levels."""
    space = Space(tuple(spec["perturbations"]), int(spec["levels"]))
    check_perturbations(spec)
    for m in spec["fidelity"]:
        FIDELITY.get(m)
    get_task_metric(spec.get("task_metric", "accuracy"))
    return space


def runtime(spec: Spec, data_dir: str | Path) -> dict[str, Any]:
    """The run-time arguments a plug-in may name: the prepared folder, the device and the batch size."""
    return {"data_dir": Path(data_dir), "device": spec["model"].get("device", "cpu"), "batch_size": int(spec.get("batch_size", 512))}


def build_test_set(spec: Spec, data_dir: str | Path) -> tuple[Any, np.ndarray]:
    """(the clean test inputs D, their labels) of the data set plug-in of `spec`."""
    dataset = check_instance(build(spec["dataset"], "benchmark.dataset", **runtime(spec, data_dir)), spec["dataset"],
                             "benchmark.dataset", DATASET_PROTOCOLS)
    clean, labels = dataset.test_set()
    return clean, np.asarray(labels)


def build_model(spec: Spec, data_dir: str | Path) -> Any:
    """The model under test of `spec`, built from `model._target_` and checked against its protocol."""
    return check_instance(build(spec["model"], "model", **runtime(spec, data_dir)), spec["model"], "model", MODEL_PROTOCOLS)


def build_inputs(spec: Spec, data_dir: str | Path) -> tuple[Space, list[Perturbation], Any, np.ndarray]:
    """(Θ, the perturbations T_1..T_n, the clean set D, its labels) of `spec`: what T_θ depends on, without
    the model or the metrics (the `perturb` stage needs no more). D is the data set's test set as every
    perturbation takes it: checked against what each needs, and adapted as `benchmark.adapt_inputs` says
    where it falls short (`pipeline.benchmark.conformance.conform_inputs`)."""
    space = build_space(spec)
    clean, labels = build_test_set(spec, data_dir)
    if len(labels) == 0:
        raise ValueError(f"dataset of benchmark {spec['name']!r} is empty")
    perturbations = [get_perturbation(n) for n in space.names]
    return space, perturbations, conform_inputs(clean, perturbations, spec.get("adapt_inputs")), labels


def build_store(spec: Spec, data_dir: str | Path, root: str | Path) -> PerturbationStore:
    """The perturbation store under `root` of `spec`'s clean set, perturbations and seed, bounded as
    `benchmark.store.max_order` says (what the `perturb` stage fills; a picklable factory with `partial`)."""
    space, perturbations, clean, _ = build_inputs(spec, data_dir)
    return PerturbationStore(root, perturbations, clean, space, int(spec["seed"]),
                             thetas=order_bound(space, spec["store"]["max_order"]))


def build_benchmark(spec: Spec, data_dir: str | Path, per_input: bool = False) -> Benchmark:
    """The benchmark of `spec` over the assets in `data_dir` (written by `prepare`); the model's output is
    checked against its protocol on every call, the clean test set's first (`pipeline.benchmark.conformance`). With
    `per_input`, its values include each input's prediction and per-input fidelity (`Benchmark.per_input`)."""
    data_dir = Path(data_dir)
    space, perturbations, clean, labels = build_inputs(spec, data_dir)
    model = build_model(spec, data_dir)
    fidelity = {m: fidelity_metric(m, clean, spec, data_dir) for m in spec["fidelity"]}
    observe = model.observer(spec["adequacy"]) if spec.get("adequacy") else None
    predict = checked_predictions(model, labels, "model._target_", spec["model"]["_target_"])
    return Benchmark(
        name=spec["name"], space=space, perturbations=perturbations, clean=clean, labels=labels,
        predict=predict, task_metric=get_task_metric(spec.get("task_metric", "accuracy")), fidelity=fidelity,
        observe=observe, seed=int(spec.get("seed", 0)), per_input=per_input,
    )
