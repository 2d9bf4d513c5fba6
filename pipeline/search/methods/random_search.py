"""Random Search baseline (TestNav §4.2 (i)): Θ in a uniformly random order, each configuration once."""
from __future__ import annotations

import numpy as np

from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.front.space import Space


class RandomSearch(Method):
    """Proposes a uniform random permutation of Θ. With B > |Θ| it stops after |Θ| proposals, having
    nothing left to propose, so its trace has min(B, |Θ|) rows."""

    name, label, single_pass = "random", "Random Search", True

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        order = rng.permutation(space.size)[: ledger.remaining]
        ledger.propose(space.grid()[order])
