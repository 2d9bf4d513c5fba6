"""Adapters: embedded models seen through `evaluate_fn(params) -> (error, per_target_errors)`.

- `geometric`: a kernel regressor on scikit-learn's diabetes data, one length scale per feature group.
- `weights`: the digits CNN, one multiplicative scale per parameter tensor.
- `severity`: the digits CNN under the digits benchmark's corruptions at continuous severities.

Each builder returns an `Adapter`: the dimensions, the callbacks, what "inactive" means numerically,
and where the campaign should analyse the model when its best configuration is not the deployed one.
A user's adapter (any `pipeline.plugins.protocols.FuzzAdapter`) becomes one through `as_adapter`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from pipeline.plugins.catalog import FUZZ_ADAPTERS
from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn

ADAPTERS = FUZZ_ADAPTERS  # name -> factory of an Adapter (`pipeline.plugins.catalog`)


@dataclass(frozen=True)
class Adapter:
    """A model under structural fuzzing.

    `inactive_value` is the parameter value that switches a dimension off; `candidate_values` are the
    values an active dimension takes in the subset enumeration; `operating_point` is where stages 3–5
    run (None: the best enumerated configuration); `target_names` name the per-target errors.
    """

    name: str
    dim_names: tuple[str, ...]
    evaluate_fn: EvaluateFn
    evaluate_batch_fn: EvaluateBatchFn | None
    inactive_value: float
    candidate_values: tuple[float, ...]
    operating_point: tuple[float, ...] | None
    target_names: tuple[str, ...]
    error_name: str


def chosen_adapter(cfg: Mapping[str, Any]) -> str:
    """`fuzz.adapter` of a run's config if it is a built-in adapter or names an entry of `fuzz.adapters` with a
    plug-in's `_target_`; else a ValueError listing the valid ones (or saying the config has no `fuzz` section)."""
    if "fuzz" not in cfg:
        raise ValueError("the configuration has no `fuzz` section; add `- fuzz: default` to conf/config.yaml's defaults")
    name = str(cfg["fuzz"]["adapter"])
    settings = cfg["fuzz"]["adapters"].get(name)
    if not (isinstance(settings, Mapping) and "_target_" in settings):
        ADAPTERS.get(name)
    return name


# What `as_adapter` reads from a user's adapter: required, then optional with its default.
PLUGIN_REQUIRED = ("dim_names", "evaluate_fn", "inactive_value")
PLUGIN_OPTIONAL = {"evaluate_batch_fn": None, "candidate_values": (), "operating_point": None, "target_names": (),
                   "error_name": "error"}


def as_adapter(obj: Any, name: str, target: str) -> Adapter:
    """A user's adapter (`pipeline.plugins.protocols.FuzzAdapter`, built from `target`) as the campaign's `Adapter`
    record; a missing attribute is a ValueError naming it."""
    if isinstance(obj, Adapter):
        return obj
    absent = [a for a in PLUGIN_REQUIRED if getattr(obj, a, None) is None]
    if absent or not callable(obj.evaluate_fn):
        what = absent[0] if absent else "evaluate_fn"
        raise ValueError(f"fuzz.adapters.{name}._target_: {target!r} — a fuzz adapter with {', '.join(PLUGIN_REQUIRED)} "
                         f"(pipeline.plugins.protocols.FuzzAdapter); {type(obj).__name__} has no {what}")
    values = {a: getattr(obj, a, default) for a, default in PLUGIN_OPTIONAL.items()}
    point = values["operating_point"]
    return Adapter(name=name, dim_names=tuple(obj.dim_names), evaluate_fn=obj.evaluate_fn, evaluate_batch_fn=values["evaluate_batch_fn"],
                   inactive_value=float(obj.inactive_value), candidate_values=tuple(float(v) for v in values["candidate_values"]),
                   operating_point=None if point is None else tuple(float(v) for v in point),
                   target_names=tuple(values["target_names"]), error_name=str(values["error_name"]))


def per_class_error_rates(predicted: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[float, dict[str, float]]:
    """Test error rate and the error rate within each true class (targets `digit_0` … `digit_{k-1}`)."""
    wrong = np.asarray(predicted) != np.asarray(labels)
    per_class = {}
    for c in range(n_classes):
        mask = labels == c
        per_class[f"digit_{c}"] = float(wrong[mask].mean()) if mask.any() else float("nan")
    return float(wrong.mean()), per_class


def class_names(n_classes: int) -> tuple[str, ...]:
    return tuple(f"digit_{c}" for c in range(n_classes))


def check_images(images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    images, labels = np.asarray(images), np.asarray(labels)
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) uint8 images, got {images.dtype} {images.shape}")
    if labels.shape != (len(images),):
        raise ValueError(f"labels must have shape ({len(images)},), got {labels.shape}")
    return images, labels.astype(np.int64)


def stratified_subset(labels: np.ndarray, n_per_class: int | None) -> np.ndarray:
    """Indices of the first `n_per_class` images of each class, in their original order (None: all)."""
    labels = np.asarray(labels)
    if n_per_class is None:
        return np.arange(len(labels))
    if int(n_per_class) < 1:
        raise ValueError(f"n_per_class must be a positive integer or null (all images), got {n_per_class}")
    keep = np.zeros(len(labels), dtype=bool)
    for c in np.unique(labels):
        keep[np.flatnonzero(labels == c)[: int(n_per_class)]] = True
    return np.flatnonzero(keep)


CAMPAIGN_KEYS = (
    "max_subset_dims", "n_mri_perturbations", "mri_scale", "mri_weights", "adversarial_tolerance", "n_adversarial_steps",
    "candidate_values", "two_phase", "n_coarse", "directional", "frontier", "n_frontier_perturbations", "cvar_alpha",
)


def split_settings(settings: dict, adapter_keys: Sequence[str]) -> tuple[dict, dict]:
    """(campaign arguments, adapter arguments) of one adapter's settings; unknown keys are an error."""
    unknown = sorted(set(settings) - set(CAMPAIGN_KEYS) - set(adapter_keys))
    if unknown:
        raise ValueError(f"unknown fuzz settings {unknown}; valid keys: {', '.join(sorted(CAMPAIGN_KEYS + tuple(adapter_keys)))}")
    campaign = {k: v for k, v in settings.items() if k in CAMPAIGN_KEYS}
    return campaign, {k: v for k, v in settings.items() if k not in CAMPAIGN_KEYS}


def run_adapter_campaign(adapter: Adapter, campaign: dict, rng: np.random.Generator, progress: bool = False):
    """`run_campaign` on an adapter: its dimensions, callbacks, inactive value and operating point."""
    from pipeline.fuzz.campaign import run_campaign

    args = {k: v for k, v in campaign.items() if v is not None or k != "candidate_values"}
    args.setdefault("candidate_values", adapter.candidate_values)
    if not len(args["candidate_values"]):
        raise ValueError(f"fuzz.adapters.{adapter.name}.candidate_values: null — a list of values > 0 for an active dimension "
                         "(the adapter gives none)")
    if "mri_weights" in args:
        args["mri_weights"] = tuple(args["mri_weights"])
    return run_campaign(
        adapter.dim_names, adapter.evaluate_fn, inactive_value=adapter.inactive_value,
        operating_point=adapter.operating_point, evaluate_batch_fn=adapter.evaluate_batch_fn, rng=rng,
        progress=progress, error_name=adapter.error_name, **args,
    )
