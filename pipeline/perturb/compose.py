"""Composition π_θ = T_n^{θ_n} ∘ … ∘ T_1^{θ_1} (TestNav §3.1) with order-independent randomness.

The randomness of step j on input i is seeded from (global seed, i, θ_1..θ_j) only, so the perturbed
set of a configuration is the same whatever the evaluation order, prefix reuse, shard or worker count.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pipeline.perturb.registry import Perturbation


def step_seed(global_seed: int, input_index: int, prefix: Sequence[int]) -> int:
    """Seed for step j = len(prefix) on input `input_index`, where prefix = (θ_1, …, θ_j)."""
    entropy = [int(global_seed), int(input_index), *(int(p) for p in prefix)]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def apply_step(perturbation: Perturbation, inputs: Any, prefix: Sequence[int], global_seed: int,
               indices: Sequence[int] | None = None) -> Any:
    """Apply T_j at level prefix[-1] to every input; inputs are an array stack or a list, input k being input
    `indices[k]` of the full set (its position when None), whose index seeds its randomness."""
    level = int(prefix[-1])
    if level == 0:
        return inputs
    where = range(len(inputs)) if indices is None else indices
    out = [perturbation.apply(x, level, step_seed(global_seed, i, prefix)) for i, x in zip(where, inputs)]
    return np.stack(out) if isinstance(inputs, np.ndarray) else out


def compose(perturbations: Sequence[Perturbation], inputs: Any, theta: Sequence[int], global_seed: int,
            indices: Sequence[int] | None = None) -> Any:
    """T_θ: the perturbed set of configuration θ, applying T_1 first. With `indices`, `inputs` are those inputs of
    the full set only, and each is perturbed as it is in the full set's T_θ (racing's slices)."""
    if len(theta) != len(perturbations):
        raise ValueError(f"configuration {tuple(theta)} has {len(theta)} levels for {len(perturbations)} perturbations")
    if indices is not None and len(indices) != len(inputs):
        raise ValueError(f"{len(indices)} indices for {len(inputs)} inputs")
    for j, perturbation in enumerate(perturbations):
        inputs = apply_step(perturbation, inputs, tuple(theta[: j + 1]), global_seed, indices)
    return inputs


class PrefixCache:
    """Reuses the perturbed arrays of shared prefixes (θ_1..θ_j) when configurations come in
    lexicographic order: only the steps after the longest common prefix with the previous
    configuration are applied. `applications` counts active transform applications per input."""

    def __init__(self, perturbations: Sequence[Perturbation], clean: Any, global_seed: int) -> None:
        self.perturbations = list(perturbations)
        self.global_seed = global_seed
        self._stack: list[Any] = [clean]  # _stack[j] = inputs after the first j steps of _prefix
        self._prefix: tuple[int, ...] = ()
        self.applications = 0

    def get(self, theta: Sequence[int]) -> Any:
        theta = tuple(int(t) for t in theta)
        common = 0
        while common < len(self._prefix) and self._prefix[common] == theta[common]:
            common += 1
        del self._stack[common + 1 :]
        for j in range(common, len(theta)):
            self._stack.append(apply_step(self.perturbations[j], self._stack[-1], theta[: j + 1], self.global_seed))
            self.applications += theta[j] > 0
        self._prefix = theta
        return self._stack[-1]
