"""Stage `fuzz`: the structural fuzzing campaign (chapter 9) of one adapter, written to
outputs/fuzz/<adapter>/report.json (the full report), summary.txt (its text) and metrics.json.

    python scripts/fuzz.py fuzz.adapter=geometric     # or weights | severity (the digits CNN of `prepare`)
    python scripts/fuzz.py fuzz.adapter=severity fuzz.adapters.severity.adversarial_tolerance=0.2 paths.outputs=/tmp/fuzz   # a setting of
        # its own writes outside the committed outputs/fuzz/severity (the stage refuses to overwrite them)
    python scripts/fuzz.py +fuzz/adapters@fuzz.adapters.mine=external fuzz.adapter=mine \
        fuzz.adapters.mine._target_=my_pkg.fuzz.MyAdapter                 # your own (conf/fuzz/adapters/external.yaml)

A finished campaign is kept in a resume store (data/cache/store/fuzz/<adapter>.sqlite) keyed by its
settings, the prepared model, the fuzzing code and the library versions; its wall time goes to
timings.json, apart from the results.
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import time

from pipeline.fuzz.adapters import chosen_adapter
from pipeline.fuzz.adapters.build import cached_campaign, not_applicable, report_metrics
from pipeline.runtime.io import write_json, write_text
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.layout import asset_digest, fuzz_assets, fuzz_dir, store_path


def main(cfg) -> None:
    name = chosen_adapter(cfg)
    out = fuzz_dir(cfg, name)
    reason = not_applicable(name, str(cfg.model.kind), str(cfg.benchmark.name), str(cfg.benchmark.modality))
    if reason is not None:
        write_json({"adapter": name, "applicable": False, "reason": reason}, out / "report.json")
        write_text(reason + "\n", out / "summary.txt")
        write_json({"adapter": name, "applicable": False}, out / "metrics.json")
        write_json({"adapter": name, "seconds": 0.0}, out / "timings.json")
        print(f"{name}: {reason}")
        return
    settings = plain(cfg.fuzz.adapters[name]) if name in cfg.fuzz.adapters else {}
    folder = fuzz_assets(cfg, name) if "data_dir" in settings else None
    assets = asset_digest(folder) if folder is not None and folder.is_dir() else None
    start = time.perf_counter()
    report = cached_campaign(name, settings, int(cfg.fuzz.seed), folder, assets, store_path(cfg, "fuzz", name),
                             bool(cfg.fuzz.progress))
    seconds = time.perf_counter() - start
    write_text(report.to_json() + "\n", out / "report.json")
    write_text(report.summary(), out / "summary.txt")
    write_json(report_metrics(name, report), out / "metrics.json")
    write_json({"adapter": name, "seconds": round(seconds, 1)}, out / "timings.json")
    print(report.summary())
    print(f"{name}: {report.n_evaluations} evaluations in {seconds:.1f} s -> {out}")


if __name__ == "__main__":
    run_stage(main)
