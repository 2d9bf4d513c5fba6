"""From plain benchmark specs (dicts, as composed from conf/benchmark/*.yaml) to prepared assets and
`Benchmark` objects. Each dataset, model, feature extractor and fidelity metric kind is a registry
entry here; the scripts layer passes specs and folders, the library never reads configs itself."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from pipeline.benchmark import Benchmark, get_task_metric
from pipeline.data.digits import load_digits_splits
from pipeline.fidelity.kid import EmbeddingFeatures, KIDFidelity
from pipeline.fidelity.ssim import SSIMFidelity
from pipeline.models.cnn import load_cnn, predict_proba, save_cnn, train_cnn
from pipeline.perturb.registry import get_perturbation
from pipeline.space import Space

Spec = dict[str, Any]


def _choose(kind: str, what: str, table: dict[str, Any]) -> Any:
    if kind not in table:
        raise ValueError(f"unknown {what} {kind!r}; valid choices: {', '.join(sorted(table))}")
    return table[kind]


# ---- datasets: spec -> (clean test images, labels) -------------------------------------------------

def _digits_test(ds: Spec, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(data_dir / "splits.npz") as z:
        x, y = z["test_x"], z["test_y"]
    limit = ds.get("test_limit")
    return (x[:limit], y[:limit]) if limit is not None else (x, y)


def _tiny_imagenet_test(ds: Spec, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    from pipeline.data.tiny_imagenet import load_tiny_imagenet_val

    return load_tiny_imagenet_val(ds["root"], limit=ds.get("limit"), size=ds.get("size"))


DATASETS: dict[str, Callable[[Spec, Path], tuple[np.ndarray, np.ndarray]]] = {
    "digits": _digits_test, "tiny_imagenet": _tiny_imagenet_test,
}


# ---- models: spec -> module -----------------------------------------------------------------------

def _digits_cnn(spec: Spec, path: Path) -> torch.nn.Module:
    return load_cnn(path)


def _torchvision(spec: Spec, path: Path) -> torch.nn.Module:
    from pipeline.models.torchvision_classifier import TorchvisionClassifier

    return TorchvisionClassifier(spec["arch"], int(spec["num_classes"]), spec.get("weights_path"), int(spec.get("input_size", 224)))


MODELS: dict[str, Callable[[Spec, Path], torch.nn.Module]] = {"digits_cnn": _digits_cnn, "torchvision": _torchvision}


def _features(spec: Spec, data_dir: Path) -> torch.nn.Module:
    if spec["kind"] == "digits_cnn":
        return EmbeddingFeatures(load_cnn(data_dir / "features.pt"))
    if spec["kind"] == "inception":
        # torchmetrics' Inception-v3 (torch-fidelity weights); real images only, needs the weights locally.
        from torchmetrics.image.fid import NoTrainInceptionV3

        return NoTrainInceptionV3(name="inception-v3-compat", features_list=[str(spec.get("dim", 2048))])
    raise ValueError(f"unknown feature extractor {spec['kind']!r}; valid choices: digits_cnn, inception")


def _ssim(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    return SSIMFidelity(clean)


def _kid(clean: Any, spec: Spec, data_dir: Path) -> Callable[[Any], float]:
    kid = spec.get("kid", {})
    return KIDFidelity(clean, _features(spec["features"], data_dir), subset_size=int(kid.get("subset_size", 1000)),
                       subsets=int(kid.get("subsets", 100)), seed=int(spec.get("seed", 0)),
                       batch_size=int(spec.get("batch_size", 512)))


# fidelity metrics φ: name -> factory(clean inputs, benchmark spec, data folder) -> φ(perturbed)
FIDELITY: dict[str, Callable[[Any, Spec, Path], Callable[[Any], float]]] = {"ssim": _ssim, "kid": _kid}


# ---- preparation (the `prepare` stage) -------------------------------------------------------------

def prepare_digits(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Split the digits, train the model under test and the KID feature network; return clean metrics."""
    data_dir = Path(data_dir)
    ds = spec["dataset"]
    splits = load_digits_splits(seed=int(ds.get("split_seed", 0)), size=int(ds.get("size", 32)))
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = data_dir / ".splits.tmp.npz"
    np.savez_compressed(tmp, **{f"{k}_{xy}": v for k, (x, y) in splits.items() for xy, v in (("x", x), ("y", y))})
    tmp.replace(data_dir / "splits.npz")
    metrics = {f"n_{k}": len(y) for k, (_, y) in splits.items()}
    for role, file in (("model", "model.pt"), ("features", "features.pt")):
        m = spec[role]
        net = train_cnn(*splits["train"], seed=int(m["seed"]), width=int(m["width"]), epochs=int(m["epochs"]), progress=progress)
        save_cnn(net, data_dir / file)
        for split in ("dev", "test"):
            x, y = splits[split]
            metrics[f"{role}_{split}_accuracy"] = float((predict_proba(net, x).argmax(1) == y).mean())
    return metrics


PREPARERS: dict[str, Callable[..., dict[str, float]]] = {"digits": prepare_digits}


def prepare(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    kind = spec["dataset"]["kind"]
    if kind not in PREPARERS:
        return {}  # real-world datasets and models are read from where they are
    return PREPARERS[kind](spec, data_dir, progress)


# ---- the benchmark ---------------------------------------------------------------------------------

def build_space(spec: Spec) -> Space:
    """The space Θ of a spec, after the checks that need no data: perturbation and metric names, levels."""
    space = Space(tuple(spec["perturbations"]), int(spec["levels"]))
    for name in space.names:
        family = get_perturbation(name)  # fails with the list of valid names
        if family.max_level < space.levels - 1:
            raise ValueError(f"perturbation {name!r} has levels 0..{family.max_level}; the space asks for 0..{space.levels - 1}")
    for m in spec["fidelity"]:
        if m not in FIDELITY:
            raise ValueError(f"unknown fidelity metric {m!r}; valid choices: {', '.join(FIDELITY)}")
    get_task_metric(spec.get("task_metric", "accuracy"))
    return space


def build_benchmark(spec: Spec, data_dir: str | Path) -> Benchmark:
    """The benchmark of `spec` over the assets in `data_dir` (written by `prepare`)."""
    data_dir = Path(data_dir)
    space = build_space(spec)
    metrics = list(spec["fidelity"])
    task_metric = get_task_metric(spec.get("task_metric", "accuracy"))
    clean, labels = _choose(spec["dataset"]["kind"], "dataset", DATASETS)(spec["dataset"], data_dir)
    if len(labels) == 0:
        raise ValueError(f"dataset of benchmark {spec['name']!r} is empty")
    model = _choose(spec["model"]["kind"], "model", MODELS)(spec["model"], data_dir / "model.pt")
    batch = int(spec.get("batch_size", 512))
    fidelity = {m: FIDELITY[m](clean, spec, data_dir) for m in metrics}
    return Benchmark(
        name=spec["name"], space=space, perturbations=[get_perturbation(n) for n in space.names], clean=clean, labels=labels,
        predict=lambda x: predict_proba(model, x, batch).argmax(1), task_metric=task_metric, fidelity=fidelity,
        seed=int(spec.get("seed", 0)),
    )
