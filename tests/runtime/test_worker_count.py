"""`workers` settings (every stage's and the search's): 0 means the cores this process may use, not the machine's."""
from __future__ import annotations

import os

import pytest

from pipeline.runtime.numerics import n_workers


def test_zero_means_the_cores_this_process_may_use() -> None:
    assert n_workers(0) == len(os.sched_getaffinity(0))
    assert n_workers(3) == 3 and n_workers("2") == 2


def test_zero_follows_the_affinity_mask() -> None:
    """Under a one-core mask (a SLURM job's allocation on a bigger node) 0 gives 1, whatever the node has."""
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(before)})
        assert n_workers(0) == 1
    finally:
        os.sched_setaffinity(0, before)


def test_negative_is_refused() -> None:
    with pytest.raises(ValueError, match=r"workers must be >= 0 \(0 = all cores\), got -1"):
        n_workers(-1)
