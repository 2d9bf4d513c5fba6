"""Stage `fuzz`: the structural fuzzing campaign (chapter 9) of one adapter, written to
outputs/fuzz/<adapter>/report.json (the full report), summary.txt (its text) and metrics.json.

    python scripts/fuzz.py fuzz.adapter=geometric     # or weights | severity (the digits CNN of `prepare`)
    python scripts/fuzz.py fuzz.adapter=severity fuzz.adapters.severity.adversarial_tolerance=0.2

A finished campaign is kept in a resume store (data/cache/store/fuzz/<adapter>.sqlite) keyed by its
settings, the prepared model, the fuzzing code and the library versions; its wall time goes to
timings.json, apart from the results.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from _entry import plain, run_stage
from paths import asset_digest, fuzz_assets, fuzz_dir, store_path

from pipeline.fingerprint import stage_fingerprint, unit_key
from pipeline.fuzz.adapters import ADAPTERS, Adapter, check_adapter_name, run_adapter_campaign, split_settings, stratified_subset
from pipeline.fuzz.report import StructuralFuzzReport
from pipeline.io import write_json, write_text
from pipeline.store import ResumeStore, run_cached

# Adapters that fuzz the prepared digits CNN on digits images (its model.pt and splits.npz): they apply to
# a benchmark whose model under test is of this kind. Elsewhere (text, code) the stage says so in its
# outputs instead of fuzzing a model it cannot load; `geometric` needs no benchmark (a fitted regressor).
APPLIES_TO_MODEL = {"weights": "digits_cnn", "severity": "digits_cnn"}

ADAPTER_KEYS = {
    "geometric": ("split_seed", "test_fraction"),
    "weights": ("data_dir", "split", "n_per_class"),
    "severity": ("data_dir", "split", "n_per_class", "families", "perturbation_seed", "operating_severity"),
}


def _digits_assets(cfg, name: str, opts: dict):
    from pipeline.models.cnn import load_cnn

    folder = fuzz_assets(cfg, name)
    model_path, splits_path = folder / "model.pt", folder / "splits.npz"
    if not model_path.exists() or not splits_path.exists():
        raise ValueError(f"the {opts['data_dir']} model or splits are missing under {folder}; run the prepare stage first")
    with np.load(splits_path) as z:
        if f"{opts['split']}_x" not in z:
            raise ValueError(f"unknown split {opts['split']!r}; valid choices: train, dev, test")
        x, y = z[f"{opts['split']}_x"], z[f"{opts['split']}_y"]
    keep = stratified_subset(y, opts.get("n_per_class"))
    return load_cnn(model_path), x[keep], y[keep]


def build_adapter(cfg, name: str, opts: dict) -> Adapter:
    factory = ADAPTERS.get(name)
    if name == "geometric":
        return factory(seed=int(opts["split_seed"]), test_fraction=float(opts["test_fraction"]))
    model, x, y = _digits_assets(cfg, name, opts)
    if name == "weights":
        return factory(model, x, y)
    return factory(model, x, y, families=opts["families"], seed=int(opts["perturbation_seed"]),
                   operating_severity=float(opts["operating_severity"]))


def out_dir(cfg, name: str) -> Path:
    return fuzz_dir(cfg, name)


def campaign_key(cfg, name: str, settings: dict) -> str:
    """Everything a campaign's report depends on: settings, seed, the prepared assets it reads, code, libraries."""
    folder = fuzz_assets(cfg, name) if "data_dir" in settings else None
    assets = asset_digest(folder) if folder is not None and folder.is_dir() else None
    code = stage_fingerprint({"adapter": name, "settings": settings, "seed": int(cfg.fuzz.seed), "assets": assets},
                             ("pipeline.fuzz.adapters", f"pipeline.fuzz.adapters.{name}"))
    return unit_key(code, "campaign")


def not_applicable(cfg, name: str) -> str | None:
    """Why adapter `name` does not apply to the configured benchmark, or None when it does."""
    kind = APPLIES_TO_MODEL.get(name)
    if kind is None or cfg.model.kind == kind:
        return None
    return (f"not applicable: the {name} adapter fuzzes a {kind} model on its prepared images (model.pt, splits.npz); "
            f"benchmark {cfg.benchmark.name!r} ({cfg.benchmark.modality}) has a {cfg.model.kind} model")


def main(cfg) -> None:
    if "fuzz" not in cfg:
        raise ValueError("the configuration has no `fuzz` section; add `- fuzz: default` to conf/config.yaml's defaults")
    name = check_adapter_name(str(cfg.fuzz.adapter))
    reason = not_applicable(cfg, name)
    if reason is not None:
        out = out_dir(cfg, name)
        write_json({"adapter": name, "applicable": False, "reason": reason}, out / "report.json")
        write_text(reason + "\n", out / "summary.txt")
        write_json({"adapter": name, "applicable": False}, out / "metrics.json")
        write_json({"adapter": name, "seconds": 0.0}, out / "timings.json")
        print(f"{name}: {reason}")
        return
    settings = plain(cfg.fuzz.adapters[name]) if name in cfg.fuzz.adapters else {}
    campaign, opts = split_settings(settings, ADAPTER_KEYS[name])
    start = time.perf_counter()

    def compute(indices: list[int]):
        adapter = build_adapter(cfg, name, opts)
        report = run_adapter_campaign(adapter, campaign, np.random.default_rng(int(cfg.fuzz.seed)), bool(cfg.fuzz.progress))
        return [(0, report.to_json().encode())]

    key = campaign_key(cfg, name, settings)
    with ResumeStore(store_path(cfg, "fuzz", name)) as store:
        report = StructuralFuzzReport.from_json(run_cached(store, [key], compute)[0].decode())
        store.retain([key])
    seconds = time.perf_counter() - start
    out = out_dir(cfg, name)
    write_text(report.to_json() + "\n", out / "report.json")
    write_text(report.summary(), out / "summary.txt")
    m = report.mri_result
    metrics = {"adapter": name, "base_error": m.base_mae, "mri": m.mri, "mean_omega": m.mean_omega, "p95_omega": m.p95_omega,
               "cvar_omega": m.cvar_omega, "worst_case_error": m.worst_case_mae, "n_thresholds": len(report.adversarial_results),
               "n_evaluations": report.n_evaluations}
    write_json(metrics, out / "metrics.json")
    write_json({"adapter": name, "seconds": round(seconds, 1)}, out / "timings.json")
    print(report.summary())
    print(f"{name}: {report.n_evaluations} evaluations in {seconds:.1f} s -> {out}")


if __name__ == "__main__":
    assert set(ADAPTER_KEYS) == set(ADAPTERS)
    run_stage(main)
