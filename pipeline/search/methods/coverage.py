"""A coverage-guided baseline: greedy t-way interaction coverage of Θ (combinatorial testing).

Not a method of the TestNav paper, whose coverage baselines (§4.4: NAC, KMNC, …) need a model's neuron
activations; this one needs nothing but Θ, like Random Search, so it runs on a ground-truth table. It is
objective-free: δ and ρ never steer it.

A t-way tuple is a choice of t dimensions and one level for each; θ covers the C(n, t) tuples it
projects to. Each proposal is the not-yet-evaluated θ that covers the most t-way tuples not covered by
any evaluated configuration (ties broken uniformly at random), starting with t = 1 (every level of
every perturbation type once) and raising t whenever every t-way tuple is covered. At t = n each θ is
its own tuple, so the tail is a random order. Every proposal is new; the run stops after |Θ| proposals.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.front.space import Space


class CoverageSearch(Method):
    """Greedy t-way coverage of the configuration lattice, t = 1, 2, …, n."""

    name, label, single_pass = "coverage", "Coverage (t-way)", True

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        grid = space.grid()
        unseen = np.ones(space.size, dtype=bool)
        for t in range(1, space.n_dims + 1):
            # tuple code of every θ for every t-subset of dimensions: an index into that subset's ℓ^t tuples
            subsets = list(combinations(range(space.n_dims), t))
            weights = space.levels ** np.arange(t - 1, -1, -1)
            codes = np.stack([grid[:, list(s)] @ weights for s in subsets], axis=1)  # (|Θ|, C(n, t))
            covered = np.zeros((len(subsets), space.levels**t), dtype=bool)
            columns = np.arange(len(subsets))
            covered[columns, codes[~unseen]] = True
            while not ledger.exhausted and not covered.all():
                gain = (~covered[columns, codes]).sum(axis=1)
                gain[~unseen] = -1
                best = np.flatnonzero(gain == gain.max())
                pick = int(best[rng.integers(len(best))])
                ledger.propose(grid[pick : pick + 1])
                unseen[pick] = False
                covered[columns, codes[pick]] = True
