"""Compositional testing (chapter 9, §9.5 stage 6): forward addition and backward elimination.

Every dimension has a reference value (its value in the analysed configuration). Forward addition
starts with every dimension inactive and greedily activates the dimension whose addition gives the
lowest error; backward elimination starts with all active and greedily deactivates the dimension whose
removal gives the lowest error. Dimensions compose well when no addition raises the error (no
regressions) and the two greedy paths agree: at every number of active dimensions they reach the same
error. Disagreement means the value of a dimension depends on which others are present (an
interaction, e.g. two dimensions useful only together, which forward addition cannot see). Agreement
is judged on errors rather than on orders, so that ties (equally good choices) do not count against it;
whether the orders also agree is reported as `same_order`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, Evaluator, as_evaluator
from pipeline.fuzz.sensitivity import check_dims
from pipeline.fuzz.subsets import SubsetResult, configuration, subset_result


@dataclass
class CompositionResult:
    """The two greedy paths: orders, errors along them (empty → full, full → empty), and verdicts."""

    forward_order: list[str]
    forward_errors: list[float]
    backward_order: list[str]
    backward_errors: list[float]
    regressions: list[dict] = field(default_factory=list)
    consistent: bool = True
    same_order: bool = True

    @property
    def composes_well(self) -> bool:
        return self.consistent and not self.regressions


def _greedy(
    reference: np.ndarray, dim_names: Sequence[str], evaluator: Evaluator, inactive_value: float, adding: bool, desc: str
) -> list[SubsetResult]:
    d = reference.size
    active = [] if adding else list(range(d))
    start = configuration(d, active, reference[active], inactive_value)
    error, errors = evaluator.one(start)
    path = [subset_result(active, dim_names, start, error, errors)]
    while (len(active) < d) if adding else active:
        moves = [i for i in range(d) if i not in active] if adding else list(active)
        trials = [sorted(active + [i]) if adding else [j for j in active if j != i] for i in moves]
        rows = np.array([configuration(d, t, reference[t], inactive_value) for t in trials])
        errs, per_target = evaluator.many(rows, desc=desc)
        best = int(np.argmin(errs))  # lowest dimension index on a tie
        active = trials[best]
        path.append(subset_result(active, dim_names, rows[best], errs[best], {t: v[best] for t, v in per_target.items()}))
    return path


def forward_addition(
    reference: np.ndarray, dim_names: Sequence[str], evaluate_fn: EvaluateFn, inactive_value: float = 1e6,
    *, evaluate_batch_fn: EvaluateBatchFn | None = None, progress: bool = False,
) -> list[SubsetResult]:
    """Greedy path from no active dimension to all of them (d + 1 configurations)."""
    reference = check_dims(reference, dim_names)
    return _greedy(reference, dim_names, as_evaluator(evaluate_fn, evaluate_batch_fn, progress), inactive_value, True, "forward addition")


def backward_elimination(
    reference: np.ndarray, dim_names: Sequence[str], evaluate_fn: EvaluateFn, inactive_value: float = 1e6,
    *, evaluate_batch_fn: EvaluateBatchFn | None = None, progress: bool = False,
) -> list[SubsetResult]:
    """Greedy path from all dimensions active to none (d + 1 configurations)."""
    reference = check_dims(reference, dim_names)
    return _greedy(reference, dim_names, as_evaluator(evaluate_fn, evaluate_batch_fn, progress), inactive_value, False, "backward elimination")


def _added(path: Sequence[SubsetResult]) -> list[int]:
    return [next(iter(set(b.dims) ^ set(a.dims))) for a, b in zip(path, path[1:])]


def compose(forward: Sequence[SubsetResult], backward: Sequence[SubsetResult], dim_names: Sequence[str]) -> CompositionResult:
    """Summarise the two paths: orders, errors, forward steps that raised the error, agreement."""
    added, removed = _added(forward), _added(backward)
    regressions = [
        {"dim_name": str(dim_names[i]), "step": k + 1, "increase": float(forward[k + 1].mae - forward[k].mae)}
        for k, i in enumerate(added)
        if forward[k + 1].mae > forward[k].mae
    ]
    return CompositionResult(
        forward_order=[str(dim_names[i]) for i in added],
        forward_errors=[float(r.mae) for r in forward],
        backward_order=[str(dim_names[i]) for i in removed],
        backward_errors=[float(r.mae) for r in backward],
        regressions=regressions,
        consistent=bool(np.allclose([r.mae for r in forward], [r.mae for r in backward][::-1], rtol=1e-9, atol=1e-12)),
        same_order=added == removed[::-1],
    )


def compositional_test(
    reference: np.ndarray, dim_names: Sequence[str], evaluate_fn: EvaluateFn, inactive_value: float = 1e6,
    *, evaluate_batch_fn: EvaluateBatchFn | None = None, progress: bool = False,
) -> tuple[CompositionResult, list[SubsetResult], list[SubsetResult]]:
    """Both greedy paths and their summary; 2 + d(d + 1) evaluations at most."""
    evaluator = as_evaluator(evaluate_fn, evaluate_batch_fn, progress)
    forward = forward_addition(reference, dim_names, evaluator, inactive_value)
    backward = backward_elimination(reference, dim_names, evaluator, inactive_value)
    return compose(forward, backward, dim_names), forward, backward
