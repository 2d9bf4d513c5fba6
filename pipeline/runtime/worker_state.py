"""What a spawned worker process builds once and each of its tasks reads (the ground truth's benchmark, a
perturbation store's copy).

`start_worker` is a pool's initializer body: the worker dies with its parent, runs torch as every stage does
(`configure_torch`: one thread, deterministic algorithms, so values do not depend on the worker count), and
fills its state from `build()`. An error in `build` is kept and raised by `worker_state` in each task: raised in
the initializer, it would only break the pool, and the parent would never see it."""
from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from typing import Any

from pipeline.runtime.numerics import configure_torch


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (prctl PR_SET_PDEATHSIG); elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def start_worker(state: dict[str, Any], build: Callable[[], dict[str, Any]], child: bool = True) -> None:
    """Fill `state` with `build()`, or with the error it raised; `child`: this is a pool's worker process."""
    if child:
        die_with_parent()
    configure_torch()
    state.clear()
    try:
        state.update(build())
    except Exception as err:  # noqa: BLE001 (raised again, whole, by `worker_state`, so it reaches the parent)
        state.clear()
        state["error"] = err


def worker_state(state: dict[str, Any]) -> dict[str, Any]:
    """The state `start_worker` built; the error it kept, raised."""
    if "error" in state:
        raise state["error"]
    return state
