"""Greedy Search baseline (TestNav §4.2 (ii)): hill climbing on s(θ) = min(δ(θ), ρ(θ)) over ±1 neighbours."""
from __future__ import annotations

import numpy as np

from pipeline.search.methods.base import Method
from pipeline.search.ledger import Ledger
from pipeline.front.space import Space


def scalar_score(values: np.ndarray) -> np.ndarray:
    """s(θ) = min(δ(θ), ρ(θ)) of (δ, ρ) rows: high only when both degradation and fidelity are high."""
    values = np.asarray(values, dtype=float).reshape(-1, 2)
    return np.minimum(values[:, 0], values[:, 1])


class GreedySearch(Method):
    """Start at a uniformly random θ; propose all of its neighbours (±1 in one dimension, in the fixed
    order of `Space.neighbours`), each one proposal, cached or not; move to the highest-scoring one
    (the first in that order on ties) if it beats s of the current θ, otherwise restart from a new
    uniformly random θ (itself a proposal). Stops when the budget is spent, possibly mid-neighbourhood."""

    name, label = "greedy", "Greedy Search"

    def _do(self, ledger: Ledger, space: Space, rng: np.random.Generator) -> None:
        while not ledger.exhausted:
            current = space.theta(int(rng.integers(space.size)))
            score = scalar_score(ledger.propose(np.array([current])))[0]
            while not ledger.exhausted:
                neighbours = np.array(space.neighbours(current), dtype=np.int64)
                scores = scalar_score(ledger.propose(neighbours))
                best = int(np.argmax(scores))
                if len(scores) < len(neighbours) or scores[best] <= score:
                    break
                current, score = tuple(int(v) for v in neighbours[best]), scores[best]
