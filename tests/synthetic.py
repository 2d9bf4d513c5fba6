"""A cheap synthetic benchmark for ground-truth tests: float vectors as inputs, two seeded perturbations,
a threshold classifier, and a distance-based fidelity. Module-level so worker processes can import it."""
from __future__ import annotations

import time

import numpy as np

from pipeline.benchmark.problem import Benchmark, accuracy
from pipeline.perturb.registry import Perturbation
from pipeline.front.space import Space


def _noise(x, level, seed, delay=0.0):
    time.sleep(delay)
    return x + 0.4 * level * np.random.default_rng(seed).standard_normal(x.shape)


def _shift(x, level, seed, delay=0.0):
    time.sleep(delay)
    return x - 0.3 * level + 0.01 * np.random.default_rng(seed).standard_normal(x.shape)


def make_benchmark(n_inputs: int = 30, levels: int = 4, delay: float = 0.0) -> Benchmark:
    rng = np.random.default_rng(123)
    clean = rng.normal(size=(n_inputs, 5)) + 1.0
    labels = (clean.sum(axis=1) > 5).astype(int)
    perts = [
        Perturbation("noise", "synthetic", levels - 1, lambda x, l, s: _noise(x, l, s, delay)),
        Perturbation("shift", "synthetic", levels - 1, lambda x, l, s: _shift(x, l, s, delay)),
    ]
    return Benchmark(
        name="synthetic", space=Space(("noise", "shift"), levels), perturbations=perts, clean=clean, labels=labels,
        predict=lambda x: (np.asarray(x).sum(axis=1) > 5).astype(int), task_metric=accuracy,
        fidelity={"negmse": lambda x: -float(np.mean((np.asarray(x) - clean) ** 2)),
                  "negmax": lambda x: -float(np.max(np.abs(np.asarray(x) - clean)))},
    )
