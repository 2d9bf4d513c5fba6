"""Anchor method: successive halving over test inputs, the simplest multi-fidelity rule (Karnin, Koren & Somekh,
ICML 2013; Jamieson & Talwalkar, AISTATS 2016), with the number of inputs evaluated as the fidelity and a Pareto
ranking in place of a scalar loss.

Rung k evaluates its survivors on the inputs of the fixed order up to r_k = min(r0·η^k, n), reusing the r_{k−1}
they already have (paired prefixes, nothing evaluated twice), so rung k costs m_k·(r_k − r_{k−1}) model
evaluations (r_{−1} = 0). Every configuration starts (m_0 = |Θ|); after a rung below n the best
m_{k+1} = ⌈m_k/η⌉ survive by non-dominated sorting rank of their partial means, the last front that does not fit
cut by crowding distance, exact ties at random (`pipeline.search.methods.survival.rank_and_crowding`, NSGA-II's survival,
with an explicit generator seeded by `seed`). At r_k = n the survivors' means are exact and the run declares their
non-dominated ones, all at once, at its total cost.

Defaults: η = 3, Hyperband's (Li et al., JMLR 2018) and ASHA's, which keeps a third a rung; r0 = 10 inputs,
a first rung of 5% of n = 200 (the synthetic tables' n). On a 6^4 Θ and n = 200 that is rungs 10, 30, 90, 200
with 1,296, 432, 144 and 48 survivors: 35,520 evaluations, 13.7% of |Θ|·n. The final 48 is the most the answer can
hold, below the largest synthetic fronts (`synthetic.FRONT_SIZES`): a smaller η or larger r0 keeps more.
"""
from __future__ import annotations

import numpy as np

from pipeline.front.pareto import pareto_mask
from pipeline.search.methods.pareto_bandit import Identification, Sampler, declarations
from pipeline.search.methods.survival import rank_and_crowding

DEFAULT_ETA = 3
DEFAULT_R0 = 10


def rungs(n_arms: int, n: int, r0: int = DEFAULT_R0, eta: int = DEFAULT_ETA) -> list[tuple[int, int]]:
    """The schedule (survivors m_k, inputs r_k) of every rung, the last at r_k = n."""
    if r0 < 1 or eta < 2 or n < 1 or n_arms < 1:
        raise ValueError(f"need r0 ≥ 1, eta ≥ 2, n ≥ 1 and n_arms ≥ 1; got {r0}, {eta}, {n}, {n_arms}")
    schedule, survivors, inputs = [], n_arms, min(r0, n)
    while True:
        schedule.append((survivors, inputs))
        if inputs == n:
            return schedule
        survivors, inputs = -(-survivors // eta), min(inputs * eta, n)


def successive_halving(sample: Sampler, n_arms: int, n: int, *, r0: int = DEFAULT_R0, eta: int = DEFAULT_ETA,
                       seed: int = 0) -> Identification:
    """Successive halving (module docstring) of `n_arms` arms over the n inputs of `sample`'s order."""
    rng = np.random.default_rng(seed)
    sums, pulls = np.zeros((n_arms, 2)), np.zeros(n_arms, dtype=np.int64)
    alive, done = np.arange(n_arms), 0
    for survivors, inputs in rungs(n_arms, n, r0, eta):
        if survivors < len(alive):
            keep, _ = rank_and_crowding(sums[alive] / done, survivors, rng)
            alive = np.sort(alive[keep])
        rewards = np.asarray(sample(alive, done, inputs), dtype=float)
        if rewards.shape != (len(alive), inputs - done, 2):
            raise ValueError(f"the sampler must return ({len(alive)}, {inputs - done}, 2) rewards, got {rewards.shape}")
        sums[alive] += rewards.sum(axis=1)
        pulls[alive] += inputs - done
        done = inputs
    answer = alive[pareto_mask(sums[alive] / n)]
    return declarations([(int(pulls.sum()), int(i)) for i in answer], pulls)
