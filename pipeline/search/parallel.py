"""Independent search runs over worker processes (joblib). Every run seeds its own RNG, so results do
not depend on the number of workers or on the order in which runs finish.

Workers import what the runs need when they start (`preload`). joblib's loky workers take their memory
reference after their first job and restart a worker whose memory has grown 300 MB beyond it, taking
the growth for a leak ("A worker stopped while some jobs were given to the executor"). A worker whose
first run was a light method and whose next imports Optuna and torch (an `optuna_nsga2` run: +475 MB)
was restarted that way and imported them again; with the imports done up front the reference holds them.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from joblib import Parallel, delayed
from tqdm import tqdm

from pipeline.runtime.numerics import n_workers


def import_modules(*modules: str) -> None:
    """Import `modules` (a worker's initializer)."""
    for module in modules:
        importlib.import_module(module)


def map_runs(function: Callable[..., Any], jobs: Sequence[Mapping[str, Any]], workers: int = 1, progress: bool = True,
             desc: str = "search", preload: Sequence[str] = ()) -> Iterator[Any]:
    """Yield `function(**job)` for every job (a dict of keyword arguments), in job order, as results
    arrive, so callers can write each result at once and a killed stage resumes. One progress bar over
    the jobs (on stderr), counted as results arrive; `preload`: modules every worker imports before its
    first job (module docstring)."""
    n = min(n_workers(workers), max(len(jobs), 1))
    if n == 1:
        results: Any = (function(**job) for job in jobs)
    else:
        parallel = Parallel(n_jobs=n, return_as="generator", initializer=import_modules, initargs=tuple(preload))
        results = parallel(delayed(function)(**job) for job in jobs)
    with tqdm(total=len(jobs), desc=desc, disable=not progress) as bar:
        for result in results:
            bar.update()
            yield result
