"""Stage `tune`: the hyperparameter grid of TestNav §3.3 (η_c × η_m × μ, several seeds, every
benchmark–metric pair) and the selected setting.

    python scripts/tune.py             # the whole grid of search.tune.*, over `workers` processes (0 = all cores)

As a Hydra multirun sweep, each job runs one setting (its search.eta_c, search.eta_m, search.mu) and
writes only its own grid cell; a plain run afterwards finds every cell done and just merges and selects:

    python scripts/tune.py -m hydra/launcher=joblib workers=1 \\
        search.eta_c=1,5,10,15 search.eta_m=1,5,10,15 search.mu=20,50,80,110
    python scripts/tune.py

Grid cells (one per setting: a row per pair and seed) live in a resume store
(data/cache/store/tune/<benchmark>.sqlite) keyed by the cell's spec, the search code and the library
versions. Writes outputs/tune/grid.parquet (all runs), outputs/tune/grid.csv (one row per setting, best first) and
outputs/tune/choice.json (the selected setting and its scores).
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import pandas as pd

from pipeline.runtime.fingerprint import unit_key
from pipeline.runtime.io import parquet_bytes, read_parquet_bytes, write_json, write_parquet, write_text
from pipeline.search.ground_truth import GroundTruth, table_metrics
from pipeline.search.tables import ground_truth_digest, search_fingerprint
from pipeline.search.studies.tuning import HYPERPARAMETERS, grid, grid_cells, select_setting, setting_scores, tie_report
from pipeline.runtime.store import ResumeStore, run_cached
from pipeline.stages.runner import run_stage
from pipeline.stages.layout import store_path, tune_dir
from pipeline.stages.search_inputs import budget, groundtruth, hyperparameters

PAPER_SETTING = {"eta_c": 1, "eta_m": 5, "mu": 110}  # TestNav §3.3's choice


def in_multirun() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def problems_of(cfg) -> list[GroundTruth]:
    names = list(cfg.search.tune.benchmarks) if cfg.search.tune.get("benchmarks") else [cfg.benchmark.name]
    out = []
    for name in names:
        table = groundtruth(cfg, name)
        out += [GroundTruth.from_table(table, name, m) for m in table_metrics(table)]
    return out


def fixed_hyperparameters(cfg) -> dict:
    """TestNav's search settings other than the grid's η_c, η_m, μ, as the search stage uses them."""
    return {k: v for k, v in hyperparameters(cfg, "testnav").items() if k not in HYPERPARAMETERS}


def cell_spec(cfg, setting: dict, problems: list[GroundTruth], seeds: list[int]) -> dict:
    """What a grid cell is computed for; a cell stored for anything else is recomputed."""
    return {**setting, "seeds": seeds, "budgets": [budget(cfg, p.space.size) for p in problems], "fixed": fixed_hyperparameters(cfg),
            "pairs": {f"{p.benchmark}/{p.metric}": ground_truth_digest(p) for p in problems}}


def main(cfg) -> None:
    tune = cfg.search.tune
    problems, seeds = problems_of(cfg), list(range(int(tune.seeds)))
    if in_multirun():
        settings = [{k: cfg.search[k] for k in HYPERPARAMETERS}]
    else:
        settings = grid(list(tune.eta_c), list(tune.eta_m), list(tune.mu))
    code = search_fingerprint()
    keys = [unit_key(code, cell_spec(cfg, s, problems, seeds)) for s in settings]
    with ResumeStore(store_path(cfg, "tune", cfg.benchmark.name)) as store:
        pending = sum(not store.has(k) for k in keys)
        print(f"{len(settings) - pending} of {len(settings)} grid cells done; {pending * len(problems) * len(seeds)} runs to do")

        def compute(indices: list[int]):
            cells = grid_cells(problems, [settings[i] for i in indices], seeds, lambda size: budget(cfg, size),
                               fixed_hyperparameters(cfg), int(cfg.workers))
            return ((i, parquet_bytes(cell)) for i, (_, cell) in zip(indices, cells))

        cells = [read_parquet_bytes(v) for v in run_cached(store, keys, compute)]
    if in_multirun():
        return
    runs = pd.concat(cells, ignore_index=True)
    scores = setting_scores(runs, float(tune.threshold))
    choice = {**select_setting(runs, float(tune.threshold)), "threshold": float(tune.threshold), "seeds": len(seeds),
              "pairs_tuned": [f"{p.benchmark}/{p.metric}" for p in problems],
              "selection": tie_report(scores, PAPER_SETTING), "search_uses": {k: cfg.search[k] for k in HYPERPARAMETERS}}
    out = tune_dir(cfg)
    write_parquet(runs, out / "grid.parquet")
    write_text(scores.to_csv(index=False), out / "grid.csv")
    write_json(choice, out / "choice.json")
    print(choice)


if __name__ == "__main__":
    run_stage(main)
