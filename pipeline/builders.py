"""From plain benchmark specs (dicts, as composed from conf/benchmark/*.yaml) and prepared assets to
`Benchmark` objects. Each dataset, model, feature extractor and fidelity metric kind is a registry
entry here (preparing the assets is `pipeline.preparation`); the scripts layer passes specs and
folders, the library never reads configs itself."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from pipeline.benchmark import Benchmark, get_task_metric
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


DATASETS: Registry[Callable[[Spec, Path], tuple[np.ndarray, np.ndarray]]] = Registry("dataset")
DATASETS.register("digits", _digits_test)
DATASETS.register("tiny_imagenet", _tiny_imagenet_test)


# ---- models: spec -> module -----------------------------------------------------------------------

def _digits_cnn(spec: Spec, path: Path) -> torch.nn.Module:
    return load_cnn(path)


def _torchvision(spec: Spec, path: Path) -> torch.nn.Module:
    from pipeline.models.torchvision_classifier import TorchvisionClassifier

    return TorchvisionClassifier(spec["arch"], int(spec["num_classes"]), spec.get("weights_path"), int(spec.get("input_size", 224)))


MODELS: Registry[Callable[[Spec, Path], torch.nn.Module]] = Registry("model")
MODELS.register("digits_cnn", _digits_cnn)
MODELS.register("torchvision", _torchvision)


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
    return SSIMFidelity(clean)


def _kid(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    kid = spec.get("kid", {})
    return KIDFidelity(clean, FEATURES.get(spec["features"]["kind"])(spec["features"], data_dir), subset_size=int(kid.get("subset_size", 1000)),
                       subsets=int(kid.get("subsets", 100)), seed=int(spec.get("seed", 0)),
                       batch_size=int(spec.get("batch_size", 512)))


# fidelity metrics φ: name -> factory(clean inputs, benchmark spec, data folder) -> φ(perturbed)
FIDELITY: Registry[Callable[[Any, Spec, Path], Callable[[Any], float]]] = Registry("fidelity metric")
FIDELITY.register("ssim", _ssim)
FIDELITY.register("kid", _kid)


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


def build_benchmark(spec: Spec, data_dir: str | Path) -> Benchmark:
    """The benchmark of `spec` over the assets in `data_dir` (written by `prepare`)."""
    data_dir = Path(data_dir)
    space = build_space(spec)
    metrics = list(spec["fidelity"])
    task_metric = get_task_metric(spec.get("task_metric", "accuracy"))
    clean, labels = DATASETS.get(spec["dataset"]["kind"])(spec["dataset"], data_dir)
    if len(labels) == 0:
        raise ValueError(f"dataset of benchmark {spec['name']!r} is empty")
    model = MODELS.get(spec["model"]["kind"])(spec["model"], data_dir / "model.pt")
    batch = int(spec.get("batch_size", 512))
    fidelity = {m: FIDELITY[m](clean, spec, data_dir) for m in metrics}
    return Benchmark(
        name=spec["name"], space=space, perturbations=[get_perturbation(n) for n in space.names], clean=clean, labels=labels,
        predict=lambda x: predict_proba(model, x, batch).argmax(1), task_metric=task_metric, fidelity=fidelity,
        seed=int(spec.get("seed", 0)),
    )
