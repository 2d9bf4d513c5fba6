"""Adversarial threshold search (chapter 9, §9.4) and its two-phase variant (exercise 9.2).

Along one dimension and one direction, a log-spaced scan of `n_steps` values runs from the base value
to ×1000 (increase) or to max(base/1000, 10⁻⁶) (decrease); the threshold is the first scanned value at
which some target's error moves from its base value by more than the tolerance τ.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from pipeline.fuzz.evaluator import EvaluateBatchFn, EvaluateFn, Evaluator, as_evaluator
from pipeline.fuzz.sensitivity import check_dims

DIRECTIONS = ("increase", "decrease")


@dataclass
class AdversarialResult:
    """A tipping point: `threshold_value` = base · `threshold_ratio` breaks `target_flipped` (§9.4.2).

    `target_flipped` is the target whose error moved most at that value (first in target order on a
    tie); `targets_exceeded` lists every target beyond tolerance there; `target_delta` is the signed
    change of the flipped target's error.
    """

    dim: int
    dim_name: str
    base_value: float
    threshold_value: float
    threshold_ratio: float
    target_flipped: str
    direction: str
    target_delta: float = float("nan")
    targets_exceeded: list[str] = field(default_factory=list)


def scan_values(base_value: float, direction: str, n_steps: int = 50) -> np.ndarray:
    """The chapter's log-spaced scan, base value first (§9.4.1)."""
    base_value = float(base_value)
    if not (np.isfinite(base_value) and base_value > 0):
        raise ValueError(f"a log-spaced threshold scan needs a positive finite base value, got {base_value}")
    if int(n_steps) < 2:
        raise ValueError(f"n_steps must be at least 2 (the base value and one step), got {n_steps}")
    if direction == "increase":
        end = base_value * 1000
    elif direction == "decrease":
        end = max(base_value / 1000, 1e-6)
    else:
        raise ValueError(f"unknown direction {direction!r}; valid choices: {', '.join(DIRECTIONS)}")
    return np.logspace(np.log10(base_value), np.log10(end), int(n_steps))


def _exceedance(per_target: Mapping[str, float], base_errors: Mapping[str, float], tolerance: float) -> dict[str, float]:
    """Signed changes of the targets that moved by more than the tolerance."""
    out = {}
    for name, base in base_errors.items():
        if name in per_target:
            delta = float(per_target[name]) - float(base)
            if abs(delta) > tolerance:
                out[name] = delta
    return out


def _first_break(
    evaluator: Evaluator, params: np.ndarray, dim: int, values: np.ndarray, base_errors: Mapping[str, float], tolerance: float
) -> tuple[int, dict[str, float]] | None:
    """Position in `values` of the first value that breaks a target, scanning in order (or None).

    A batched evaluator scores the whole scan in one call; a single-call one stops at the first break.
    Both return the same position.
    """
    if len(values) == 0:
        return None
    rows = np.repeat(params[None, :], len(values), axis=0)
    rows[:, dim] = values
    if evaluator.batched:
        _, per_target = evaluator.many(rows, desc="threshold scan")
        for k in range(len(values)):
            moved = _exceedance({t: v[k] for t, v in per_target.items()}, base_errors, tolerance)
            if moved:
                return k, moved
        return None
    for k in range(len(values)):
        _, per_target = evaluator.one(rows[k])
        moved = _exceedance(per_target, base_errors, tolerance)
        if moved:
            return k, moved
    return None


def _result(dim: int, dim_names: Sequence[str], base: float, value: float, direction: str, moved: dict[str, float]) -> AdversarialResult:
    names = list(moved)
    flipped = max(names, key=lambda t: (abs(moved[t]), -names.index(t)))
    return AdversarialResult(
        dim=dim, dim_name=str(dim_names[dim]), base_value=base, threshold_value=float(value),
        threshold_ratio=float(value / base), target_flipped=flipped, direction=direction,
        target_delta=float(moved[flipped]), targets_exceeded=names,
    )


class _Scan(NamedTuple):
    """What both threshold searches start from: checked params, the evaluator, the base value of the
    scanned dimension, its scan grid per direction, and the per-target errors at the base."""

    params: np.ndarray
    evaluator: Evaluator
    base: float
    grids: dict[str, np.ndarray]
    base_errors: Mapping[str, float]


def _start_scan(params: np.ndarray, dim: int, dim_names: Sequence[str], tolerance: float, n_steps: int,
                evaluate_fn: EvaluateFn, evaluate_batch_fn: EvaluateBatchFn | None, progress: bool) -> _Scan:
    params = check_dims(params, dim_names)
    if not 0 <= int(dim) < params.size:
        raise ValueError(f"dim {dim} is outside 0..{params.size - 1} ({list(dim_names)})")
    if not float(tolerance) >= 0:
        raise ValueError(f"tolerance must be a non-negative number, got {tolerance}")
    evaluator = as_evaluator(evaluate_fn, evaluate_batch_fn, progress)
    base = float(params[dim])
    _, base_errors = evaluator.one(params)
    return _Scan(params, evaluator, base, {d: scan_values(base, d, n_steps) for d in DIRECTIONS}, base_errors)


def find_adversarial_threshold(
    params: np.ndarray,
    dim: int,
    dim_names: Sequence[str],
    evaluate_fn: EvaluateFn,
    tolerance: float = 0.5,
    n_steps: int = 50,
    *,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    progress: bool = False,
) -> list[AdversarialResult]:
    """Tipping points of dimension `dim`, at most one per direction (§9.4.1); none where no value breaks."""
    params, evaluator, base, grids, base_errors = _start_scan(params, dim, dim_names, tolerance, n_steps, evaluate_fn,
                                                              evaluate_batch_fn, progress)
    results = []
    for direction in DIRECTIONS:
        values = grids[direction][1:]  # skip the base value
        hit = _first_break(evaluator, params, dim, values, base_errors, float(tolerance))
        if hit is not None:
            results.append(_result(dim, dim_names, base, values[hit[0]], direction, hit[1]))
    return results


def coarse_positions(n_steps: int, n_coarse: int) -> np.ndarray:
    """Positions of the coarse scan inside the n_steps grid: n_coarse evenly spread, both ends included."""
    if not 2 <= int(n_coarse) <= int(n_steps):
        raise ValueError(f"n_coarse must be in 2..n_steps={n_steps}, got {n_coarse}")
    return np.unique(np.round(np.linspace(0, int(n_steps) - 1, int(n_coarse))).astype(int))


def find_adversarial_threshold_two_phase(
    params: np.ndarray,
    dim: int,
    dim_names: Sequence[str],
    evaluate_fn: EvaluateFn,
    tolerance: float = 0.5,
    n_steps: int = 50,
    n_coarse: int = 10,
    *,
    evaluate_batch_fn: EvaluateBatchFn | None = None,
    progress: bool = False,
) -> list[AdversarialResult]:
    """Two-phase search (exercise 9.2): `n_coarse` steps of the n_steps grid bracket the threshold,
    then the grid's points inside the bracket refine it.

    The coarse points are points of the same grid, so whenever the set of breaking values along the scan
    is an interval reaching the end of the scan (a tipping point, past which the target stays broken),
    the result is the uniform scan's, found with about n_coarse + n_steps/n_coarse evaluations instead
    of up to n_steps. A break that heals again before the next coarse point can be missed.
    """
    coarse = coarse_positions(n_steps, n_coarse)
    params, evaluator, base, grids, base_errors = _start_scan(params, dim, dim_names, tolerance, n_steps, evaluate_fn,
                                                              evaluate_batch_fn, progress)
    results = []
    for direction in DIRECTIONS:
        grid = grids[direction]
        hit = _first_break(evaluator, params, dim, grid[coarse[1:]], base_errors, float(tolerance))
        if hit is None:
            continue
        upper = coarse[1 + hit[0]]
        lower = coarse[hit[0]]
        fine = _first_break(evaluator, params, dim, grid[lower + 1 : upper], base_errors, float(tolerance))
        position, moved = (lower + 1 + fine[0], fine[1]) if fine is not None else (upper, hit[1])
        results.append(_result(dim, dim_names, base, grid[position], direction, moved))
    return results
