"""Exhaustive ground truth over Θ (TestNav §4.1): every configuration evaluated, then δ and ρ
normalised over Θ and the Pareto set P* flagged per fidelity metric.

Work is split into tasks, one per prefix (θ_1, …, θ_p); a task evaluates its configurations in
lexicographic order with prefix reuse. Tasks are spread over worker processes and over shards
(task k belongs to shard k mod num_shards). Each finished configuration is committed at once to the
resume store (`pipeline.runtime.store`) under a key that names the benchmark config, the prepared assets, the
code and the library versions, so a killed run restarts without recomputing any finished configuration,
a code change recomputes them all, and two runs at once share the work. Timings go to a table of their
own: result tables hold only values that are the same on every machine.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.benchmark.problem import Benchmark
from pipeline.runtime.fingerprint import sources_digest, stage_fingerprint, unit_key
from pipeline.front.per_input import confidence_columns, confidence_summary, inputs_frame, split_per_input
from pipeline.front.ground_truth_table import finalize, pareto_summary
from pipeline.runtime.io import atomic_path, write_json, write_parquet
from pipeline.runtime.numerics import n_workers
from pipeline.perturb.compose import PrefixCache, compose
from pipeline.benchmark.plugin_code import code_modules, plugin_sources
from pipeline.front.space import Space
from pipeline.runtime.store import ResumeStore
from pipeline.runtime.worker_state import evict, start_worker, worker_state

BenchmarkFactory = Callable[[], Benchmark]
SourceFactory = Callable[[Benchmark], Any]  # benchmark -> an object whose get(θ) returns T_θ (a PerturbationStore)
CODE = ("pipeline.benchmark.build", "pipeline.benchmark.ground_truth")  # the modules that compute a configuration's values


def table_fingerprint(spec: dict[str, Any], assets: str) -> str:
    """What every value of the table depends on: the benchmark spec (`pipeline.benchmark.build`), the digest of its
    prepared assets, code, libraries (not the perturbation store's settings: the store returns T_θ bit for
    bit as prefix reuse computes it), the source of the built-in modules it runs by import path
    (`pipeline.benchmark.plugin_code.code_modules`) and of the user's plug-ins it names (`pipeline.benchmark.plugin_code.plugin_sources`)."""
    spec = {k: v for k, v in spec.items() if k != "store"}
    return stage_fingerprint({"benchmark": spec, "assets": assets, "plugins": sources_digest(plugin_sources(spec))},
                             (*CODE, *code_modules(spec)))


def tasks_for_shard(space: Space, shard: int = 0, num_shards: int = 1, prefix_len: int = 2) -> list[tuple[int, ...]]:
    """The prefixes (tasks) of one shard, in lexicographic order."""
    if num_shards < 1 or not 0 <= shard < num_shards:
        raise ValueError(f"shard must be in 0..num_shards-1 with num_shards >= 1, got shard={shard}, num_shards={num_shards}")
    p = min(prefix_len, space.n_dims)
    prefixes = [tuple(int(v) for v in row) for row in Space(space.names[:p], space.levels).grid()]
    return prefixes[shard::num_shards]


def configs_of(space: Space, prefix: tuple[int, ...]) -> list[tuple[int, ...]]:
    rest = space.n_dims - len(prefix)
    if rest == 0:
        return [prefix]
    return [prefix + tuple(int(v) for v in row) for row in Space(space.names[len(prefix):], space.levels).grid()]


TIMING_COLUMNS = ("seconds_perturb", "seconds_infer", "seconds_fidelity")


def config_key(fingerprint: str, theta: Sequence[int]) -> str:
    """Resume-store key of one configuration's values under a stage fingerprint."""
    return unit_key(fingerprint, {"theta": [int(v) for v in theta]})


def task_key(fingerprint: str, prefix: Sequence[int]) -> str:
    """Resume-store key of a task (the unit that is claimed: a prefix and its configurations)."""
    return unit_key(fingerprint, {"task": [int(v) for v in prefix]})


_WORKER = "ground_truth"  # the worker's benchmark, resume store and source, in the per-process cache


def _init_worker(factory: BenchmarkFactory, store_path: str, source: SourceFactory | None = None, child: bool = True) -> None:
    """Build the worker's benchmark, resume store and source (`pipeline.runtime.worker_state`: one torch thread, so values
    do not depend on the worker count; an error is raised by each task). In this process (`child` False), the
    store of an earlier call is closed first."""
    earlier = evict(_WORKER)
    if earlier is not None:
        earlier["store"].close()

    def build() -> dict[str, Any]:
        bench = factory()
        return {"benchmark": bench, "store": ResumeStore(store_path), "source": source(bench) if source is not None else None}

    start_worker(_WORKER, build, child)


def _run_task(prefix: tuple[int, ...], fingerprint: str) -> tuple[bool, int, int]:
    """Claim the task of `prefix` and evaluate its unfinished configurations, committing each to the
    store as it finishes. Returns (claimed, configurations evaluated, active transform applications per
    input); a task another run holds is left to it. The perturbed sets come from the worker's source (the
    perturbation store) when it has one, else from prefix reuse in memory."""
    state = worker_state(_WORKER)
    bench, store, source = state["benchmark"], state["store"], state["source"]
    key = task_key(fingerprint, prefix)
    if not store.claim(key):
        return False, 0, 0
    try:
        finished = store.keys()
        pending = [t for t in configs_of(bench.space, prefix) if config_key(fingerprint, t) not in finished]
        cache = PrefixCache(bench.perturbations, bench.clean, bench.seed)
        before = source.applications if source is not None else 0
        n = 0
        for theta, values in bench.evaluate_many(pending, cache, source=source):
            store.put(config_key(fingerprint, theta), json.dumps(values).encode())
            n += 1
    finally:
        store.release([key])
    return True, n, cache.applications + (source.applications - before if source is not None else 0)


def _task_results(factory: BenchmarkFactory, prefixes: list[tuple[int, ...]], store_path: str, fingerprint: str,
                  workers: int, source: SourceFactory | None) -> Iterable[tuple[tuple[int, ...], tuple[bool, int, int]]]:
    """(prefix, `_run_task` result) over the prefixes, in this process (workers == 1) or in spawned
    worker processes."""
    if workers == 1:
        _init_worker(factory, store_path, source, child=False)
        for prefix in prefixes:
            yield prefix, _run_task(prefix, fingerprint)
        return
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_init_worker,
                             initargs=(factory, store_path, source)) as pool:
        futures = {pool.submit(_run_task, prefix, fingerprint): prefix for prefix in prefixes}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def evaluate_shard(
    factory: BenchmarkFactory, space: Space, store_path: str | Path, fingerprint: str, *, shard: int = 0,
    num_shards: int = 1, workers: int = 1, progress: bool = True, source: SourceFactory | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Evaluate every configuration of one shard, resuming from the store at `store_path` (values keyed
    by `fingerprint`: config, code and library versions). A run started beside another on the same
    store computes only what the other has not claimed. Returns the raw table of the shard (one row per
    θ, in index order), its timings table and run statistics. `factory` builds the benchmark inside each
    worker process; `source` (optional) makes the worker's supplier of perturbed sets from its benchmark
    (`functools.partial(pipeline.perturb.materialize.open_store, root, max_order)`: the perturbation store,
    shared by every worker, shard and model); both must be picklable. Values do not depend on `source`."""
    store = ResumeStore(store_path)
    store.set_meta("fingerprint", fingerprint)
    tasks = tasks_for_shard(space, shard, num_shards)
    configs = {task_key(fingerprint, p): (p, configs_of(space, p)) for p in tasks}
    wanted = [t for _, ts in configs.values() for t in ts]
    done = store.keys()
    stats = {"configurations": len(wanted), "resumed": sum(config_key(fingerprint, t) in done for t in wanted),
             "evaluated": 0, "applications": 0}
    bar = tqdm(total=len(wanted), initial=stats["resumed"], desc=f"ground truth shard {shard}/{num_shards}", disable=not progress)

    def is_done(key: str) -> bool:
        finished = store.keys()
        return all(config_key(fingerprint, t) in finished for t in configs[key][1])

    def run(pending: list[str]) -> list[str]:
        processes = max(1, min(n_workers(workers), len(pending)))
        claimed = []
        for prefix, (took, n, apps) in _task_results(factory, [configs[k][0] for k in pending], str(store_path), fingerprint, processes, source):
            claimed += [task_key(fingerprint, prefix)] if took else []
            stats["evaluated"] += n
            stats["applications"] += apps
            bar.update(n)
        finished = store.keys()
        bar.n = sum(config_key(fingerprint, t) in finished for t in wanted)  # with work done by a concurrent run
        bar.refresh()
        return claimed

    t0 = time.perf_counter()
    results: dict[tuple[int, ...], dict[str, float]] = {}
    while len(results) < len(wanted):  # a second pass recomputes rows that failed their checksum
        store.share_work(list(configs), run, is_done)
        for t in wanted:
            if t not in results and (value := store.get(config_key(fingerprint, t))) is not None:
                results[t] = json.loads(value)
    bar.close()
    stats["seconds"] = time.perf_counter() - t0
    store.close()
    raw = raw_table(space, results)
    timing = [c for c in TIMING_COLUMNS if c in raw]
    return raw.drop(columns=timing), raw[list(space.names) + timing], stats


def raw_table(space: Space, results: dict[tuple[int, ...], dict[str, float]]) -> pd.DataFrame:
    """One row per evaluated θ: the levels, order, ψ, δ, raw ρ per metric (and timings), in index order."""
    thetas = np.array(sorted(results), dtype=np.int64).reshape(-1, space.n_dims)
    df = pd.DataFrame(thetas, columns=list(space.names))
    df.insert(space.n_dims, "order", Space.order(thetas) if len(thetas) else [])
    for key in results[next(iter(results))] if results else []:
        df[key] = [results[tuple(t)][key] for t in thetas.tolist()]
    return df


def read_shard(space: Space, store_path: str | Path, fingerprint: str, shard: int, num_shards: int) -> pd.DataFrame:
    """The raw table of one finished shard from its store file; a store made under another fingerprint
    (other code, config or library versions) or missing configurations is refused, naming the shard."""
    path = Path(store_path)
    if not path.is_file():
        raise ValueError(f"shard {shard} of {num_shards}: no store {path}; run that shard first")
    store = ResumeStore(path)
    try:
        if store.meta("fingerprint") != fingerprint:
            raise ValueError(f"shard {shard} of {num_shards} ({path}) was made from other code, config or library "
                             f"versions than this merge; rerun that shard")
        results = {}
        for prefix in tasks_for_shard(space, shard, num_shards):
            for t in configs_of(space, prefix):
                value = store.get(config_key(fingerprint, t))
                if value is None:
                    raise ValueError(f"shard {shard} of {num_shards} ({path}) lacks configuration {t}; rerun that shard")
                results[t] = json.loads(value)
    finally:
        store.close()
    raw = raw_table(space, results)
    return raw.drop(columns=[c for c in TIMING_COLUMNS if c in raw])


def merge_shards(space: Space, tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate shard tables and check that together they cover Θ exactly once."""
    df = pd.concat(list(tables), ignore_index=True)
    idx = space.indices(df[list(space.names)].to_numpy())
    dup = pd.Series(idx).duplicated()
    if dup.any():
        raise ValueError(f"configuration {space.theta(int(idx[dup.to_numpy()][0]))} appears in more than one shard")
    if len(df) != space.size:
        missing = sorted(set(range(space.size)) - set(idx.tolist()))
        raise ValueError(f"shards cover {len(df)} of {space.size} configurations; missing e.g. {space.theta(missing[0])}")
    return df.iloc[np.argsort(idx)].reset_index(drop=True)


def gallery_array(items: list, example: Any) -> np.ndarray:
    """The gallery's perturbed examples as one array: an image stack, or a unicode array of texts (both
    load without pickle)."""
    if isinstance(example, np.ndarray):
        return np.stack(items) if items else np.zeros((0,) + example.shape[1:], example.dtype)
    return np.array([str(x) for x in items], dtype=str)


def write_final(raw: pd.DataFrame, bench: Benchmark, spec: dict[str, Any], *, table: Path, summary: Path,
                gallery: Path, inputs: Path, source: Any = None) -> dict[str, Any]:
    """Normalise and flag P* (`finalize`); from the per-input values (a benchmark built with `per_input`) the
    membership of P* with confidence (`pipeline.front.per_input`: δ's interval, π and the core per metric) and
    the per-input file; then write the table, its summary (returned) and the gallery of the example
    `spec["gallery_index"]` under every P* configuration (thetas, images, clean, label), each as it is in T_θ: read
    from `source` (the perturbation store, as in `evaluate_shard`) when given, else composed."""
    metrics, task_metric = list(spec["fidelity"]), spec.get("task_metric", "accuracy")
    raw, per_input = split_per_input(raw)
    final = finalize(raw, metrics, task_metric)
    info = {"benchmark": spec["name"], "space_size": bench.space.size, "clean_" + task_metric: bench.clean_score,
            "pareto": pareto_summary(final, metrics, bench.space.n_dims)}
    if per_input:
        final = pd.concat([final, confidence_columns(final, per_input, bench.labels, metrics, task_metric, bench.space,
                                                     seed=int(spec.get("seed", 0)))], axis=1)
        info["confidence"] = confidence_summary(final, metrics)
        write_parquet(inputs_frame(final[list(bench.space.names)].to_numpy(), bench.space, per_input), inputs)
    write_parquet(final, table)
    write_json(info, summary)
    front = final[final[[f"pareto_{m}" for m in metrics]].any(axis=1)]
    index = int(spec.get("gallery_index", 0))
    example = bench.clean[index : index + 1]
    thetas = front[list(bench.space.names)].to_numpy()
    if source is not None:
        items = [source.get(tuple(int(v) for v in t))[index] for t in thetas]
    else:
        items = [compose(bench.perturbations, example, tuple(t), bench.seed, indices=[index])[0] for t in thetas]
    images = gallery_array(items, example)
    with atomic_path(gallery) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, thetas=thetas, images=images, clean=example[0], label=bench.labels[index])
    return info
