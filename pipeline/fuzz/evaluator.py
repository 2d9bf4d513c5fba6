"""The one door through which every fuzzing tool calls the model: `evaluate_fn` or its batched twin.

The chapter's tools are generic over a callback `evaluate_fn(params) -> (error, per_target_errors)`.
A model that can score many parameter vectors in one vectorised pass may also supply
`evaluate_batch_fn(params_matrix) -> (errors, per_target)` with `errors` of shape (m,) and `per_target`
a mapping from target name to an (m,) array (one column per target). The tools build every parameter
matrix first and hand it to an `Evaluator`, so the random draws, the evaluation order and the results
are the same whichever callback answers (a batched callback must agree row by row with the single one).
"""
from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
from tqdm.auto import tqdm

EvaluateFn = Callable[[np.ndarray], tuple[float, Mapping[str, float]]]
EvaluateBatchFn = Callable[[np.ndarray], tuple[np.ndarray, Mapping[str, np.ndarray]]]


def batch_from_single(evaluate_fn: EvaluateFn) -> EvaluateBatchFn:
    """A batched callback that loops over rows of the single one."""

    def evaluate_batch(params_matrix: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        rows = [evaluate_fn(np.array(p, dtype=float)) for p in np.atleast_2d(params_matrix)]
        names = list(rows[0][1]) if rows else []
        errors = np.array([float(e) for e, _ in rows])
        return errors, {t: np.array([float(r[t]) for _, r in rows]) for t in names}

    return evaluate_batch


def single_from_batch(evaluate_batch_fn: EvaluateBatchFn) -> EvaluateFn:
    """A single-call callback that evaluates a batch of one row."""

    def evaluate(params: np.ndarray) -> tuple[float, dict[str, float]]:
        errors, per_target = evaluate_batch_fn(np.asarray(params, dtype=float)[None, :])
        return float(errors[0]), {t: float(v[0]) for t, v in per_target.items()}

    return evaluate


class Evaluator:
    """Evaluates parameter matrices through `evaluate_batch_fn` (in chunks) or row by row.

    Counts the evaluations it asks the model for (`n_evaluations`) and, with `memoize=True`, answers a
    parameter vector it has already seen from memory (the models here are deterministic functions of
    their parameters, so this changes no result, only the count). With `progress`, every call of more
    than one evaluation shows a tqdm bar.
    """

    def __init__(
        self,
        evaluate_fn: EvaluateFn,
        evaluate_batch_fn: EvaluateBatchFn | None = None,
        *,
        batch_size: int = 256,
        memoize: bool = False,
        progress: bool = False,
    ) -> None:
        if evaluate_fn is None and evaluate_batch_fn is None:
            raise ValueError("an evaluator needs evaluate_fn or evaluate_batch_fn, got neither")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        self.evaluate_fn = evaluate_fn if evaluate_fn is not None else single_from_batch(evaluate_batch_fn)
        self.evaluate_batch_fn = evaluate_batch_fn
        self.batch_size = int(batch_size)
        self.progress = progress
        self.n_evaluations = 0
        self._memo: dict[bytes, tuple[float, dict[str, float]]] | None = {} if memoize else None

    @property
    def batched(self) -> bool:
        return self.evaluate_batch_fn is not None

    def __call__(self, params: np.ndarray) -> tuple[float, dict[str, float]]:
        """An Evaluator is itself an `evaluate_fn`, so the tools can share one (and its count)."""
        return self.one(params)

    def one(self, params: np.ndarray) -> tuple[float, dict[str, float]]:
        """Error and per-target errors of one parameter vector."""
        errors, per_target = self.many(np.asarray(params, dtype=float)[None, :])
        return float(errors[0]), {t: float(v[0]) for t, v in per_target.items()}

    def many(self, params_matrix: np.ndarray, desc: str | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Errors (m,) and per-target columns {name: (m,)} of the rows of `params_matrix`, in order."""
        matrix = np.atleast_2d(np.asarray(params_matrix, dtype=float))
        m = len(matrix)
        results: list[tuple[float, dict[str, float]] | None] = [None] * m
        pending = list(range(m))
        if self._memo is not None:
            pending = [i for i in pending if matrix[i].tobytes() not in self._memo]
            for i in set(range(m)) - set(pending):
                results[i] = self._memo[matrix[i].tobytes()]
            pending = _first_occurrences(matrix, pending)
        bar = tqdm(total=len(pending), desc=desc, disable=not self.progress or len(pending) < 2, leave=False)
        try:
            if self.batched:
                for start in range(0, len(pending), self.batch_size):
                    rows = pending[start : start + self.batch_size]
                    errors, per_target = self.evaluate_batch_fn(matrix[rows])
                    errors = np.asarray(errors, dtype=float)
                    if errors.shape != (len(rows),):
                        raise ValueError(f"evaluate_batch_fn returned errors of shape {errors.shape}, expected ({len(rows)},)")
                    for k, i in enumerate(rows):
                        results[i] = (float(errors[k]), {t: float(np.asarray(v)[k]) for t, v in per_target.items()})
                    bar.update(len(rows))
            else:
                for i in pending:
                    error, per_target = self.evaluate_fn(matrix[i].copy())
                    results[i] = (float(error), {t: float(v) for t, v in per_target.items()})
                    bar.update(1)
        finally:
            bar.close()
        self.n_evaluations += len(pending)
        if self._memo is not None:
            for i in pending:
                self._memo[matrix[i].tobytes()] = results[i]
            for i in range(m):  # duplicates of a row evaluated in this call
                if results[i] is None:
                    results[i] = self._memo[matrix[i].tobytes()]
        return _stack(results)


def as_evaluator(
    evaluate_fn: EvaluateFn, evaluate_batch_fn: EvaluateBatchFn | None = None, progress: bool = False
) -> Evaluator:
    """`evaluate_fn` itself when it already is an Evaluator, else a new one over the callbacks."""
    if isinstance(evaluate_fn, Evaluator):
        if evaluate_batch_fn is not None:
            raise ValueError("pass evaluate_batch_fn to the Evaluator, not beside one")
        return evaluate_fn
    return Evaluator(evaluate_fn, evaluate_batch_fn, progress=progress)


def _first_occurrences(matrix: np.ndarray, rows: list[int]) -> list[int]:
    seen: set[bytes] = set()
    out = []
    for i in rows:
        key = matrix[i].tobytes()
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


def _stack(results: list) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    errors = np.array([r[0] for r in results], dtype=float)
    names = list(results[0][1]) if results else []
    for r in results:
        if set(r[1]) != set(names):
            raise ValueError(f"every evaluation must return the same targets; got {list(r[1])} after {names}")
    return errors, {t: np.array([r[1][t] for r in results], dtype=float) for t in names}
