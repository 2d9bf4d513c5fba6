"""Independent search runs over worker processes (joblib). Every run seeds its own RNG, so results do
not depend on the number of workers or on the order in which runs finish."""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator, Mapping, Sequence

from joblib import Parallel, delayed
from tqdm import tqdm


def n_workers(workers: int) -> int:
    """Worker processes for a `workers` setting: 0 means every core."""
    if int(workers) < 0:
        raise ValueError(f"workers must be >= 0 (0 = all cores), got {workers}")
    return int(workers) or len(os.sched_getaffinity(0)) or 1  # 0: the cores this process may use (a SLURM job's, not the node's)


def map_runs(function: Callable[..., Any], jobs: Sequence[Mapping[str, Any]], workers: int = 1, progress: bool = True,
             desc: str = "search") -> Iterator[Any]:
    """Yield `function(**job)` for every job (a dict of keyword arguments), in job order, as results
    arrive, so callers can write each result at once and a killed stage resumes."""
    n = min(n_workers(workers), max(len(jobs), 1))
    if n == 1:
        results: Any = (function(**job) for job in jobs)
    else:
        results = Parallel(n_jobs=n, return_as="generator")(delayed(function)(**job) for job in jobs)
    yield from tqdm(results, total=len(jobs), desc=desc, disable=not progress)
