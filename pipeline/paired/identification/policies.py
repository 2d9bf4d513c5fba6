"""Fixed rejection policies compared under one shared correspondence (Section 4.2, Appendix D).

The clean side keeps threshold tau_0; policy j accepts a perturbed record when S' >= tau_j. Within class y
(Eq. 10), H_j counts accepted-correct clean records (A) matched to wrong perturbed records accepted by j,
L_j those matched to correct perturbed records rejected by j, and J_j = lambda H_j + (1 - lambda) L_j.

* single-policy intervals: the lower end is the exact joint minimum; the upper end is Lemma 1 (Eq. 8),
  the maximum over the sharp classwise H_j / L_j count intervals capped by h + l <= u_y;
* D+_jl (Eq. 11): the maximum of J_j - J_l over one shared correspondence, a class sum of exact maxima;
  j is certified cheaper than l when D+_jl < -1e-12, which separate intervals establish only when
  upper(J_j) - lower(J_l) < -1e-12;
* selection: minimax regret (R_j = max_l D+_jl) and the feasible-mean rule (mean J_j over uniformly
  weighted feasible correspondences), both with Appendix D's tie rule;
* the natural cost J'_j = lambda E_tau_j + (1 - lambda) L_j of Corollary 1, E_tau_j being marginal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.paired.identification.bounds import check_threshold
from pipeline.paired.identification.cell import Cell, as_cell
from pipeline.paired.identification.levels import (
    CellContext,
    band,
    check_level,
    context,
    extremes,
    partner_probability,
)
from pipeline.paired.identification.thresholds import CLEAN_COVERAGE, POLICY_COVERAGES

STRICT = 1e-12   # certification: D+ < -STRICT
TIE = 1e-12      # selection: values within TIE of the minimum are tied
LAMBDA_GRID = tuple(np.round(np.linspace(0.0, 1.0, 11), 10))


def _check_lams(lams) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(lams, dtype=float))
    if arr.ndim != 1 or len(arr) == 0 or np.isnan(arr).any() or (arr < 0).any() or (arr > 1).any():
        raise ValueError(f"cost weights lambda must lie in [0, 1], got {lams}")
    return arr


def _check_taus(taus) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(taus, dtype=float))
    if arr.ndim != 1 or len(arr) == 0 or not np.isfinite(arr).all():
        raise ValueError(f"policy thresholds must be a non-empty list of finite numbers, got {taus}")
    return arr


def lemma1_upper(h_lo, h_hi, l_lo, l_hi, u, lam):
    """Eq. (8): max of lam*h + (1-lam)*l over h in [h_lo, h_hi], l in [l_lo, l_hi], h + l <= u (per class).

    The maximum sits at (h_hi, l_hi) when that is within the cap, otherwise at P1 = (h_hi, u - h_hi) or
    P2 = (u - l_hi, l_hi) (Appendix A.7); the lower ends only certify that P1 and P2 lie in the region.
    """
    inside = h_hi + l_hi <= u
    corner = lam * h_hi + (1 - lam) * l_hi
    p1 = lam * h_hi + (1 - lam) * (u - h_hi)
    p2 = lam * (u - l_hi) + (1 - lam) * l_hi
    return np.where(inside, corner, np.maximum(p1, p2))


def _preference(coverages: np.ndarray, target: float) -> np.ndarray:
    """Rank of each policy under the tie rule: coverage closest to target, then lower coverage, then index."""
    order = sorted(range(len(coverages)), key=lambda j: (round(abs(coverages[j] - target), 12), coverages[j], j))
    rank = np.empty(len(coverages), dtype=np.int64)
    rank[order] = np.arange(len(coverages))
    return rank


def select_policies(values: np.ndarray, coverages, target: float = CLEAN_COVERAGE, tol: float = TIE) -> np.ndarray:
    """`select_policy` along the last axis of `values` (shape (..., P)); returns indices of shape (...)."""
    values = np.asarray(values, dtype=float)
    coverages = np.asarray(coverages, dtype=float)
    if values.ndim == 0 or values.shape[-1] != len(coverages) or len(coverages) == 0:
        raise ValueError(f"values {values.shape} need a last axis of one value per policy ({len(coverages)} coverages)")
    tied = values <= values.min(axis=-1, keepdims=True) + tol
    return np.where(tied, _preference(coverages, target), len(coverages)).argmin(axis=-1)


def select_policy(values, coverages, target: float = CLEAN_COVERAGE, tol: float = TIE) -> int:
    """Index minimising `values`; values within `tol` of the minimum tie, and ties favour nominal coverage
    closest to `target`, then lower coverage, then the lower policy index (Appendix D)."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"values must be a 1-d array of one value per policy, got shape {values.shape}")
    return int(select_policies(values, coverages, target, tol))


def minimax_regret_rule(d_plus: np.ndarray, coverages) -> int:
    """Minimax regret: argmin_j R_j with R_j = max_l D+_jl (Eq. 11; D+_jj = 0)."""
    d_plus = np.asarray(d_plus, dtype=float)
    return select_policy(np.maximum(d_plus.max(axis=1), 0.0), coverages)


def feasible_mean_rule(means, coverages) -> int:
    """Feasible-mean selection: argmin_j of the mean of J_j over uniformly weighted feasible correspondences."""
    return select_policy(means, coverages)


@dataclass(frozen=True)
class LevelCosts:
    """Everything about P policies at one level, for Q weights (rates, i.e. divided by N)."""

    h: np.ndarray            # (P, 2) H_j interval
    l: np.ndarray            # (P, 2) L_j interval
    lower: np.ndarray        # (P, Q) min J_j
    upper: np.ndarray        # (P, Q) Lemma 1
    mean: np.ndarray         # (P, Q) feasible mean of J_j
    d_plus: np.ndarray       # (P, P, Q) D+_jl
    natural_lower: np.ndarray  # (P, Q)
    natural_upper: np.ndarray  # (P, Q)
    natural_d_plus: np.ndarray  # (P, P, Q)


def _level_costs(ctx: CellContext, taus: np.ndarray, lams: np.ndarray, level: str) -> LevelCosts:
    cell = ctx.cell
    n = cell.n_records
    n_pol, n_lam = len(taus), len(lams)
    pc, err = cell.pert_correct, ~cell.pert_correct
    acc = cell.pert_max[None, :] >= taus[:, None]                      # (P, N)
    e_tau = (acc & err).sum(axis=1) / n
    # Policy bands: wrong records accepted by j (H_j), correct records rejected by j (L_j).
    pol = band(ctx, acc, ~acc, level)
    ones, zeros = np.ones(1), np.zeros(1)
    lo, hi = extremes(ctx, pol, level, np.concatenate([ones, zeros, lams]), np.concatenate([zeros, ones, 1 - lams]))
    h_lo, h_hi, l_lo, l_hi = lo[0], hi[0], lo[1], hi[1]                 # (P, C) counts
    lower = lo[2:].sum(axis=-1).T / n                                   # (P, Q)
    upper = lemma1_upper(h_lo, h_hi, l_lo, l_hi, ctx.u, lams[:, None, None]).sum(axis=-1).T / n
    partner = partner_probability(ctx, level)
    mean = (np.outer((partner * (err & acc)).sum(axis=1), lams)
            + np.outer((partner * (pc & ~acc)).sum(axis=1), 1 - lams)) / n
    # Pair bands: records accepted by exactly one policy of the pair.
    jj, mm = np.triu_indices(n_pol, k=1)
    lo_t, hi_t = np.minimum(taus[jj], taus[mm]), np.maximum(taus[jj], taus[mm])
    switching = (cell.pert_max[None, :] >= lo_t[:, None]) & (cell.pert_max[None, :] < hi_t[:, None])
    pair = band(ctx, switching, switching, level)
    lo, hi = extremes(ctx, pair, level, np.concatenate([lams, zeros]), np.concatenate([-(1 - lams), -ones]))
    lo, hi = lo.sum(axis=-1) / n, hi.sum(axis=-1) / n                    # (Q+1, pairs): J_more - J_fewer; L diff
    more = np.where(taus[jj] <= taus[mm], jj, mm)
    fewer = np.where(taus[jj] <= taus[mm], mm, jj)
    d_plus = np.zeros((n_pol, n_pol, n_lam))
    nat_d = np.zeros((n_pol, n_pol, n_lam))
    d_plus[more, fewer], d_plus[fewer, more] = hi[:-1].T, -lo[:-1].T
    de = (e_tau[more] - e_tau[fewer])[:, None]
    nat_d[more, fewer] = lams * de + (1 - lams) * hi[-1][:, None]
    nat_d[fewer, more] = -lams * de - (1 - lams) * lo[-1][:, None]
    h = np.stack([h_lo.sum(axis=1), h_hi.sum(axis=1)], axis=1) / n
    l_ = np.stack([l_lo.sum(axis=1), l_hi.sum(axis=1)], axis=1) / n
    return LevelCosts(
        h=h, l=l_, lower=lower, upper=upper, mean=mean, d_plus=d_plus,
        natural_lower=lams * e_tau[:, None] + (1 - lams) * l_[:, :1],
        natural_upper=lams * e_tau[:, None] + (1 - lams) * l_[:, 1:],
        natural_d_plus=nat_d,
    )


def _observed(ctx: CellContext, taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observed H_j, L_j and E_tau_j (rates) under the actual correspondence."""
    cell = ctx.cell
    acc = cell.pert_max[None, :] >= taus[:, None]
    a_rec = cell.clean_correct & ctx.clean_accept
    n = cell.n_records
    h = (a_rec & ~cell.pert_correct & acc).sum(axis=1) / n
    l_ = (a_rec & cell.pert_correct & ~acc).sum(axis=1) / n
    e = (~cell.pert_correct & acc).sum(axis=1) / n
    return h, l_, e


def _prepare(records, clean_threshold, taus, lam, level) -> tuple[CellContext, np.ndarray, np.ndarray, str]:
    cell = as_cell(records)
    return (context(cell, check_threshold(clean_threshold, "clean_threshold")), _check_taus(taus),
            _check_lams(lam), check_level(level))


def _single_weight_costs(records, clean_threshold, policy_thresholds, lam, level):
    """`_prepare` for one weight λ, with the level's cost intervals of every policy."""
    ctx, taus, lams, level = _prepare(records, clean_threshold, policy_thresholds, lam, level)
    if len(lams) != 1:
        raise ValueError(f"lam must be one number, got {lam}")
    return ctx, taus, lams, _level_costs(ctx, taus, lams, level)


def policy_cost_bounds(records: pd.DataFrame | Cell, clean_threshold: float, policy_thresholds, lam: float,
                       level: str) -> pd.DataFrame:
    """Sharp single-policy intervals of J_j = lam H_j + (1 - lam) L_j at `level`, one row per policy.

    Columns: policy, threshold, lower, upper (Lemma 1), observed, mean (feasible mean), and the H_j, L_j
    intervals (h_lower, h_upper, l_lower, l_upper). Rates divide by N.
    """
    ctx, taus, lams, lc = _single_weight_costs(records, clean_threshold, policy_thresholds, lam, level)
    h_obs, l_obs, _ = _observed(ctx, taus)
    return pd.DataFrame({
        "policy": np.arange(len(taus)), "threshold": taus, "lower": lc.lower[:, 0], "upper": lc.upper[:, 0],
        "observed": lams[0] * h_obs + (1 - lams[0]) * l_obs, "mean": lc.mean[:, 0],
        "h_lower": lc.h[:, 0], "h_upper": lc.h[:, 1], "l_lower": lc.l[:, 0], "l_upper": lc.l[:, 1],
    })


def natural_cost_bounds(records: pd.DataFrame | Cell, clean_threshold: float, policy_thresholds, lam: float,
                        level: str) -> pd.DataFrame:
    """Corollary 1's natural cost J'_j = lam E_tau_j + (1 - lam) L_j: intervals and observed values per policy."""
    ctx, taus, lams, lc = _single_weight_costs(records, clean_threshold, policy_thresholds, lam, level)
    _, l_obs, e = _observed(ctx, taus)
    return pd.DataFrame({
        "policy": np.arange(len(taus)), "threshold": taus, "e_tau": e,
        "lower": lc.natural_lower[:, 0], "upper": lc.natural_upper[:, 0],
        "observed": lams[0] * e + (1 - lams[0]) * l_obs,
    })


def difference_bound(records: pd.DataFrame | Cell, clean_threshold: float, tau_j: float, tau_l: float, lam: float,
                     level: str) -> float:
    """D+_jl (Eq. 11): the maximum over one shared feasible correspondence of J_j - J_l (a rate)."""
    ctx, taus, lams, level = _prepare(records, clean_threshold, [tau_j, tau_l], lam, level)
    return float(_level_costs(ctx, taus, lams, level).d_plus[0, 1, 0])


def natural_difference_bound(records: pd.DataFrame | Cell, clean_threshold: float, tau_j: float, tau_l: float,
                             lam: float, level: str) -> float:
    """D'+_jl: the shared-correspondence maximum of J'_j - J'_l for the natural cost of Corollary 1."""
    ctx, taus, lams, level = _prepare(records, clean_threshold, [tau_j, tau_l], lam, level)
    return float(_level_costs(ctx, taus, lams, level).natural_d_plus[0, 1, 0])


def policy_analysis(records: pd.DataFrame | Cell, clean_threshold: float, policy_thresholds,
                    coverages=POLICY_COVERAGES, lams=LAMBDA_GRID, levels=("I0", "Ik", "I5")) -> dict[str, pd.DataFrame]:
    """The full Appendix D analysis of one cell: every policy, weight and level.

    Returns three tables:
    * ``costs``: (level, lam, policy) intervals of J_j and J'_j, observed values and feasible means;
    * ``comparisons``: (level, lam, policy, other) directed comparisons: the shared-correspondence bound
      ``d_shared`` = D+_jl, the separate-interval bound ``d_separate`` = upper(J_j) - lower(J_l), whether each
      certifies j cheaper than l, and whether the switching records are ``mixed`` (both correct and
      wrong), plus the same for the natural cost;
    * ``selection``: (level, lam) minimax-regret and feasible-mean choices, their realised costs and
      regrets, the fixed-80%-coverage and marginal-proxy controls, and the minimax outcome.
    """
    ctx, taus, lams, _ = _prepare(records, clean_threshold, policy_thresholds, lams, "I0")
    coverages = np.asarray(coverages, dtype=float)
    if coverages.shape != taus.shape:
        raise ValueError(f"need one nominal coverage per policy threshold, got {len(coverages)} for {len(taus)}")
    levels = [check_level(lv) for lv in levels]
    cell = ctx.cell
    n_pol, n_lam, n = len(taus), len(lams), ctx.cell.n_records
    h_obs, l_obs, e_obs = _observed(ctx, taus)
    j_obs = np.outer(h_obs, lams) + np.outer(l_obs, 1 - lams)            # (P, Q)
    n_obs = np.outer(e_obs, lams) + np.outer(l_obs, 1 - lams)
    acc = cell.pert_max[None, :] >= taus[:, None]
    pc = cell.pert_correct
    switch = acc[:, None, :] != acc[None, :, :]
    mixed = (switch & pc).any(axis=2) & (switch & ~pc).any(axis=2)      # (P, P)
    proxy = np.outer((~pc & acc).sum(axis=1) / n, lams) + np.outer((pc & ~acc).sum(axis=1) / n, 1 - lams)
    fixed = select_policy(np.zeros(n_pol), coverages)
    per_level = [_level_costs(ctx, taus, lams, level) for level in levels]
    n_lev = len(levels)

    def grid(*sizes):  # level-major index arrays for a table
        return np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")

    lv, lq, lp = (a.ravel() for a in grid(n_lev, n_lam, n_pol))
    stack = lambda name: np.stack([getattr(lc, name) for lc in per_level])  # noqa: E731
    lower, upper, mean = stack("lower"), stack("upper"), stack("mean")       # (L, P, Q)
    hh, ll_ = stack("h"), stack("l")                                         # (L, P, 2)
    nat_lo, nat_hi = stack("natural_lower"), stack("natural_upper")
    d_plus, nat_d = stack("d_plus"), stack("natural_d_plus")                 # (L, P, P, Q)
    level_names = np.asarray(levels, dtype=object)
    costs = pd.DataFrame({
        "level": level_names[lv], "lam": lams[lq], "policy": lp, "threshold": taus[lp], "coverage": coverages[lp],
        "lower": lower[lv, lp, lq], "upper": upper[lv, lp, lq], "observed": j_obs[lp, lq],
        "mean": mean[lv, lp, lq], "h_lower": hh[lv, lp, 0], "h_upper": hh[lv, lp, 1],
        "l_lower": ll_[lv, lp, 0], "l_upper": ll_[lv, lp, 1], "natural_lower": nat_lo[lv, lp, lq],
        "natural_upper": nat_hi[lv, lp, lq], "natural_observed": n_obs[lp, lq],
    })
    jj, oo = np.nonzero(~np.eye(n_pol, dtype=bool))
    cv, cq, cpair = (a.ravel() for a in grid(n_lev, n_lam, len(jj)))
    cj, co = jj[cpair], oo[cpair]
    d_shared = d_plus[cv, cj, co, cq]
    d_sep = upper[cv, cj, cq] - lower[cv, co, cq]
    nd_shared = nat_d[cv, cj, co, cq]
    nd_sep = nat_hi[cv, cj, cq] - nat_lo[cv, co, cq]
    comparisons = pd.DataFrame({
        "level": level_names[cv], "lam": lams[cq], "policy": cj, "other": co, "mixed": mixed[cj, co],
        "d_shared": d_shared, "d_separate": d_sep,
        "certified_shared": d_shared < -STRICT, "certified_separate": d_sep < -STRICT,
        "natural_d_shared": nd_shared, "natural_d_separate": nd_sep,
        "natural_certified_shared": nd_shared < -STRICT, "natural_certified_separate": nd_sep < -STRICT,
    })
    regret_bound = np.maximum(d_plus.max(axis=2), 0.0)                        # (L, P, Q): R_j
    mm = select_policies(np.moveaxis(regret_bound, 1, -1), coverages)         # (L, Q)
    fm = select_policies(np.moveaxis(mean, 1, -1), coverages)
    px = select_policies(proxy.T, coverages)                                  # (Q,)
    sv, sq = (a.ravel() for a in grid(n_lev, n_lam))
    realised = j_obs.T                                                        # (Q, P)
    best = realised.min(axis=1)
    m_cost, f_cost = realised[sq, mm[sv, sq]], realised[sq, fm[sv, sq]]
    diff = m_cost - f_cost
    selection = pd.DataFrame({
        "level": level_names[sv], "lam": lams[sq], "minimax_policy": mm[sv, sq], "mean_policy": fm[sv, sq],
        "proxy_policy": px[sq], "fixed_policy": fixed, "max_regret": regret_bound[sv, mm[sv, sq], sq],
        "minimax_cost": m_cost, "mean_cost": f_cost, "best_cost": best[sq],
        "minimax_regret": m_cost - best[sq], "mean_regret": f_cost - best[sq],
        "proxy_regret": realised[sq, px[sq]] - best[sq], "fixed_regret": realised[sq, fixed] - best[sq],
        "outcome": np.where(diff < -TIE, "lower", np.where(diff > TIE, "higher", "equal")),
    })
    return {"costs": costs, "comparisons": comparisons, "selection": selection}
