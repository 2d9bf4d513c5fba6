"""Live search of a user's run (TestNav Algorithm 1 on the model itself): the recommended method proposes q
configurations a round, the run's evaluator computes them in parallel and keeps each in the run's resume
store, and the method's stopping rule ends the search when its own estimate of Recall@P* reaches the target.
With racing (accuracy tasks), each configuration is evaluated in slices of its inputs and stopped once a
completed one dominates it with confidence (`pipeline.search.racing.live_racing`).

`evaluate_all` is the `exhaustive` option: every configuration of Θ through the same evaluator and store
(the search's evaluations are reused, a killed run resumes), with P* flagged per metric on the raw values
(min-max normalisation over Θ, the ground truth's, is increasing in each objective, so it leaves P* as is).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from pipeline.assess.run import Run
from pipeline.benchmark.live_evaluation import LiveEvaluator
from pipeline.front.pareto import pareto_mask
from pipeline.front.space import Space
from pipeline.search import LiveOracle, Oracle, run_search
from pipeline.search.racing.live_racing import LiveRacingOracle
from pipeline.search.racing.unit_outcomes import UnitRecorder
from pipeline.runtime.store import ResumeStore

Say = Callable[[str], None]


def round_line(metric: str, size: int) -> Callable[[dict], None]:
    """The progress callback of one search: a line per finished round (evaluated, front size, est_recall, and
    est_core where the method estimates its recall of the core)."""
    def report(state: dict) -> str:
        estimate, core = state["est_recall"], state.get("est_core", float("nan"))
        recall = "–" if np.isnan(estimate) else f"{estimate:.3f}"
        return (f"{metric}: round {state['round']:>3}  evaluated {state['u']:>5,} of {size:,}  "
                f"front {state['front']:>3}  est_recall {recall}" + ("" if np.isnan(core) else f"  est_core {core:.3f}"))
    return report


def evaluator(run: Run, store: ResumeStore, *, executor: str, workers: int, submitit: Mapping[str, Any] | None = None
              ) -> LiveEvaluator:
    """The run's evaluator: its benchmark in `workers` workers of `executor`, every value kept in `store`."""
    return LiveEvaluator(run.factory, run.key, store, run.fingerprint, executor=executor, workers=workers,
                         submitit=submitit, folder=run.jobs)


def live_oracle(run: Run, evaluate: LiveEvaluator, metric: str, units: UnitRecorder | None, racing: dict[str, Any] | None
                ) -> Oracle:
    """The oracle of one metric's search: racing over the inputs where `racing` gives its settings (labels, clean
    score, seed; accuracy tasks), else a full evaluation of every configuration. With `units` the search can read
    the per-input outcomes of what it completed (GP-PND's estimate of its recall of the core)."""
    if racing is None:
        return LiveOracle.from_benchmark(evaluate, metric, units)
    return LiveRacingOracle(evaluate.slices, run.space, metric=metric, units=units, **racing)


def search_metric(run: Run, oracle: Oracle, metric: str, settings: Any, budget: int, say: Say) -> pd.DataFrame:
    """One live search of `metric`'s (δ, ρ) through `oracle` (`live_oracle`) with the method, q, seed, stopping rule and
    hyperparameters of `settings` (a `pipeline.assess.Settings`); its trace (`pipeline.search.run_search`)."""
    from pipeline.search import method_class

    accepts = method_class(settings.method).hyperparameters()
    hyper = {**({"stop_at_recall": settings.stop_at_recall} if "stop_at_recall" in accepts else {}),
             **dict(settings.hyperparameters or {})}
    line = round_line(metric, run.space.size)
    return run_search(settings.method, oracle, run.space, budget, settings.seed, batch_size=settings.batch_size,
                      progress=lambda s: say(line(s)), **hyper)


def evaluate_up_front(oracles: Mapping[str, Oracle], thetas: np.ndarray) -> None:
    """Evaluate `thetas` through every metric's oracle before the searches (with racing: one round, no rivals yet, so
    each is completed; the second metric's slices come from the store)."""
    for oracle in oracles.values():
        oracle.evaluate_batch(thetas)


def singletons(space: Space) -> np.ndarray:
    """(k·(ℓ − 1), k): every configuration with exactly one perturbation active, perturbation by perturbation, level by
    level (what the page's "each perturbation alone" table shows)."""
    rows = np.zeros((space.n_dims * (space.levels - 1), space.n_dims), dtype=np.int64)
    for i in range(space.n_dims):
        rows[i * (space.levels - 1):(i + 1) * (space.levels - 1), i] = np.arange(1, space.levels)
    return rows


def evaluate_all(run: Run, evaluate: LiveEvaluator, chunk: int, say: Say) -> pd.DataFrame:
    """Every θ of Θ (levels, then δ, ψ and raw ρ per metric) with `pareto_<metric>` flags: the run's ground truth."""
    grid = [tuple(int(v) for v in row) for row in run.space.grid()]
    rows: list[dict[str, float]] = []
    for start in range(0, len(grid), chunk):
        rows.extend(evaluate(grid[start:start + chunk]))
        say(f"exhaustive: {min(start + chunk, len(grid)):,} of {len(grid):,} configurations")
    table = pd.DataFrame(grid, columns=list(run.space.names))
    values = pd.DataFrame(rows)
    table["delta"] = values["delta"].to_numpy()
    table["psi"] = values["psi"].to_numpy()
    for m in run.metrics:
        table[f"rho_{m}"] = values[f"rho_{m}"].to_numpy()
        table[f"pareto_{m}"] = pareto_mask(table[["delta", f"rho_{m}"]].to_numpy())
    return table
