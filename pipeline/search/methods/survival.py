"""Selection of the next population (TestNav Algorithm 1, lines 17-19) and the final ranking R (line 21).

Objectives are passed maximised (δ, ρ) and negated for pymoo, which minimises. Non-dominated sorting
is pymoo's `NonDominatedSorting` and crowding pymoo's NSGA-II crowding distance ("cd"); the survival
steps are those of pymoo's `RankAndCrowding` and `FitnessSurvival`, applied to arrays instead of
`Population` objects (see `variation.py` for why).
"""
from __future__ import annotations

import numpy as np
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
from pymoo.util.randomized_argsort import randomized_argsort

_SORTING = NonDominatedSorting()
_CROWDING = get_crowding_function("cd")


def _minimised(F: np.ndarray) -> np.ndarray:
    F = np.asarray(F, dtype=float)
    if F.ndim != 2:
        raise ValueError(f"objectives must be an (n_points, n_objectives) array, got shape {F.shape}")
    return -F


def rank_and_crowding(F: np.ndarray, n_survive: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """NSGA-II survival of `n_survive` rows of F (maximised): whole fronts by Pareto rank, the front that
    does not fit cut by descending crowding distance (ties in random order, as pymoo does).

    Returns the survivors' row indices and their tournament keys (rank, crowding distance), where the
    crowding distance of a front is computed over the whole front, before the cut, as in pymoo.
    """
    G = _minimised(F)
    survivors: list[np.ndarray] = []
    keys: list[np.ndarray] = []
    n_kept = 0
    for rank, front in enumerate(_SORTING.do(G, n_stop_if_ranked=n_survive)):
        n_remove = max(n_kept + len(front) - n_survive, 0)
        crowding = _CROWDING.do(G[front], n_remove=n_remove)
        order = np.arange(len(front))
        if n_remove:
            order = randomized_argsort(crowding, order="descending", method="numpy", random_state=rng)[:-n_remove]
        survivors.append(front[order])
        keys.append(np.column_stack([np.full(len(order), rank, dtype=float), crowding[order]]))
        n_kept += len(order)
        if n_kept >= n_survive:
            break
    return np.concatenate(survivors), np.concatenate(keys)


def fitness_survival(fitness: np.ndarray, n_survive: int) -> tuple[np.ndarray, np.ndarray]:
    """Single-objective survival of the `n_survive` fittest (pymoo's `FitnessSurvival`: a stable sort,
    so ties keep their order, current population before offspring). Keys: (−fitness, 0)."""
    fitness = np.asarray(fitness, dtype=float).ravel()
    keep = np.argsort(-fitness, kind="stable")[:n_survive]
    return keep, np.column_stack([-fitness[keep], np.zeros(len(keep))])


def pareto_rank_and_crowding(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pareto rank (0 = non-dominated) and crowding distance within its front of every row of F (maximised)."""
    G = _minimised(F)
    rank = np.zeros(len(G), dtype=np.int64)
    crowding = np.zeros(len(G))
    for r, front in enumerate(_SORTING.do(G) if len(G) else []):
        rank[front] = r
        crowding[front] = _CROWDING.do(G[front])
    return rank, crowding
