"""The adapters from their stage settings: which model and data each reads, the campaign run on it, kept
in a resume store, and the headline numbers of its report.

The settings of one adapter are the campaign's (`CAMPAIGN_KEYS`) plus the keyword arguments of its
builder: for a built-in its function here (the digits adapters read the prepared digits CNN, `model.pt`,
and its splits, `splits.npz`, from a folder the caller names); for a user's adapter, whose settings name a
`_target_`, the keyword arguments of that target (`pipeline.benchmark.plugin_code.build`), whose source is then part of
the campaign's key.
"""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable

import numpy as np

from pipeline.runtime.fingerprint import sources_digest, sources_of, stage_fingerprint, unit_key
from pipeline.fuzz.adapters import (
    CAMPAIGN_KEYS,
    Adapter,
    as_adapter,
    run_adapter_campaign,
    split_settings,
    stratified_subset,
)
from pipeline.fuzz.report import StructuralFuzzReport
from pipeline.runtime.store import ResumeStore, run_cached

# Adapters that fuzz the prepared digits CNN on digits images (its model.pt and splits.npz): they apply to
# a benchmark whose model under test is of this kind. Elsewhere (text, code) the stage says so in its
# outputs instead of fuzzing a model it cannot load; `geometric` needs no benchmark (a fitted regressor).
APPLIES_TO_MODEL = {"weights": "digits_cnn", "severity": "digits_cnn"}


def _digits_assets(folder: Path, data_dir: str, split: str, n_per_class: int | None) -> tuple[Any, np.ndarray, np.ndarray]:
    from pipeline.models.cnn import load_cnn

    model_path, splits_path = folder / "model.pt", folder / "splits.npz"
    if not model_path.exists() or not splits_path.exists():
        raise ValueError(f"the {data_dir} model or splits are missing under {folder}; run the prepare stage first")
    with np.load(splits_path) as z:
        if f"{split}_x" not in z:
            raise ValueError(f"unknown split {split!r}; valid choices: train, dev, test")
        x, y = z[f"{split}_x"], z[f"{split}_y"]
    keep = stratified_subset(y, n_per_class)
    return load_cnn(model_path), x[keep], y[keep]


def _geometric(folder: Path | None, *, split_seed: int, test_fraction: float) -> Adapter:
    from pipeline.fuzz.adapters.geometric import geometric_adapter

    return geometric_adapter(seed=int(split_seed), test_fraction=float(test_fraction))


def _weights(folder: Path | None, *, data_dir: str, split: str, n_per_class: int | None = None) -> Adapter:
    from pipeline.fuzz.adapters.weights import weights_adapter

    return weights_adapter(*_digits_assets(folder, data_dir, split, n_per_class))


def _severity(folder: Path | None, *, data_dir: str, split: str, families: list[str], perturbation_seed: int,
              operating_severity: float, n_per_class: int | None = None) -> Adapter:
    from pipeline.fuzz.adapters.severity import severity_adapter

    return severity_adapter(*_digits_assets(folder, data_dir, split, n_per_class), families=families,
                            seed=int(perturbation_seed), operating_severity=float(operating_severity))


BUILDERS: dict[str, Callable[..., Adapter]] = {"geometric": _geometric, "weights": _weights, "severity": _severity}


def adapter_keys(name: str, settings: dict[str, Any]) -> tuple[str, ...]:
    """The settings of adapter `name` that are its builder's, not the campaign's (a plug-in's: all of them)."""
    if name not in BUILDERS:
        return tuple(k for k in settings if k not in CAMPAIGN_KEYS)
    return tuple(p for p in inspect.signature(BUILDERS[name]).parameters if p != "folder")


def check_plugin_adapter(name: str, settings: dict[str, Any]) -> None:
    """Refuse, before any work, a user's adapter class without `evaluate_fn` (`pipeline.plugins.protocols.FuzzAdapter`)."""
    if name not in BUILDERS:
        from pipeline.benchmark.plugin_code import check_class
        from pipeline.plugins.protocols import FuzzAdapter

        check_class(settings, f"fuzz.adapters.{name}", (FuzzAdapter,))


def build_adapter(name: str, options: dict[str, Any], folder: Path | None) -> Adapter:
    """Adapter `name` from its builder options (`adapter_keys`); `folder` holds the prepared digits model."""
    if name in BUILDERS:
        return BUILDERS[name](folder, **options)
    from pipeline.benchmark.plugin_code import build

    runtime = {"data_dir": folder} if folder is not None else {}  # `data_dir` of the entry, under paths.data
    return as_adapter(build(options, f"fuzz.adapters.{name}", **runtime), name, options["_target_"])


def not_applicable(name: str, model_kind: str, benchmark: str, modality: str) -> str | None:
    """Why adapter `name` does not apply to a benchmark whose model is of `model_kind`, or None when it does."""
    kind = APPLIES_TO_MODEL.get(name)
    if kind is None or model_kind == kind:
        return None
    return (f"not applicable: the {name} adapter fuzzes a {kind} model on its prepared images (model.pt, splits.npz); "
            f"benchmark {benchmark!r} ({modality}) has a {model_kind} model")


def campaign_key(name: str, settings: dict[str, Any], seed: int, assets: str | None) -> str:
    """Everything a campaign's report depends on: settings, seed, the digest of the prepared assets it reads
    (None: none), code, libraries."""
    if name in BUILDERS:
        what = {"adapter": name, "settings": settings, "seed": int(seed), "assets": assets}
        code = stage_fingerprint(what, ("pipeline.fuzz.adapters", f"pipeline.fuzz.adapters.{name}", __name__))
    else:  # a user's adapter: the source of its package, not its name, says what computed the report
        plugin = sources_digest(sources_of([settings["_target_"]]))
        what = {"adapter": name, "settings": settings, "seed": int(seed), "assets": assets, "plugin": plugin}
        code = stage_fingerprint(what, ("pipeline.fuzz.adapters", "pipeline.benchmark.plugin_code", __name__))
    return unit_key(code, "campaign")


def cached_campaign(name: str, settings: dict[str, Any], seed: int, folder: Path | None, assets: str | None, store: Path,
                    progress: bool = False) -> StructuralFuzzReport:
    """The campaign of adapter `name` under `settings` (campaign and builder keys) and `seed`, from the resume
    store at `store` when it holds this campaign (`campaign_key`), else run and stored there."""
    campaign, options = split_settings(settings, adapter_keys(name, settings))
    check_plugin_adapter(name, settings)

    def compute(indices: list[int]) -> list[tuple[int, bytes]]:
        adapter = build_adapter(name, options, folder)
        report = run_adapter_campaign(adapter, campaign, np.random.default_rng(int(seed)), progress)
        return [(0, report.to_json().encode())]

    key = campaign_key(name, settings, seed, assets)
    with ResumeStore(store) as db:
        report = StructuralFuzzReport.from_json(run_cached(db, [key], compute)[0].decode())
        db.retain([key])
    return report


def report_metrics(name: str, report: StructuralFuzzReport) -> dict[str, Any]:
    """The headline numbers of a campaign's report (the stage's metrics.json)."""
    m = report.mri_result
    return {"adapter": name, "base_error": m.base_mae, "mri": m.mri, "mean_omega": m.mean_omega, "p95_omega": m.p95_omega,
            "cvar_omega": m.cvar_omega, "worst_case_error": m.worst_case_mae, "n_thresholds": len(report.adversarial_results),
            "n_evaluations": report.n_evaluations}
