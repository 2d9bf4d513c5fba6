"""Brute-force oracle for the paired-evaluation bounds: enumerate every within-class bijection.

Independent of the library's formulas: it only re-links records, recomputes states and events from
their definitions (Table 1, Table 2, Eq. 10) and takes extremes or means over the feasible sets of
Definition 1. Used on small random cells (classes of at most 5 or 6 records).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

LEVELS = ("I0", "Ik", "I5")


@dataclass
class ClassEnum:
    """Per class: one row per bijection; states (h, r, s, w, k) and arbitrary event columns."""

    states: np.ndarray      # (P, 5)
    observed: np.ndarray    # (5,)
    events: dict            # name -> (P,) array
    k_num: np.ndarray       # (P,) sum of M - M' over correct–correct pairs

    def feasible(self, level: str) -> np.ndarray:
        if level == "I0":
            return np.ones(len(self.states), dtype=bool)
        if level == "Ik":
            return self.states[:, 4] == self.observed[4]
        return (self.states == self.observed).all(axis=1)


def random_cell(rng: np.random.Generator, max_classes: int = 3, max_size: int = 5, n_labels: int = 4) -> pd.DataFrame:
    """A small random records table with ties, threshold-grid scores, shared wrong labels and single-record classes."""
    grid = np.round(np.arange(0.2, 1.01, 0.1), 2)
    n_classes = int(rng.integers(1, max_classes + 1))
    classes = rng.choice(n_labels, size=n_classes, replace=False)
    rows = []
    for y in classes:
        for _ in range(int(rng.integers(1, max_size + 1))):
            row = {"y": int(y)}
            for side, p_correct in (("clean", rng.uniform(0.3, 0.9)), ("pert", rng.uniform(0.1, 0.8))):
                correct = rng.random() < p_correct
                pred = int(y) if correct else int(rng.choice([c for c in range(n_labels) if c != y]))
                smax = float(rng.choice(grid))
                strue = smax if correct else float(rng.choice(grid[grid <= smax]) if rng.random() < 0.5 else 0.0)
                row.update({f"{side}_pred": pred, f"{side}_maxprob": smax, f"{side}_trueprob": strue})
            rows.append(row)
    order = rng.permutation(len(rows))
    return pd.DataFrame([rows[i] for i in order])


def enumerate_class(df: pd.DataFrame, events: dict) -> ClassEnum:
    """Enumerate all bijections of one class's records; `events[name](clean_rows, pert_rows) -> bool array`."""
    y = df["y"].to_numpy()
    cp, pp = df["clean_pred"].to_numpy(), df["pert_pred"].to_numpy()
    cc, pc = cp == y, pp == y
    n = len(df)
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    rows = np.broadcast_to(np.arange(n), perms.shape)
    c_ok, p_ok = cc[rows], pc[perms]
    same = cp[rows] == pp[perms]
    states = np.stack([
        (c_ok & ~p_ok).sum(1), (~c_ok & p_ok).sum(1), (~c_ok & ~p_ok & same).sum(1),
        (~c_ok & ~p_ok & ~same).sum(1), (c_ok & p_ok).sum(1),
    ], axis=1)
    ident = np.arange(n)[None]
    observed = np.stack([
        (cc & ~pc).sum(), (~cc & pc).sum(), (~cc & ~pc & (cp == pp)).sum(), (~cc & ~pc & (cp != pp)).sum(), (cc & pc).sum(),
    ])
    assert (states[(perms == ident).all(1)] == observed).all()
    m_clean, m_pert = df["clean_trueprob"].to_numpy(), df["pert_trueprob"].to_numpy()
    k_num = np.where(c_ok & p_ok, m_clean[rows] - m_pert[perms], 0.0).sum(1)
    ev = {name: fn(rows, perms).sum(1) for name, fn in events.items()}
    return ClassEnum(states=states, observed=observed, events=ev, k_num=k_num)


def enumerate_cell(records: pd.DataFrame, events: dict) -> list[ClassEnum]:
    out = []
    for _, g in records.groupby("y", sort=True):
        arrays = {c: g[c].to_numpy() for c in g.columns}
        out.append(enumerate_class(g.reset_index(drop=True), _bind(events, arrays)))
    return out


def _bind(events: dict, arrays: dict) -> dict:
    return {name: (lambda fn: (lambda r, p: fn(arrays, r, p)))(fn) for name, fn in events.items()}


def hl_events(tau: float, tau_p: float) -> dict:
    """H and L event indicators (Table 2) as functions of (class arrays, clean rows, perturbed rows)."""
    def h(a, r, p):
        y = a["y"]
        return ((a["clean_pred"][r] == y[r]) & (a["clean_maxprob"][r] >= tau)
                & (a["pert_pred"][p] != y[p]) & (a["pert_maxprob"][p] >= tau_p))

    def l(a, r, p):
        y = a["y"]
        return ((a["clean_pred"][r] == y[r]) & (a["clean_maxprob"][r] >= tau)
                & (a["pert_pred"][p] == y[p]) & (a["pert_maxprob"][p] < tau_p))

    return {"H": h, "L": l}


def policy_events(tau0: float, taus) -> dict:
    """Per-policy H_j and L_j indicators (Eq. 10)."""
    out = {}
    for j, tau in enumerate(taus):
        ev = hl_events(tau0, tau)
        out[f"H{j}"], out[f"L{j}"] = ev["H"], ev["L"]
    return out


def additive_range(classes: list[ClassEnum], values, level: str) -> tuple[float, float]:
    """[min, max] of a class-additive quantity (values(ClassEnum) -> (P,) array) over Pi(level)."""
    lo = hi = 0.0
    for ce in classes:
        v = values(ce)[ce.feasible(level)]
        lo, hi = lo + v.min(), hi + v.max()
    return lo, hi


def additive_mean(classes: list[ClassEnum], values, level: str) -> float:
    """Mean of a class-additive quantity under the uniform distribution over Pi(level) (a product of uniforms)."""
    return float(sum(values(ce)[ce.feasible(level)].mean() for ce in classes))


def ratio_range(classes: list[ClassEnum], level: str) -> tuple[float, float]:
    """[min, max] of dM_k = sum num / sum k over Pi(level) restricted to K > 0, via the product of
    per-class attainable (k, numerator) extremes; NaN when no feasible correspondence has K > 0."""
    per_class = []
    for ce in classes:
        f = ce.feasible(level)
        ks, nums = ce.states[f, 4], ce.k_num[f]
        per_class.append({int(k): (nums[ks == k].min(), nums[ks == k].max()) for k in np.unique(ks)})
    lo, hi = np.inf, -np.inf
    for combo in itertools.product(*[sorted(d) for d in per_class]):
        total = sum(combo)
        if total == 0:
            continue
        lo = min(lo, sum(d[k][0] for d, k in zip(per_class, combo)) / total)
        hi = max(hi, sum(d[k][1] for d, k in zip(per_class, combo)) / total)
    return (lo, hi) if np.isfinite(lo) else (float("nan"), float("nan"))


def policy_oracle(records: pd.DataFrame, tau0: float, taus, lams) -> dict:
    """Brute-force policy quantities per level (rates): J_j extremes and feasible means (P, Q), D+_jl
    (P, P, Q), the classwise H_j / L_j count intervals (C, P, 2) and the capped-interval maximum of Eq. (8)
    computed from those brute-force intervals (P, Q)."""
    taus, lams = np.asarray(taus, float), np.asarray(lams, float)
    classes = enumerate_cell(records, policy_events(tau0, taus))
    n_rec, n_pol = len(records), len(taus)
    u = [int(((g["clean_pred"] == g["y"]) & (g["clean_maxprob"] >= tau0)).sum()) for _, g in records.groupby("y", sort=True)]
    out = {}
    for level in LEVELS:
        lower = np.zeros((n_pol, len(lams)))
        upper, mean, capped = np.zeros_like(lower), np.zeros_like(lower), np.zeros_like(lower)
        d_plus = np.zeros((n_pol, n_pol, len(lams)))
        for ce, u_y in zip(classes, u):
            f = ce.feasible(level)
            h = np.stack([ce.events[f"H{j}"][f] for j in range(n_pol)], axis=1)     # (perms, P)
            l_ = np.stack([ce.events[f"L{j}"][f] for j in range(n_pol)], axis=1)
            cost = lams[None, :, None] * h[:, None, :] + (1 - lams)[None, :, None] * l_[:, None, :]  # (perms, Q, P)
            lower += cost.min(axis=0).T
            upper += cost.max(axis=0).T
            mean += cost.mean(axis=0).T
            d_plus += (cost[:, :, :, None] - cost[:, :, None, :]).max(axis=0).transpose(1, 2, 0)
            for j in range(n_pol):
                grid_h = np.arange(h[:, j].min(), h[:, j].max() + 1)
                grid_l = np.arange(l_[:, j].min(), l_[:, j].max() + 1)
                hh, ll = np.meshgrid(grid_h, grid_l, indexing="ij")
                ok = hh + ll <= u_y
                vals = lams[:, None, None] * hh + (1 - lams)[:, None, None] * ll
                capped[j] += np.where(ok, vals, -np.inf).reshape(len(lams), -1).max(axis=1)
        out[level] = {"lower": lower / n_rec, "upper": upper / n_rec, "mean": mean / n_rec,
                      "d_plus": d_plus / n_rec, "capped": capped / n_rec}
    return out
