"""Stage `tune`: the hyperparameter grid of TestNav §3.3 (η_c × η_m × μ, several seeds, every
benchmark–metric pair) and the selected setting.

    python scripts/tune.py             # the whole grid of search.tune.*, over `workers` processes (0 = all cores)

As a Hydra multirun sweep, each job runs one setting (its search.eta_c, search.eta_m, search.mu) and
writes only its own grid cell; a plain run afterwards finds every cell done and just merges and selects:

    python scripts/tune.py -m hydra/launcher=joblib workers=1 \\
        search.eta_c=1,5,10,15 search.eta_m=1,5,10,15 search.mu=20,50,80,110
    python scripts/tune.py

Writes outputs/tune/cells/eta_c=…_eta_m=…_mu=….parquet (one per setting: a row per pair and seed),
outputs/tune/grid.parquet (all runs), outputs/tune/grid.csv (one row per setting, best first) and
outputs/tune/choice.json (the selected setting and its scores).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from _entry import run_stage
from search_paths import ground_truth_digest, groundtruth_table, tune_dir, written_by

from pipeline.io import write_json, write_parquet, write_text
from pipeline.search.ground_truth import GroundTruth, table_metrics
from pipeline.search.tuning import HYPERPARAMETERS, grid, grid_cells, select_setting, setting_scores


def in_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def cell_path(cfg, setting: dict) -> Path:
    return tune_dir(cfg) / "cells" / ("_".join(f"{k}={setting[k]:g}" for k in HYPERPARAMETERS) + ".parquet")


def problems_of(cfg) -> list[GroundTruth]:
    names = list(cfg.search.tune.benchmarks) if cfg.search.tune.get("benchmarks") else [cfg.benchmark.name]
    out = []
    for name in names:
        path = groundtruth_table(cfg, name)
        if not path.exists():
            raise ValueError(f"no ground-truth table {path}; run the groundtruth stage for {name!r} first")
        table = pd.read_parquet(path)
        out += [GroundTruth.from_table(table, name, m) for m in table_metrics(table)]
    return out


def cell_spec(cfg, setting: dict, problems: list[GroundTruth], seeds: list[int]) -> dict:
    """What a grid cell was computed for; a cell written for anything else is recomputed."""
    return {**setting, "seeds": seeds, "budget_factor": int(cfg.search.budget_factor),
            "pairs": {f"{p.benchmark}/{p.metric}": ground_truth_digest(p) for p in problems}}


def main(cfg) -> None:
    tune = cfg.search.tune
    problems, seeds = problems_of(cfg), list(range(int(tune.seeds)))
    if in_multirun():
        settings = [{k: cfg.search[k] for k in HYPERPARAMETERS}]
    else:
        settings = grid(list(tune.eta_c), list(tune.eta_m), list(tune.mu))
    pending = [s for s in settings if not written_by(cell_path(cfg, s), cell_spec(cfg, s, problems, seeds))]
    print(f"{len(settings) - len(pending)} of {len(settings)} grid cells done; {len(pending) * len(problems) * len(seeds)} runs to do")
    for setting, cell in grid_cells(problems, pending, seeds, int(cfg.search.budget_factor), int(cfg.workers)):
        cell.attrs["run"] = cell_spec(cfg, setting, problems, seeds)
        write_parquet(cell, cell_path(cfg, setting))
    if in_multirun():
        return
    runs = pd.concat([pd.read_parquet(cell_path(cfg, s)) for s in settings], ignore_index=True)
    runs.attrs = {}
    scores = setting_scores(runs, float(tune.threshold))
    choice = {**select_setting(runs, float(tune.threshold)), "threshold": float(tune.threshold), "seeds": len(seeds),
              "pairs_tuned": [f"{p.benchmark}/{p.metric}" for p in problems]}
    out = tune_dir(cfg)
    write_parquet(runs, out / "grid.parquet")
    write_text(scores.to_csv(index=False), out / "grid.csv")
    write_json(choice, out / "choice.json")
    print(choice)


if __name__ == "__main__":
    run_stage(main)
