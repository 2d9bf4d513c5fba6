"""Stage `search`: every method × seed × fidelity metric of the configured benchmark, one trace each
(TestNav §4.2-4.3).

    python scripts/search.py                          # params.yaml: table mode on outputs/groundtruth/<benchmark>.parquet
    python scripts/search.py benchmark=tiny search.seeds=3 search.methods=[testnav,random]
    python scripts/search.py search.mode=live         # no ground truth: run the benchmark itself, write R

Table mode writes outputs/search/<benchmark>/<metric>/<method>/seed=<k>.parquet. Finished runs live in a
resume store (data/cache/store/search/<benchmark>.sqlite) keyed by the run's spec (method, seed, B, q,
hyperparameters, a digest of the ground truth), the search code and the library versions, so a killed
run resumes and a changed setting or code is redone. Live mode uses raw δ and ρ (normalising needs all of Θ),
runs `search.recommended` with its stopping rule unless `search.live.methods` names others, evaluates
each round's q configurations in parallel (`search.live.executor`), keeps every evaluation in
data/cache/store/search_live/<benchmark>.sqlite (a killed run resumes), and writes
outputs/search_live/<benchmark>/<metric>/<method>/seed=<k>.{trace,ranked}.parquet.
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import json

from omegaconf import OmegaConf

from pipeline.config.search import live_methods
from pipeline.runtime.io import parquet_bytes, read_parquet_bytes, write_parquet
from pipeline.runtime.numerics import n_workers
from pipeline.benchmark.plugin_code import check_plugins
from pipeline.search import LiveOracle, method_class, rank_evaluated, run_search
from pipeline.search.parallel import map_runs
from pipeline.front.space import Space
from pipeline.runtime.store import ResumeStore, run_cached
from pipeline.stages.runner import benchmark_spec, run_stage
from pipeline.stages.layout import asset_digest, data_dir, live_path, store_path, table_path, trace_path
from pipeline.stages.search_inputs import budget, groundtruth, hyperparameters, metrics_of, table_jobs


def run_table(cfg) -> None:
    name = cfg.benchmark.name
    path = table_path(cfg)
    if not path.exists():
        raise ValueError(f"no ground-truth table {path}; run `dvc repro groundtruth` first, or use search.mode=live")
    table = groundtruth(cfg)
    space = Space(tuple(cfg.benchmark.perturbations), int(cfg.benchmark.levels))
    jobs, keys, paths, absent = table_jobs(cfg, table, space)
    if absent:
        print(f"{', '.join(absent)}: not run on {name}, whose table has no {', '.join(method_class(m).guide for m in absent)} "
              "(benchmark.adequacy is null: the adequacy metrics need a model whose layers they read)")
    with ResumeStore(store_path(cfg, "search", name)) as store:
        pending = sum(not store.has(k) for k in keys)
        print(f"{pending} of {len(keys)} runs to do ({name}), traces under {trace_path(cfg, name, 'M', 'X', 0).parents[2]}")

        def compute(indices: list[int]):
            todo = [jobs[i] for i in indices]
            modules = sorted({method_class(job["method"]).__module__ for job in todo})
            runs = map_runs(run_search, todo, int(cfg.workers), desc=f"search {name}", preload=modules)
            return ((i, parquet_bytes(trace)) for i, trace in zip(indices, runs, strict=True))

        for out, value in zip(paths, run_cached(store, keys, compute)):
            write_parquet(read_parquet_bytes(value), out)
        store.retain(keys)


def run_live(cfg) -> None:
    """Each live method × seed × metric on the benchmark itself: rounds of q configurations evaluated in
    parallel (`pipeline.benchmark.live_evaluation`), every evaluation kept in a resume store, so a killed run resumes;
    a line per round (evaluated, front size, est_recall)."""
    from pipeline.assess.live import round_line
    from pipeline.benchmark.ground_truth import table_fingerprint  # benchmark code: slow to import, and table mode needs none
    from pipeline.benchmark.live_evaluation import LiveEvaluator, spec_factory

    spec = benchmark_spec(cfg)
    check_plugins(spec)
    live = cfg.search.live
    space = Space(tuple(spec["perturbations"]), int(spec["levels"]))
    q = int(live.batch_size)
    fingerprint = table_fingerprint(spec, asset_digest(data_dir(cfg)))
    key, factory = spec_factory(spec, data_dir(cfg))
    with ResumeStore(store_path(cfg, "search_live", spec["name"])) as store, \
            LiveEvaluator(factory, key, store, fingerprint, executor=live.executor, workers=min(q, n_workers(int(cfg.workers))),
                          submitit=OmegaConf.to_container(live.submitit),
                          folder=store_path(cfg, "search_live", spec["name"]).with_suffix(".jobs")) as evaluate:
        for metric in metrics_of(cfg):
            oracle = LiveOracle.from_benchmark(evaluate, metric)
            line = round_line(metric, space.size)
            for method in live_methods(cfg.search):
                for seed in range(int(live.seeds)):
                    B = int(live.budget) if live.get("budget") else budget(cfg, space.size)
                    trace = run_search(method, oracle, space, B, seed, batch_size=q, progress=lambda s: print(line(s), flush=True),
                                       **hyperparameters(cfg, method, live=True))
                    write_parquet(trace, live_path(cfg, spec["name"], metric, method, seed, "trace"))
                    ranked = rank_evaluated(trace, space)
                    write_parquet(ranked, live_path(cfg, spec["name"], metric, method, seed, "ranked"))
                    estimate = float(trace["est_recall"].iloc[-1]) if "est_recall" in trace else None
                    print(json.dumps({"metric": metric, "method": method, "seed": seed, "proposals": len(trace),
                                      "rounds": int(trace["round"].iloc[-1]), "evaluated": int(trace["u"].iloc[-1]),
                                      "front": int((ranked["rank"] == 0).sum()), "est_recall": estimate,
                                      "computed_now": evaluate.evaluated}))


def main(cfg) -> None:
    modes = {"table": run_table, "live": run_live}
    mode = cfg.search.mode
    if mode not in modes:
        raise ValueError(f"unknown search.mode {mode!r}; valid choices: {', '.join(modes)}")
    modes[mode](cfg)


if __name__ == "__main__":
    run_stage(main)
