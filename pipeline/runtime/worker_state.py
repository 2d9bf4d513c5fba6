"""The per-process cache: what a process builds once and every later task in it reads (a ground truth's
benchmark and resume store, a perturbation store's copy, a text encoder, a live run's benchmark), by key.

Two ways in. `cached(key, build)` builds on first use, in whichever process asks (a live run's chunks). A pool's
initializer calls `start_worker(key, build)`: the worker dies with its parent, runs torch as every stage does
(`configure_torch`: one thread, deterministic algorithms, so values do not depend on the worker count), and builds
at once. An error there is kept and raised by `worker_state(key)` in each task: raised in the initializer, it
would only break the pool, and the parent would never see it."""
from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from pipeline.runtime.numerics import configure_torch

T = TypeVar("T")
_CACHE: dict[str, Any] = {}  # this process's objects, by key


class _Failed:
    """The error a `start_worker` build raised, kept for the tasks."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (prctl PR_SET_PDEATHSIG); elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def cached(key: str, build: Callable[[], T]) -> T:
    """This process's object under `key`, built by `build()` on first use."""
    if key not in _CACHE:
        _CACHE[key] = build()
    return worker_state(key)


def start_worker(key: str, build: Callable[[], Any], child: bool = True) -> None:
    """A pool initializer's body: build the object under `key` now, replacing any earlier one (or keep the error
    it raised); `child`: this is a pool's worker process."""
    if child:
        die_with_parent()
    configure_torch()
    _CACHE.pop(key, None)
    try:
        _CACHE[key] = build()
    except Exception as err:  # noqa: BLE001 (raised again, whole, by `worker_state`, so it reaches the parent)
        _CACHE[key] = _Failed(err)


def worker_state(key: str) -> Any:
    """The object built under `key`; the error its build raised, raised."""
    value = _CACHE[key]
    if isinstance(value, _Failed):
        raise value.error
    return value


def evict(key: str) -> Any:
    """Drop the object under `key` from this process's cache and return it (None if there was none)."""
    value = _CACHE.pop(key, None)
    return None if isinstance(value, _Failed) else value
