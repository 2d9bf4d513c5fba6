"""Speed of the paired-evaluation analysis: throughputs and ratios measured in this one process run.

1. Analytic bounds (H, L, dM_k at I0 and Ik) on 10,000 cells of 500 records (200 classes of 2-3 records):
   the pipeline vs a direct per-class transcription of Eqs. (4)-(7) with Appendix A.10's ratio bisection.
2. The full policy analysis (5 policies x 11 weights x 3 levels, H at I5 exact) on 450 cells of 500 records
   with 2-3 records per class (target: under 60 s; the paper reports 167 s of CPU for its analysis), vs
   per-class enumeration of every bijection (the paper's method) on a subsample.
3. The same analysis on cells with 50 records per class (10 classes), and H at I5 on those cells vs an
   integer program over the whole permutation matrix (scipy HiGHS).

    python perf/bench_paired.py                 # full sizes
    python perf/bench_paired.py --scale 0.1     # a quick look
    python perf/bench_paired.py --quick         # --scale 0.001: seconds
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from scipy.optimize import Bounds, LinearConstraint, milp

from pipeline.paired import cell_bounds, policy_analysis
from pipeline.paired.identification.thresholds import POLICY_COVERAGES

LAMS = np.round(np.linspace(0.0, 1.0, 11), 10)
QUICK_SCALE = 0.001


def synthetic_cell(rng: np.random.Generator, n_classes: int, sizes, n_labels: int) -> pd.DataFrame:
    """A cell built state by state: clean accuracy ~0.8, perturbed ~0.55, wrong labels drawn from a
    Zipf-like law over the other classes (so persistent and changed wrong answers both occur)."""
    y = np.repeat(np.arange(n_classes), rng.choice(sizes, n_classes))
    n = len(y)
    weights = 1.0 / np.arange(1, n_labels) ** 1.2
    def wrong():
        return (y + 1 + rng.choice(n_labels - 1, n, p=weights / weights.sum())) % n_labels
    c_ok = rng.random(n) < 0.8
    p_ok = rng.random(n) < np.where(c_ok, 0.65, 0.2)
    clean_pred = np.where(c_ok, y, wrong())
    pert_pred = np.where(p_ok, y, np.where(~c_ok & (rng.random(n) < 0.6), clean_pred, wrong()))
    cols = {"y": y, "clean_pred": clean_pred, "pert_pred": pert_pred}
    for side, pred in (("clean", clean_pred), ("pert", pert_pred)):
        smax = np.round(rng.beta(4, 1.5, n), 3)
        cols[f"{side}_maxprob"] = smax
        cols[f"{side}_trueprob"] = np.where(pred == y, smax, np.round(smax * rng.random(n) * 0.9, 3))
    return pd.DataFrame(cols)


def thresholds(df: pd.DataFrame) -> tuple[float, np.ndarray]:
    scores = np.sort(df["clean_maxprob"].to_numpy())[::-1]
    ranks = [max(1, int(np.floor(q * len(scores) + 0.5))) for q in POLICY_COVERAGES]
    taus = scores[np.array(ranks) - 1]
    return float(taus[2]), taus


# ---------------------------------------------------------------- reference: per-class transcription
def reference_analytic(df: pd.DataFrame, tau: float) -> dict:
    """Eqs. (4)-(7), Algorithm 1 and A.10's bisection, one class at a time in plain Python."""
    n_total = len(df)
    h0 = [0, 0]; hk = [0, 0]; l0 = [0, 0]; lk = [0, 0]; d = [0.0, 0.0]; big_k = 0
    per_class = []
    for _, g in df.groupby("y"):
        n = len(g)
        cc = (g.clean_pred == g.y).to_numpy(); pc = (g.pert_pred == g.y).to_numpy()
        z = (g.clean_maxprob >= tau).to_numpy(); zp = (g.pert_maxprob >= tau).to_numpy()
        a, b, k = int(cc.sum()), int(pc.sum()), int((cc & pc).sum())
        u, t, v = int((cc & z).sum()), int((~pc & zp).sum()), int((pc & ~zp).sum())
        h = a - k
        h0[0] += max(0, u + t - n); h0[1] += min(u, t)
        hk[0] += max(0, h - (a - u) - ((n - b) - t)); hk[1] += min(u, t, h)
        l0[0] += max(0, u + v - n); l0[1] += min(u, v)
        lk[0] += max(0, k - (a - u) - (b - v)); lk[1] += min(u, v, k)
        x = sorted(g.clean_trueprob.to_numpy()[cc]); zz = sorted(g.pert_trueprob.to_numpy()[pc])
        if k:
            d[0] += sum(x[:k]) - sum(zz[b - k:]); d[1] += sum(x[a - k:]) - sum(zz[:k])
        big_k += k
        options = {kk: (sum(x[:kk]) - sum(zz[b - kk:]), sum(x[a - kk:]) - sum(zz[:kk]))
                   for kk in range(max(0, a + b - n), min(a, b) + 1)}
        per_class.append(options)

    def bisect(sign: int) -> float:
        if all(max(o) == 0 for o in per_class):
            return float("nan")
        lo, hi = -1.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            best = sum(min(sign * (o[kk][0 if sign > 0 else 1]) - sign * mid * kk for kk in o) for o in per_class)
            # sign=+1: some K>0 choice has ratio < mid iff min sum(D - mid k) < 0
            if best < -1e-15:
                hi, lo = (mid, lo) if sign > 0 else (hi, mid)
            else:
                lo, hi = (mid, hi) if sign > 0 else (lo, mid)
        return (lo + hi) / 2

    nan = float("nan")
    return {"H": {"I0": [x / n_total for x in h0], "Ik": [x / n_total for x in hk]},
            "L": {"I0": [x / n_total for x in l0], "Ik": [x / n_total for x in lk]},
            "dM_k": {"I0": [bisect(+1), bisect(-1)], "Ik": [x / big_k for x in d] if big_k else [nan, nan]}}


def reference_policies(df: pd.DataFrame, tau0: float, taus: np.ndarray) -> dict:
    """Per-class enumeration of every bijection: lower, upper, mean of J_j and D+_jl at each level."""
    n_total = len(df)
    out = {lv: {"lower": 0.0, "upper": 0.0, "mean": 0.0, "d_plus": 0.0} for lv in ("I0", "Ik", "I5")}
    for _, g in df.groupby("y"):
        y = g.y.to_numpy(); cp = g.clean_pred.to_numpy(); pp = g.pert_pred.to_numpy()
        cc, pc = cp == y, pp == y
        a_rec = cc & (g.clean_maxprob.to_numpy() >= tau0)
        acc = g.pert_maxprob.to_numpy()[None, :] >= taus[:, None]
        perms = np.array(list(itertools.permutations(range(len(g)))))
        rows = np.broadcast_to(np.arange(len(g)), perms.shape)
        same = cp[rows] == pp[perms]
        states = np.stack([(cc[rows] & pc[perms]).sum(1), (~cc[rows] & ~pc[perms] & same).sum(1),
                           (~cc[rows] & ~pc[perms] & ~same).sum(1)], axis=1)
        h = (a_rec[rows][:, None, :] & ~pc[perms][:, None, :] & acc[:, perms].transpose(1, 0, 2)).sum(2)
        l_ = (a_rec[rows][:, None, :] & pc[perms][:, None, :] & ~acc[:, perms].transpose(1, 0, 2)).sum(2)
        cost = LAMS[None, :, None] * h[:, None, :] + (1 - LAMS)[None, :, None] * l_[:, None, :]
        ident = (perms == np.arange(len(g))).all(1)
        for level, mask in (("I0", np.ones(len(perms), bool)), ("Ik", states[:, 0] == states[ident, 0]),
                            ("I5", (states == states[ident]).all(1))):
            c = cost[mask]
            out[level]["lower"] = out[level]["lower"] + c.min(0).T
            out[level]["upper"] = out[level]["upper"] + c.max(0).T
            out[level]["mean"] = out[level]["mean"] + c.mean(0).T
            out[level]["d_plus"] = out[level]["d_plus"] + (c[:, :, :, None] - c[:, :, None, :]).max(0).transpose(1, 2, 0)
    return {lv: {k: v / n_total for k, v in d.items()} for lv, d in out.items()}


def milp_h_i5(df: pd.DataFrame, tau: float) -> tuple[float, float]:
    """H at I5 via an integer program over each class's whole permutation matrix (the independent oracle)."""
    lo = hi = 0.0
    for _, g in df.groupby("y"):
        n = len(g)
        y = g.y.to_numpy(); cp = g.clean_pred.to_numpy(); pp = g.pert_pred.to_numpy()
        cc, pc = cp == y, pp == y
        state = np.select([cc[:, None] & pc[None, :], cc[:, None] & ~pc[None, :], ~cc[:, None] & pc[None, :],
                           cp[:, None] == pp[None, :]], [4, 0, 1, 2], default=3)
        gain = ((cc & (g.clean_maxprob.to_numpy() >= tau))[:, None] & (~pc & (g.pert_maxprob.to_numpy() >= tau))[None, :])
        rows = [np.kron(np.eye(n)[i], np.ones(n)) for i in range(n)] + [np.kron(np.ones(n), np.eye(n)[j]) for j in range(n)]
        rhs = [1.0] * (2 * n)
        for s in range(5):
            rows.append((state == s).ravel().astype(float)); rhs.append(float((np.diag(state) == s).sum()))
        cons = LinearConstraint(np.array(rows), rhs, rhs)
        for sign in (1, -1):
            res = milp(sign * gain.ravel().astype(float), constraints=cons, integrality=np.ones(n * n), bounds=Bounds(0, 1))
            if sign == 1:
                lo += res.fun
            else:
                hi += -res.fun
    return lo / len(df), hi / len(df)


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    """The three measurements, each against its reference in this run."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the cell counts to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help=f"--scale {QUICK_SCALE} (seconds)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    scale = QUICK_SCALE if args.quick else args.scale
    n_analytic, n_policy, n_big = (max(2, int(round(c * scale))) for c in (10_000, 450, 45))

    # warm-up: numba compilation / cache load and imports are not part of the measured runs
    warm = synthetic_cell(rng, 10, (50,), 10)
    policy_analysis(warm, *thresholds(warm))

    print(f"1. analytic bounds (H, L, dM_k at I0 and Ik): {n_analytic} cells x 500 records (200 classes of 2-3)")
    wall = cpu = 0.0
    sample: list[tuple[pd.DataFrame, float]] = []
    for start in range(0, n_analytic, 500):           # generated in chunks to bound memory; only bounds are timed
        cells = [synthetic_cell(rng, 200, (2, 3), 200).iloc[:500] for _ in range(min(500, n_analytic - start))]
        taus = [thresholds(c)[0] for c in cells]
        _, w, c = timed(lambda: [cell_bounds(x, t, levels=("I0", "Ik")) for x, t in zip(cells, taus)])
        wall, cpu = wall + w, cpu + c
        sample += list(zip(cells, taus))[: max(0, 20 - len(sample))]
    n_ref = len(sample)
    ref, rwall, _ = timed(lambda: [reference_analytic(c, t) for c, t in sample])
    diff = 0.0
    for (c, t), r in zip(sample, ref):
        tab = cell_bounds(c, t, levels=("I0", "Ik")).set_index(["target", "level"])
        for target, levels in r.items():
            for level, (lo, hi) in levels.items():
                got = tab.loc[(target, level), ["lower", "upper"]].to_numpy(float)
                diff = max(diff, float(np.nanmax(np.abs(got - [lo, hi]), initial=0.0)))
    per_cell, ref_per_cell = wall / n_analytic, rwall / n_ref
    print(f"   pipeline: {wall:.1f} s wall, {cpu:.1f} s CPU, {n_analytic / wall:.0f} cells/s")
    print(f"   reference (per-class loops + bisection), {n_ref} cells: {ref_per_cell * 1e3:.1f} ms/cell; "
          f"speed-up x{ref_per_cell / per_cell:.1f}; max |difference| {diff:.1e}")

    print(f"2. policy analysis (5 policies x 11 weights x 3 levels, H at I5 exact): {n_policy} cells x 500 records, 2-3 per class")
    cells = [synthetic_cell(rng, 200, (2, 3), 200).iloc[:500] for _ in range(n_policy)]
    ths = [thresholds(c) for c in cells]
    results, wall, cpu = timed(lambda: [policy_analysis(c, t0, ts, lams=LAMS) for c, (t0, ts) in zip(cells, ths)])
    n_ref = min(20, n_policy)
    ref, rwall, _ = timed(lambda: [reference_policies(c, t0, ts) for c, (t0, ts) in zip(cells[:n_ref], ths[:n_ref])])
    diff = 0.0
    for res, r in zip(results[:n_ref], ref):
        costs = res["costs"]
        for level in ("I0", "Ik", "I5"):
            part = costs[costs.level == level]
            for name in ("lower", "upper", "mean"):
                diff = max(diff, float(np.abs(part[name].to_numpy().reshape(len(LAMS), 5).T - r[level][name]).max()))
            comps = res["comparisons"]
            shared = comps[comps.level == level]["d_shared"].to_numpy().reshape(len(LAMS), 20)
            jj, oo = np.nonzero(~np.eye(5, dtype=bool))
            diff = max(diff, float(np.abs(shared - r[level]["d_plus"][jj, oo, :].T).max()))
    print(f"   pipeline: {wall:.1f} s wall, {cpu:.1f} s CPU for {n_policy} cells ({wall / n_policy * 1e3:.0f} ms/cell); "
          f"target < 60 s for 450 cells: {'met' if wall * 450 / n_policy < 60 else 'NOT met'}")
    print(f"   reference (enumerate every bijection per class), {n_ref} cells: {rwall / n_ref * 1e3:.0f} ms/cell; "
          f"speed-up x{(rwall / n_ref) / (wall / n_policy):.1f}; max |difference| {diff:.1e}")

    print(f"3. policy analysis on {n_big} cells of 500 records with 50 records per class (10 classes)")
    cells = [synthetic_cell(rng, 10, (50,), 10) for _ in range(n_big)]
    ths = [thresholds(c) for c in cells]
    _, wall, cpu = timed(lambda: [policy_analysis(c, t0, ts, lams=LAMS) for c, (t0, ts) in zip(cells, ths)])
    print(f"   pipeline: {wall:.1f} s wall, {cpu:.1f} s CPU ({wall / n_big * 1e3:.0f} ms/cell)")
    n_ref = min(3, n_big)
    mine, mwall, _ = timed(lambda: [cell_bounds(c, t0, levels=("I5",)).set_index("target").loc["H", ["lower", "upper"]]
                                    .to_numpy(float) for c, (t0, _) in zip(cells[:n_ref], ths[:n_ref])])
    ref, rwall, _ = timed(lambda: [milp_h_i5(c, t0) for c, (t0, _) in zip(cells[:n_ref], ths[:n_ref])])
    diff = max(float(np.abs(np.asarray(m) - np.asarray(r)).max()) for m, r in zip(mine, ref))
    print(f"   H at I5 on {n_ref} cells: pipeline {mwall / n_ref * 1e3:.1f} ms/cell, permutation-matrix MILP "
          f"{rwall / n_ref * 1e3:.0f} ms/cell; speed-up x{rwall / mwall:.0f}; max |difference| {diff:.1e}")


if __name__ == "__main__":
    main()
