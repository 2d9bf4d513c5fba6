"""The per-unit layer that a search may read for what it has evaluated: the outcomes and
fidelity of configurations on every test unit (an input; a code problem), in `pipeline.front.membership`'s terms,
with the map from their means to the oracle's objectives: `UnitOutcomes` for a table's every configuration,
`UnitRecorder` for a live search's, filled as they are evaluated."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.front.space import Space


@dataclass(frozen=True)
class UnitOutcomes:
    """The per-unit layer of every configuration of Θ (rows in `Space` index order), in `pipeline.front.membership`'s
    terms: outcomes o_θi (|Θ|, n), clean outcomes c_i (n,), fidelity f_θi (|Θ|, n) or one value per θ (|Θ|,), the
    stratum of each unit (n,) or None, and `scale` (2,): the oracle's objectives are δ·scale[0] + const and
    ρ·scale[1] + const of the raw δ = mean_i (c_i − o_θi) and ρ = mean_i f_θi (a min-max normalisation). The layer
    is what the ground truth's bootstrap was given (a set-level fidelity as it was handed to it, e.g. its rank), and
    `seed` its bootstrap seed, so a search that resamples the units draws the ground truth's resamples."""

    outcomes: np.ndarray
    clean: np.ndarray
    fidelity: np.ndarray
    strata: np.ndarray | None = None
    scale: tuple[float, float] = (1.0, 1.0)
    seed: int = 0

    def __post_init__(self) -> None:
        m, n = np.shape(self.outcomes)
        if np.shape(self.clean) != (n,):
            raise ValueError(f"clean must hold one outcome per unit, shape ({n},), got {np.shape(self.clean)}")
        if np.shape(self.fidelity) not in ((m, n), (m,)):
            raise ValueError(f"fidelity must be ({m}, {n}) per unit or ({m},) per configuration, got {np.shape(self.fidelity)}")
        if not all(float(s) > 0 for s in self.scale):
            raise ValueError(f"scale must be two positive factors (increasing maps), got {self.scale}")

    def rows(self, indices: np.ndarray) -> UnitOutcomes:
        """The layer of the configurations `indices` only."""
        return UnitOutcomes(self.outcomes[indices], self.clean, self.fidelity[indices], self.strata, self.scale, self.seed)

    def standard_errors(self) -> np.ndarray:
        """(m, 2): each configuration's standard error of δ and ρ in the oracle's units, sd_i / √n of its per-unit
        values (0 for a set-level fidelity)."""
        n = len(self.clean)
        se_delta = (self.clean[None, :] - self.outcomes).std(axis=1) / np.sqrt(n)
        se_rho = self.fidelity.std(axis=1) / np.sqrt(n) if self.fidelity.ndim == 2 else np.zeros(len(self.outcomes))
        return np.column_stack([se_delta * self.scale[0], se_rho * self.scale[1]])


class UnitRecorder:
    """The per-unit layer of a live search, filled as its configurations are evaluated: the outcome of each unit
    from the benchmark's per-input answers (`prediction`, and `rho_<metric>_inputs` where the metric has per-input
    values; its set-level `rho_<metric>` otherwise), against the clean predictions, in the raw units of live search's
    objectives (scale 1). `rows` gives the `UnitOutcomes` of configurations evaluated so far, by index in `space`."""

    def __init__(self, space: Space, labels: np.ndarray, clean_predictions: np.ndarray, task_metric: str, metric: str,
                 seed: int = 0) -> None:
        from pipeline.front.per_input import unit_outcomes

        self.space, self.labels, self.task_metric, self.metric, self.seed = space, np.asarray(labels), task_metric, metric, seed
        clean, self._unit, strata = unit_outcomes(np.asarray(clean_predictions)[None, :], self.labels, task_metric)
        self.clean, self.strata = clean[0], strata
        self._rows: dict[int, tuple[np.ndarray, np.ndarray | float]] = {}

    def record(self, theta: tuple[int, ...], values: dict) -> None:
        """Keep the per-unit outcomes and fidelity of the configuration `theta` from its benchmark answer `values`."""
        from pipeline.front.per_input import unit_fidelity, unit_outcomes

        if "prediction" not in values:
            raise ValueError("the benchmark gives no per-input predictions; build it with per_input=True to estimate the core")
        outcomes = unit_outcomes(np.asarray(values["prediction"])[None, :], self.labels, self.task_metric)[0][0]
        per_input = values.get(f"rho_{self.metric}_inputs")
        fidelity = unit_fidelity(None if per_input is None else np.asarray(per_input, dtype=float)[None, :], self._unit,
                                 np.array([float(values[f"rho_{self.metric}"])]))[0]
        self._rows[self.space.index(theta)] = (outcomes, fidelity)

    def rows(self, indices: np.ndarray) -> UnitOutcomes:
        rows = [self._rows[int(i)] for i in indices]
        return UnitOutcomes(np.array([r[0] for r in rows]).reshape(len(rows), len(self.clean)), self.clean,
                            np.array([r[1] for r in rows]), self.strata, (1.0, 1.0), self.seed)
