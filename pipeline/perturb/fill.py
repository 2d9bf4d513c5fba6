"""Filling a perturbation store (`pipeline.perturb.materialize`): every chunk of the configurations asked for,
in lexicographic order with prefix reuse, on this process or on spawned worker processes; chunks already present
(checksum verified) are skipped, so an interrupted fill resumes where it stopped."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from itertools import groupby
from typing import Any

from tqdm import tqdm

from pipeline.perturb.materialize import PerturbationStore, Theta
from pipeline.runtime.worker_state import start_worker, worker_state


def _fill(store: PerturbationStore, chunks: Sequence[tuple[Theta, list[Theta]]]) -> dict[str, int]:
    """Fill the chunks (prefix, wanted configurations) of one task; their statistics."""
    cache = store._prefix_cache()
    start = cache.applications
    stats = {"computed": 0, "present": 0, "chunks_written": 0}
    for prefix, group in chunks:
        present = store.read_chunk(prefix) or {}
        missing = [t for t in group if t not in present]
        if missing:
            store.fill_chunk(prefix, missing, present)
            stats["chunks_written"] += 1
        stats["computed"] += len(missing)
        stats["present"] += len(group) - len(missing)
    stats["applications"] = cache.applications - start
    return stats


_WORKER = "perturbation_store"  # the worker's copy of the store being filled, in the per-process cache


def _init_worker(factory: Callable[[], PerturbationStore], digest: str) -> None:
    def build() -> PerturbationStore:
        store = factory()
        if store.digest != digest:
            raise ValueError(f"the worker's store {store.digest} is not the one being filled ({digest})")
        return store

    start_worker(_WORKER, build)


def _fill_in_worker(chunks: Sequence[tuple[Theta, list[Theta]]]) -> dict[str, int]:
    return _fill(worker_state(_WORKER), chunks)


def materialize(store: PerturbationStore, thetas: Iterable[Sequence[int]] | None = None, progress: bool = True,
                workers: int = 1, factory: Callable[[], PerturbationStore] | None = None) -> dict[str, Any]:
    """Fill `store` with T_θ for `thetas` (the store's bound when None, all of Θ when it has none), chunk
    by chunk in lexicographic order with prefix reuse; chunks that already hold their configurations
    (checksum verified) are skipped, so an interrupted fill resumes where it stopped. Writes the
    manifest and returns statistics: configurations wanted, computed and already present, chunks
    written, active transform applications per input, bytes on disk, seconds.

    `workers` > 1 fills the chunks in that many spawned processes, each building the same store with
    `factory` (picklable: perturbations are built, not pickled), one task per (θ_1, θ_2) as the ground truth
    splits its work: every value is seeded by its input and its θ, so the bits are the same; only the
    applications count grows by the shorter prefixes that each task computes again."""
    if workers > 1 and factory is None:
        raise ValueError(f"workers={workers} needs a factory that builds the store in each worker process")
    t0 = time.perf_counter()
    if thetas is None:
        thetas = store.bound if store.bound is not None else (tuple(t) for t in store.space.grid().tolist())
    wanted = sorted({t for t in (store.space.validate(t) for t in thetas) if any(t)})
    chunks = [(prefix, list(group)) for prefix, group in groupby(wanted, key=lambda t: t[:-1])]
    tasks = [list(task) for _, task in groupby(chunks, key=lambda chunk: chunk[0][:2])]
    stats = {"configurations": len(wanted), "computed": 0, "present": 0, "chunks_written": 0, "applications": 0}
    with tqdm(total=len(wanted), desc="perturbation store", unit="config", disable=not progress) as bar:
        def add(task_stats: dict[str, int], task: list[tuple[Theta, list[Theta]]]) -> None:
            for key, value in task_stats.items():
                stats[key] += value
            bar.update(sum(len(group) for _, group in task))

        if workers <= 1 or len(tasks) <= 1:
            for task in tasks:
                add(_fill(store, task), task)
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed
            from multiprocessing import get_context

            with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=get_context("spawn"),
                                     initializer=_init_worker, initargs=(factory, store.digest)) as pool:
                futures = {pool.submit(_fill_in_worker, task): task for task in tasks}
                for future in as_completed(futures):
                    add(future.result(), futures[future])
    manifest = store.write_manifest()
    stats.update(size_bytes=manifest["size_bytes"], seconds=time.perf_counter() - t0)
    return stats
