"""Hyperparameter selection of TestNav §3.3: a grid over the SBX index η_c, the mutation index η_m and
the population size μ, every setting run with several seeds on every benchmark–metric pair.

Selection rule. For each setting and pair, the pair "reaches" P* when the mean final Recall@P* over the
seeds is ≥ the threshold (0.999). The paper's rule is to choose the setting that reaches P* on the most
pairs; that is all it says. Where several settings tie on it (on a small table many do: every setting that
recovers all of P* ties), this module breaks the tie by the worst-case recall (the lowest of the per-pair
mean final recalls), then by the mean AUC-Recall@P* over pairs and seeds, then by the grid order (smaller
η_c, η_m, μ first). `tie_report` says how many settings tied under the paper's rule, where the
tie-break decided, and where a given setting (the paper's own (1, 5, 110)) ranks.

Every grid run uses the search stage's budget B (`pipeline.config.search.search_budget`) and its other
hyperparameters (parent selection, duplicate elimination): only η_c, η_m and μ vary.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Iterator, Sequence

import pandas as pd

from pipeline.search.ground_truth import GroundTruth
from pipeline.search.scoring.metrics import run_metrics
from pipeline.search.parallel import map_runs
from pipeline.search.registry import run_search

HYPERPARAMETERS = ("eta_c", "eta_m", "mu")


def grid(eta_c: Sequence[float], eta_m: Sequence[float], mu: Sequence[int]) -> list[dict[str, Any]]:
    """Every (η_c, η_m, μ) setting, in lexicographic order."""
    return [dict(zip(HYPERPARAMETERS, values)) for values in itertools.product(eta_c, eta_m, mu)]


def tune_run(problem: GroundTruth, setting: dict[str, Any], seed: int, budget: int, fixed: dict[str, Any] | None = None,
             method: str = "testnav") -> dict[str, Any]:
    """One grid run with proposal budget `budget`, the grid `setting` and the `fixed` hyperparameters:
    its setting, pair, seed and `run_metrics`."""
    trace = run_search(method, problem.oracle, problem.space, budget, seed, **{**(fixed or {}), **setting})
    return {**setting, "benchmark": problem.benchmark, "metric": problem.metric, "seed": int(seed),
            **run_metrics(trace, problem.pareto, problem.space)}


def grid_cells(
    problems: Sequence[GroundTruth], settings: Sequence[dict[str, Any]], seeds: Sequence[int], budget: Callable[[int], int],
    fixed: dict[str, Any] | None = None, workers: int = 1, progress: bool = True, method: str = "testnav",
) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """Run every (setting, pair, seed) over `workers` processes, with budget `budget(|Θ|)` and the `fixed`
    hyperparameters; yield each setting's cell (one row per pair and seed) as soon as all of its runs are
    done, in setting order."""
    per_cell = len(problems) * len(seeds)
    jobs = [dict(problem=p, setting=s, seed=seed, budget=budget(p.space.size), fixed=fixed, method=method)
            for s in settings for p in problems for seed in seeds]
    rows: list[dict[str, Any]] = []
    for row in map_runs(tune_run, jobs, workers, progress, desc="tuning grid"):
        rows.append(row)
        if len(rows) == per_cell:
            yield {k: rows[0][k] for k in HYPERPARAMETERS}, pd.DataFrame(rows)
            rows = []


def setting_scores(runs: pd.DataFrame, threshold: float = 0.999) -> pd.DataFrame:
    """Per setting: pairs reaching P* (mean final recall ≥ threshold), worst-case and mean final recall
    over pairs, mean AUC; sorted best first by the selection rule (`selected` marks the first row)."""
    per_pair = runs.groupby([*HYPERPARAMETERS, "benchmark", "metric"], as_index=False).agg(
        final_recall=("final_recall", "mean"), auc=("auc", "mean"))
    per_pair["reached"] = per_pair["final_recall"] >= threshold
    scores = per_pair.groupby(list(HYPERPARAMETERS), as_index=False).agg(
        pairs_reached=("reached", "sum"), pairs=("reached", "size"), worst_recall=("final_recall", "min"),
        mean_recall=("final_recall", "mean"), mean_auc=("auc", "mean"))
    scores = scores.sort_values(["pairs_reached", "worst_recall", "mean_auc", *HYPERPARAMETERS],
                                ascending=[False, False, False, True, True, True], kind="stable").reset_index(drop=True)
    scores["selected"] = scores.index == 0
    return scores


def tie_report(scores: pd.DataFrame, reference: dict[str, Any]) -> dict[str, Any]:
    """How the choice was made, from `setting_scores`' table: the settings tied under the paper's rule
    (most pairs reaching P*), which key broke the tie, and the rank (1 = chosen) of `reference`
    (None if it is not in the grid)."""
    top = scores["pairs_reached"].iloc[0]
    tied = scores[scores["pairs_reached"] == top]
    decided_by = "the paper's rule (pairs reaching P*)"
    for key in ("worst_recall", "mean_auc"):
        if len(tied) == 1:
            break
        decided_by = f"tie-break on {key}"
        tied = tied[tied[key] == tied[key].iloc[0]]
    if len(tied) > 1:
        decided_by = "tie-break on the grid order"
    match = (scores[list(HYPERPARAMETERS)] == pd.Series(reference)[list(HYPERPARAMETERS)]).all(axis=1)
    rank = int(match.to_numpy().nonzero()[0][0]) + 1 if match.any() else None
    return {"tied_under_paper_rule": int((scores["pairs_reached"] == top).sum()), "settings": int(len(scores)),
            "decided_by": decided_by, "reference": dict(reference), "reference_rank": rank}


def select_setting(runs: pd.DataFrame, threshold: float = 0.999) -> dict[str, Any]:
    """The chosen (η_c, η_m, μ) with its scores, as plain Python values."""
    if runs.empty:
        raise ValueError("no tuning runs to select from")
    best = setting_scores(runs, threshold).iloc[0]
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in best.drop("selected").items()}
