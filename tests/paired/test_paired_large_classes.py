"""Five-state (I5) quantities on classes too large to enumerate (built so that the five-state counts bind), against an independent integer program
over the whole within-class permutation matrix (scipy's HiGHS MILP), and the exact I5 feasible mean on
wrong-heavy classes against enumeration."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import Bounds, LinearConstraint, milp

from pipeline.paired import cell_bounds, difference_bound, policy_cost_bounds
from pipeline.paired.identification.wrongblock import hblock_probabilities, mark_range


def _class_records(rng, n, p=(0.35, 0.1, 0.35, 0.05, 0.15)):
    """A class built state by state (h, r, s, w, k): clean errors mostly say 1 and persist (s), correct
    records mostly fail to 2 or 3 (h); perturbed 1s are mostly accepted, 2s and 3s mostly rejected."""
    st = rng.choice(5, n, p=p)
    cp = np.where(np.isin(st, [1, 2, 3]), np.where(rng.random(n) < 0.9, 1, 2), 0)
    pp = np.where(st == 0, rng.choice([1, 2, 3], n, p=[0.1, 0.45, 0.45]), 0)
    pp = np.where(st == 2, cp, pp)
    pp = np.where(st == 3, np.where(cp == 1, rng.choice([2, 3], n), 1), pp)
    cs = np.round(rng.uniform(0.4, 1.0, n), 1)
    accept = rng.random(n) < np.where(pp == 1, 0.8, 0.2)
    ps = np.where(accept, rng.choice([0.7, 0.8, 0.9], n), rng.choice([0.3, 0.4, 0.5], n))
    return pd.DataFrame(dict(y=0, clean_pred=cp, clean_maxprob=cs, clean_trueprob=np.where(cp == 0, cs, 0.0),
                             pert_pred=pp, pert_maxprob=ps, pert_trueprob=np.where(pp == 0, ps, 0.0)))


def _milp_extremes(df: pd.DataFrame, gain: np.ndarray) -> tuple[float, float]:
    """min and max of sum_ij x_ij gain_ij over permutation matrices x with the observed five-state counts."""
    n = len(df)
    y = df["y"].to_numpy()
    cc, pc = df["clean_pred"].to_numpy() == y, df["pert_pred"].to_numpy() == y
    same = df["clean_pred"].to_numpy()[:, None] == df["pert_pred"].to_numpy()[None, :]
    state = np.select([cc[:, None] & pc[None, :], cc[:, None] & ~pc[None, :], ~cc[:, None] & pc[None, :], same],
                      [4, 0, 1, 2], default=3)
    observed = np.diag(state)
    rows = [np.kron(np.eye(n)[i], np.ones(n)) for i in range(n)] + [np.kron(np.ones(n), np.eye(n)[j]) for j in range(n)]
    rhs = [1.0] * (2 * n)
    for s in range(5):
        rows.append((state == s).ravel().astype(float))
        rhs.append(float((observed == s).sum()))
    cons = LinearConstraint(np.array(rows), rhs, rhs)
    out = []
    for sign in (1, -1):
        res = milp(sign * gain.ravel().astype(float), constraints=cons, integrality=np.ones(n * n),
                   bounds=Bounds(0, 1))
        assert res.status == 0
        out.append(sign * res.fun)
    return out[0], out[1]


def _gain(df, tau0, taus, lam):
    """Per (clean i, perturbed j) weight of J_{tau_a} - J_{tau_b} (or J_tau for one threshold)."""
    y = df["y"].to_numpy()
    a_rec = (df["clean_pred"].to_numpy() == y) & (df["clean_maxprob"].to_numpy() >= tau0)
    pc = df["pert_pred"].to_numpy() == y
    s = df["pert_maxprob"].to_numpy()
    cost = lambda t: lam * (~pc & (s >= t)) + (1 - lam) * (pc & (s < t))  # noqa: E731
    per_j = cost(taus[0]) - (cost(taus[1]) if len(taus) > 1 else 0)
    return a_rec[:, None] * per_j[None, :]


@pytest.mark.parametrize("seed,n", [(0, 30), (1, 50), (3, 50)])
def test_i5_extremes_match_permutation_milp(seed, n):
    rng = np.random.default_rng(seed)
    df = _class_records(rng, n)
    tau0 = 0.6
    # H at I5 (the accepted-error transition), on a class of up to 50 records; here strictly inside Ik.
    table = cell_bounds(df, tau0).set_index(["target", "level"])
    h5, hk = table.loc[("H", "I5")], table.loc[("H", "Ik")]
    lo, hi = _milp_extremes(df, _gain(df, tau0, [tau0], 1.0))
    assert (h5["lower"] * n, h5["upper"] * n) == pytest.approx((lo, hi))
    assert h5["upper"] - h5["lower"] < hk["upper"] - hk["lower"]
    # Single-policy interval (exact lower end, Lemma 1 upper end) and D+ in both directions at I5.
    lam = 0.3
    table = policy_cost_bounds(df, tau0, [0.5, 0.8], lam, "I5")
    for j, tau in enumerate([0.5, 0.8]):
        lo, hi = _milp_extremes(df, _gain(df, tau0, [tau], lam))
        assert (table["lower"].iloc[j] * n, table["upper"].iloc[j] * n) == pytest.approx((lo, hi))
    for pair in ([0.8, 0.5], [0.5, 0.8]):
        _, hi = _milp_extremes(df, _gain(df, tau0, pair, lam))
        assert difference_bound(df, tau0, pair[0], pair[1], lam, "I5") * n == pytest.approx(hi)


def test_mark_range_against_milp():
    rng = np.random.default_rng(7)
    for _ in range(5):
        df = _class_records(rng, 40)
        y = df["y"].to_numpy()
        cc, pc = df["clean_pred"].to_numpy() == y, df["pert_pred"].to_numpy() == y
        marks = rng.random(len(df)) < 0.5
        both = ~cc & ~pc
        s = int((both & (df.clean_pred == df.pert_pred)).sum())
        w = int(both.sum()) - s
        lo, hi = mark_range(df.clean_pred.to_numpy()[~cc], df.pert_pred.to_numpy()[~pc], marks[~pc], s, w)
        # marked wrong perturbed records inside the wrong–wrong block: partner of j is a clean wrong record.
        gain = (~cc)[:, None] & (~pc & marks)[None, :]
        assert (lo, hi) == pytest.approx(_milp_extremes(df, gain))


def _enumerated_outside_share(clean_wrong, pert_wrong, n_correct_clean, n_correct_pert, k):
    """Brute force: share of feasible bijections (observed five-state counts) where each wrong perturbed
    record is matched to a clean correct record."""
    clean = [None] * n_correct_clean + list(clean_wrong)
    pert = [None] * n_correct_pert + list(pert_wrong)
    n = len(clean)
    assert len(pert) == n
    def states(perm):
        out = {"k": 0, "s": 0, "w": 0}
        for i, j in enumerate(perm):
            c, p = clean[i], pert[j]
            if c is None and p is None:
                out["k"] += 1
            elif c is not None and p is not None:
                out["s" if c == p else "w"] += 1
        return out
    ident = states(range(n))
    hits, total = np.zeros(len(pert_wrong)), 0
    for perm in itertools.permutations(range(n)):
        if states(perm) != ident:
            continue
        total += 1
        for i, j in enumerate(perm):
            if j >= n_correct_pert and clean[i] is None:
                hits[j - n_correct_pert] += 1
    return hits / total, ident


@pytest.mark.parametrize("clean_wrong,pert_wrong", [
    ((1, 1, 2, 3), (1, 2, 2, 3, 4)),
    ((1, 2, 2), (1, 1, 2, 3, 3)),
    ((3, 3, 3), (3, 3, 1, 2)),
])
def test_hblock_probabilities_equal_enumeration(clean_wrong, pert_wrong):
    n = 8
    n_cc, n_pc = n - len(clean_wrong), n - len(pert_wrong)
    want, ident = _enumerated_outside_share(clean_wrong, pert_wrong, n_cc, n_pc, None)
    got = hblock_probabilities(np.array(clean_wrong), np.array(pert_wrong), ident["s"], ident["w"])
    np.testing.assert_allclose(got, want, atol=1e-12)
