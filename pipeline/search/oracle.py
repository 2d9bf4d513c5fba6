"""Oracles: the `Evaluate(θ)` of TestNav Algorithm 1, θ -> (δ(θ), ρ(θ)), both maximised.

Search methods see only this interface, so they cannot tell a ground-truth lookup table from a live
benchmark. `TableOracle` answers from an exhaustive table (what the experiments of §4 do: a proposal is
a lookup); `LiveOracle` wraps any callable, e.g. a benchmark that perturbs the test set and runs the
model, and caches its answers so a configuration is never evaluated twice.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from pipeline.search.racing.racing import FIRST, GROWTH, Race, Z
from pipeline.search.racing.unit_outcomes import UnitOutcomes, UnitRecorder
from pipeline.front.space import Space

Objectives = tuple[float, float]


@dataclass(frozen=True)
class Answers:
    """What a batch of configurations cost and gave, one row each: the objectives (m, 2) a search sees,
    the model evaluations each cost (`inputs`: its inputs through the model, NaN where the oracle does not know n),
    whether it was evaluated on every input (`complete`; a raced configuration stopped early is not), the
    variance (m, 2) of its objectives as estimates (0 for a complete one) and, from a live benchmark, the seconds
    (m, 3) it spent in perturbation, inference and fidelity (`SECONDS`; None where the oracle does not time them)."""

    values: np.ndarray
    inputs: np.ndarray
    complete: np.ndarray
    variance: np.ndarray
    seconds: np.ndarray | None = None


SECONDS = ("seconds_perturb", "seconds_infer", "seconds_fidelity")  # a live benchmark's timings of one evaluation


def timing(values: dict) -> np.ndarray:
    """The `SECONDS` of one benchmark answer, (3,) (0 where it gives none)."""
    return np.array([float(values.get(k, 0.0)) for k in SECONDS])


class Oracle(ABC):
    """`oracle(θ)` -> (δ, ρ); `oracle.evaluate_batch(thetas)` -> an (m, 2) array, one row per θ."""

    def __call__(self, theta: Sequence[int]) -> Objectives:
        delta, rho = self.evaluate_batch(np.asarray(theta, dtype=np.int64).reshape(1, -1))[0]
        return float(delta), float(rho)

    def evaluate_batch(self, thetas: np.ndarray) -> np.ndarray:
        thetas = np.asarray(thetas, dtype=np.int64)
        if thetas.ndim != 2:
            raise ValueError(f"configurations must be an (m, n_dims) array, got shape {thetas.shape}")
        if len(thetas) == 0:
            return np.zeros((0, 2))
        out = np.asarray(self._do(thetas), dtype=float).reshape(len(thetas), 2)
        if not np.isfinite(out).all():
            row = int(np.argwhere(~np.isfinite(out))[0, 0])
            raise ValueError(f"the oracle returned non-finite objectives {out[row].tolist()} for configuration {thetas[row].tolist()}")
        return out

    @abstractmethod
    def _do(self, thetas: np.ndarray) -> np.ndarray:
        """Objectives (δ, ρ) of each row of `thetas`, an (m, 2) array."""

    @property
    def n_inputs(self) -> int | None:
        """n, the test inputs one full evaluation runs through the model (None where the oracle does not know)."""
        inputs = getattr(self, "inputs", None)
        return None if inputs is None else len(inputs.clean)

    def evaluate_counted(self, thetas: np.ndarray) -> Answers:
        """`evaluate_batch` with what each configuration cost (`Answers`): here every one is evaluated on all n."""
        values = self.evaluate_batch(thetas)
        n = self.n_inputs
        return Answers(values, np.full(len(values), np.nan if n is None else float(n)), np.ones(len(values), dtype=bool),
                       np.zeros_like(values), self._seconds(np.asarray(thetas, dtype=np.int64).reshape(len(values), -1)))

    def _seconds(self, thetas: np.ndarray) -> np.ndarray | None:
        """The `SECONDS` each configuration of `thetas` (evaluated) took, (m, 3); None where the oracle does not time."""
        return None


class TableOracle(Oracle):
    """Lookup in a ground-truth table: a dense (|Θ|, 2) array indexed by `space.indices(θ)`; with `inputs`, the
    table's per-unit layer too (rows in the same order), which a search reads for what it evaluated
    (`Ledger.inputs_of`)."""

    def __init__(self, objectives: np.ndarray, space: Space, inputs: UnitOutcomes | None = None) -> None:
        objectives = np.asarray(objectives, dtype=float)
        if objectives.shape != (space.size, 2):
            raise ValueError(f"objectives must have shape ({space.size}, 2), one (δ, ρ) row per configuration of Θ; got {objectives.shape}")
        if not np.isfinite(objectives).all():
            row = int(np.argwhere(~np.isfinite(objectives))[0, 0])
            raise ValueError(f"configuration {space.theta(row)} has non-finite objectives {objectives[row].tolist()}")
        if inputs is not None and len(inputs.outcomes) != space.size:
            raise ValueError(f"inputs must hold one row per configuration of Θ ({space.size}), got {len(inputs.outcomes)}")
        self.space = space
        self.objectives = objectives
        self.inputs = inputs

    @classmethod
    def from_table(cls, table: pd.DataFrame, space: Space, delta: str = "delta_norm", rho: str = "rho_ssim_norm") -> TableOracle:
        """From a ground-truth DataFrame with one column per dimension (named `space.names`) and the
        objective columns `delta` and `rho`; every configuration of Θ must appear exactly once."""
        missing = [c for c in (*space.names, delta, rho) if c not in table.columns]
        if missing:
            raise ValueError(f"the ground-truth table lacks columns {missing}; it has {list(table.columns)}")
        idx = space.indices(table[list(space.names)].to_numpy())
        counts = np.bincount(idx, minlength=space.size)
        if (counts != 1).any():
            bad = int(np.flatnonzero(counts != 1)[0])
            raise ValueError(f"the ground-truth table must hold every configuration of Θ once; {space.theta(bad)} appears {counts[bad]} times")
        objectives = np.empty((space.size, 2))
        objectives[idx] = table[[delta, rho]].to_numpy(dtype=float)
        return cls(objectives, space)

    def _do(self, thetas: np.ndarray) -> np.ndarray:
        return self.objectives[self.space.indices(thetas)]


class Settled(NamedTuple):
    """One raced configuration's answer: its objectives (δ̂ or δ, ρ), the inputs it cost, whether it was completed,
    and the variance of δ̂ (0 if completed)."""

    objectives: tuple[float, float]
    inputs: int
    complete: bool
    variance: float = 0.0


class RacedOracle(Oracle):
    """An oracle that races every new configuration over its inputs (`pipeline.search.racing.racing`): a stopped one
    answers its estimate δ̂ and its exact ρ, a completed one its exact objectives; asked again, the same answer.
    `_race(indices)` races one round's new configurations and settles each."""

    race: Race

    def __init__(self) -> None:
        self._settled: dict[int, Settled] = {}
        self.timings: dict[int, np.ndarray] = {}  # live: the SECONDS each configuration's slices took, summed

    @abstractmethod
    def _race(self, indices: list[int]) -> list[Settled]:
        """The answers of the new configurations `indices` (class docstring)."""

    def evaluate_counted(self, thetas: np.ndarray) -> Answers:
        idx = self.space.indices(np.asarray(thetas, dtype=np.int64).reshape(-1, self.space.n_dims)).tolist()
        new = [i for i in dict.fromkeys(idx) if i not in self._settled]
        if new:
            self._settled.update(zip(new, self._race(new)))
        rows = [self._settled[i] for i in idx]
        values = np.array([r.objectives for r in rows], dtype=float).reshape(len(rows), 2)
        variance = np.column_stack([[r.variance for r in rows], np.zeros(len(rows))]) if rows else np.zeros((0, 2))
        seconds = np.array([self.timings[i] for i in idx]).reshape(len(rows), 3) if self.timings else None
        return Answers(values, np.array([r.inputs for r in rows], dtype=float), np.array([r.complete for r in rows], dtype=bool),
                       variance, seconds)

    def _do(self, thetas: np.ndarray) -> np.ndarray:
        return self.evaluate_counted(thetas).values

    def spent_pairs(self) -> set[tuple[int, int]]:
        """Every (configuration index, input) this oracle's races evaluated."""
        return {(i, int(r)) for i, settled in self._settled.items() for r in self.race.order[:settled.inputs]}


class RacingOracle(RacedOracle, TableOracle):
    """`TableOracle` that races every new configuration over the inputs of its per-unit layer: what a live search
    with racing would have paid and seen, from a ground truth."""

    def __init__(self, objectives: np.ndarray, space: Space, inputs: UnitOutcomes, seed: int = 0, first: int = FIRST,
                 growth: float = GROWTH, z: float = Z) -> None:
        if inputs is None:
            raise ValueError("racing reads the per-unit outcomes: give RacingOracle the table's `inputs`")
        TableOracle.__init__(self, objectives, space, inputs)
        RacedOracle.__init__(self)
        self.race = Race(len(inputs.clean), inputs.scale[0], seed, first, growth, z)

    def _race(self, indices: list[int]) -> list[Settled]:
        outcomes, out = self.inputs.outcomes, []
        raced = self.race.run(indices, lambda j: self.objectives[j, 1], lambda asks: [outcomes[j, rows] for j, rows in asks])
        for i, r in zip(indices, raced):
            if r.complete:
                self.race.complete(self.objectives[i], r.outcomes)
                out.append(Settled(tuple(self.objectives[i]), r.inputs, True))
            else:
                out.append(Settled((r.delta, float(self.objectives[i, 1])), r.inputs, False, r.variance))
        return out


Many = Callable[[list[tuple[int, ...]]], Sequence[Sequence[float]]]


class LiveOracle(Oracle):
    """Wraps `evaluate_many([θ, …]) -> [(δ, ρ), …]` (each θ a tuple of ints) and caches every answer by θ.

    One `evaluate_batch` call (one round of the ledger) passes all its configurations not yet cached to
    `evaluate_many` at once, so an evaluator may run them in parallel. `calls` counts the configurations
    `evaluate_many` was asked for, i.e. the distinct configurations evaluated.
    """

    def __init__(self, evaluate_many: Many) -> None:
        self.evaluate_many = evaluate_many
        self.cache: dict[tuple[int, ...], Objectives] = {}
        self.calls = 0
        self.inputs: UnitRecorder | None = None
        self.timings: dict[tuple[int, ...], np.ndarray] = {}  # from a benchmark: the SECONDS of each configuration

    @classmethod
    def one_at_a_time(cls, evaluate: Callable[[tuple[int, ...]], Sequence[float]]) -> LiveOracle:
        """From `evaluate(θ) -> (δ, ρ)`, run on each configuration in turn."""
        return cls(lambda thetas: [evaluate(theta) for theta in thetas])

    @classmethod
    def from_benchmark(cls, evaluate_many: Callable[[list[tuple[int, ...]]], list[dict[str, float]]], metric: str,
                       units: UnitRecorder | None = None) -> LiveOracle:
        """From a benchmark evaluator `evaluate_many([θ, …]) -> [{'delta': …, 'rho_<metric>': …}, …]` (raw,
        unnormalised values: normalising over Θ needs all of Θ, which live search never sees). With `units`, the
        per-input answers of every configuration evaluated are recorded there, and the oracle's `inputs` is it."""
        key = f"rho_{metric}"

        def objectives(thetas: list[tuple[int, ...]]) -> list[Objectives]:
            out = []
            for theta, values in zip(thetas, evaluate_many(thetas)):
                if "delta" not in values or key not in values:
                    raise ValueError(f"the benchmark returned keys {sorted(values)}; live search needs 'delta' and {key!r}")
                if units is not None:
                    units.record(theta, values)
                oracle.timings[theta] = timing(values)
                out.append((float(values["delta"]), float(values[key])))
            return out

        oracle = cls(objectives)
        oracle.inputs = units
        return oracle

    def _seconds(self, thetas: np.ndarray) -> np.ndarray | None:
        if not self.timings:
            return None
        return np.array([self.timings.get(t, np.full(3, np.nan)) for t in map(tuple, thetas.tolist())]).reshape(len(thetas), 3)

    def _do(self, thetas: np.ndarray) -> np.ndarray:
        rows = list(map(tuple, thetas.tolist()))
        todo = list(dict.fromkeys(t for t in rows if t not in self.cache))
        if todo:
            answers = list(self.evaluate_many(todo))
            if len(answers) != len(todo):
                raise ValueError(f"the evaluator returned {len(answers)} answers for {len(todo)} configurations")
            for theta, (delta, rho) in zip(todo, answers):
                self.cache[theta] = (float(delta), float(rho))
            self.calls += len(todo)
        return np.array([self.cache[t] for t in rows], dtype=float).reshape(len(rows), 2)
