"""Exhaustive ground truth over Θ (TestNav §4.1): every configuration evaluated, then δ and ρ
normalised over Θ and the Pareto set P* flagged per fidelity metric.

Work is split into tasks, one per prefix (θ_1, …, θ_p); a task evaluates its configurations in
lexicographic order with prefix reuse. Tasks are spread over worker processes and over shards
(task k belongs to shard k mod num_shards). Each finished configuration is appended at once to the
task's log (one JSON line, flushed and fsynced), so a killed run restarts without recomputing any
finished configuration; `collect` reads the logs back.
"""
from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.benchmark import Benchmark
from pipeline.pareto import pareto_mask
from pipeline.perturb.compose import PrefixCache
from pipeline.space import Space

BenchmarkFactory = Callable[[], Benchmark]


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


def _log_name(prefix: Sequence[int]) -> str:
    return "task-" + "-".join(str(v) for v in prefix) + ".jsonl"


def read_logs(log_dir: str | Path) -> dict[tuple[int, ...], dict[str, float]]:
    """Finished configurations from every task log; a line cut short by a kill is ignored."""
    done: dict[tuple[int, ...], dict[str, float]] = {}
    for path in sorted(Path(log_dir).glob("task-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            done[tuple(row["theta"])] = row["values"]
    return done


_WORKER_BENCHMARK: Benchmark | None = None


def _init_worker(factory: BenchmarkFactory, threads: int) -> None:
    """One torch thread per worker in every mode, so values do not depend on the worker count."""
    import torch

    global _WORKER_BENCHMARK
    torch.set_num_threads(threads)
    _WORKER_BENCHMARK = factory()


def _run_task(prefix: tuple[int, ...], pending: list[tuple[int, ...]], log_dir: str) -> tuple[int, int]:
    """Evaluate `pending` (configurations of one prefix) and append each to the task log as it finishes.
    Returns (configurations evaluated, active transform applications per input)."""
    bench = _WORKER_BENCHMARK
    assert bench is not None, "worker not initialised"
    cache = PrefixCache(bench.perturbations, bench.clean, bench.seed)
    n = 0
    with open(Path(log_dir) / _log_name(prefix), "a") as log:
        for theta, values in bench.evaluate_many(pending, cache):
            log.write(json.dumps({"theta": list(theta), "values": values}) + "\n")
            log.flush()
            os.fsync(log.fileno())
            n += 1
    return n, cache.applications


def _task_results(factory: BenchmarkFactory, plan: list[tuple[tuple[int, ...], list[tuple[int, ...]]]], log_dir: str,
                  workers: int) -> Iterable[tuple[int, int]]:
    """`_run_task` over the plan, in this process (workers == 1) or in spawned worker processes."""
    if not plan:
        return
    if workers == 1:
        _init_worker(factory, threads=1)
        for prefix, pending in plan:
            yield _run_task(prefix, pending, log_dir)
        return
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(factory, 1)) as pool:
        for fut in as_completed([pool.submit(_run_task, prefix, pending, log_dir) for prefix, pending in plan]):
            yield fut.result()


def evaluate_shard(
    factory: BenchmarkFactory, space: Space, log_dir: str | Path, *, shard: int = 0, num_shards: int = 1,
    workers: int = 1, progress: bool = True,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Evaluate every configuration of one shard, resuming from `log_dir`. Returns the raw table of the
    shard (one row per θ, in index order) and run statistics (applications, seconds, configurations
    recomputed). `factory` builds the benchmark inside each worker process; it must be picklable."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    done = read_logs(log_dir)
    tasks = tasks_for_shard(space, shard, num_shards)
    plan = [(p, [t for t in configs_of(space, p) if t not in done]) for p in tasks]
    plan = [(p, pending) for p, pending in plan if pending]
    n_total = sum(len(configs_of(space, p)) for p in tasks)
    stats = {"configurations": n_total, "resumed": n_total - sum(len(t) for _, t in plan), "evaluated": 0, "applications": 0}
    t0 = time.perf_counter()
    workers = max(1, min(workers or os.cpu_count() or 1, len(plan) or 1))
    bar = tqdm(total=n_total, initial=stats["resumed"], desc=f"ground truth shard {shard}/{num_shards}", disable=not progress)
    for n, apps in _task_results(factory, plan, str(log_dir), workers):
        stats["evaluated"] += n
        stats["applications"] += apps
        bar.update(n)
    bar.close()
    stats["seconds"] = time.perf_counter() - t0
    done = read_logs(log_dir)
    wanted = [t for p in tasks for t in configs_of(space, p)]
    missing = [t for t in wanted if t not in done]
    if missing:
        raise RuntimeError(f"{len(missing)} configurations missing after evaluation, e.g. {missing[0]}")
    return raw_table(space, {t: done[t] for t in wanted}), stats


def raw_table(space: Space, results: dict[tuple[int, ...], dict[str, float]]) -> pd.DataFrame:
    """One row per evaluated θ: the levels, order, ψ, δ, raw ρ per metric and timings, in index order."""
    thetas = np.array(sorted(results), dtype=np.int64).reshape(-1, space.n_dims)
    df = pd.DataFrame(thetas, columns=list(space.names))
    df.insert(space.n_dims, "order", Space.order(thetas) if len(thetas) else [])
    for key in results[next(iter(results))] if results else []:
        df[key] = [results[tuple(t)][key] for t in thetas.tolist()]
    return df


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


def minmax(values: np.ndarray) -> np.ndarray:
    """Min-max normalisation over Θ to [0, 1]; a constant column maps to 0."""
    values = np.asarray(values, dtype=float)
    lo, hi = values.min(), values.max()
    return np.zeros_like(values) if hi == lo else (values - lo) / (hi - lo)


def finalize(raw: pd.DataFrame, metrics: Sequence[str], task_metric: str = "accuracy") -> pd.DataFrame:
    """Add normalised objectives and the P* flag per fidelity metric to a complete raw table.

    Columns: levels, order, <task_metric>, delta, delta_norm, rho_<m>, rho_<m>_norm, pareto_<m>,
    eval_seconds (+ its perturb / infer / fidelity parts)."""
    df = raw.rename(columns={"psi": task_metric}).copy()
    df["delta_norm"] = minmax(df["delta"].to_numpy())
    for m in metrics:
        df[f"rho_{m}_norm"] = minmax(df[f"rho_{m}"].to_numpy())
        df[f"pareto_{m}"] = pareto_mask(df[["delta_norm", f"rho_{m}_norm"]].to_numpy())
    parts = [c for c in ("seconds_perturb", "seconds_infer", "seconds_fidelity") if c in df]
    df["eval_seconds"] = df[parts].sum(axis=1)
    return df


def pareto_summary(table: pd.DataFrame, metrics: Sequence[str], n_dims: int) -> dict[str, Any]:
    """|P*| and counts by perturbation order 1..n per fidelity metric (TestNav Table 3)."""
    out: dict[str, Any] = {}
    for m in metrics:
        front = table[table[f"pareto_{m}"]]
        out[m] = {"size": int(len(front)), **{f"order_{k}": int((front["order"] == k).sum()) for k in range(0, n_dims + 1)}}
    return out
