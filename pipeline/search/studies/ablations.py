"""The initial-design ablations: does GP-PND win by its surrogate or by its start?

Results: docs/search.md, section 'Initial-design ablations and the slower anchors'.

* `TestNavLatticeStart`: TestNav whose initial population begins with GP-PND's initial design (the
  identity, the all-maximum corner, every axis point and the uniform extra; `pnd.initial_design`), filled
  up to μ with configurations drawn uniformly from the rest.
* `UniformStartPND`: GP-PND whose initial design is as large as its own but drawn uniformly from Θ.

They run in `perf/bench_search_heldout.py`, not in `dvc repro`.
"""
from __future__ import annotations

import numpy as np

from pipeline.search.methods.evolution import TestNav
from pipeline.search.methods.pnd import ParetoProbability, initial_design, lattice_design
from pipeline.front.space import Space


class TestNavLatticeStart(TestNav):
    """TestNav started from GP-PND's initial design (module docstring)."""

    name, label = "testnav_lattice", "TestNav, GP-PND's start"
    __test__ = False

    def _initial(self, space: Space, n: int, rng: np.random.Generator) -> np.ndarray:
        design = initial_design(space, rng)[:n]
        rest = np.setdiff1d(np.arange(space.size), design)
        return np.concatenate([design, rng.choice(rest, size=n - len(design), replace=False)])


class UniformStartPND(ParetoProbability):
    """GP-PND started from a uniform draw of the size of its own initial design (module docstring)."""

    name, label = "pnd_uniform", "GP-PND, uniform start"

    def _design(self, space: Space, rng: np.random.Generator) -> np.ndarray:
        size = min(space.size, len(lattice_design(space)) + int(np.ceil(space.n_dims * (space.levels - 1) / 2)))
        return rng.choice(space.size, size=size, replace=False)
