"""Probe averaging and scoring rules at equal inference counts (Paired Evaluations, arXiv 2609.35583, Section
5.3, Appendix E.2): the mean true-class probability over a probe set (U over the Syn-B corruptions,
TTA18 over the natural transforms of `pipeline.perturb.tta`) and the adapted A3Rank alignment score,
Eq. (12).
"""
from __future__ import annotations

import numpy as np


def probe_average(probe_trueprobs, clean_trueprob=None) -> np.ndarray:
    """Mean true-class probability over the probes (n, A) (U over corruptions, TTA18 over transforms; the
    class is fixed to the clean prediction); with `clean_trueprob`, the untransformed image is added as an
    (A+1)-th term (Bahat and Shakhnarovich, 2020; Table 29)."""
    x = np.ascontiguousarray(probe_trueprobs, dtype=float)   # one summation order whatever the layout: ties stay ties
    if clean_trueprob is not None:
        x = np.column_stack([x, np.asarray(clean_trueprob, dtype=float)])
    return x.mean(1)


def modal_class(probe_proba) -> np.ndarray:
    """m: the modal arg-max class over the probes (n, A, C); count ties go to the class with the larger
    mean maximum probability among its voters, then to the lower class index (Appendix E.2). Each probe's
    own arg-max ties go to the lower class index."""
    v = np.asarray(probe_proba, dtype=float)
    top = v.argmax(2)                                                     # (n, A)
    n, _, c = v.shape
    votes = np.zeros((n, c))
    conf = np.zeros((n, c))
    rows = np.repeat(np.arange(n), v.shape[1])
    np.add.at(votes, (rows, top.ravel()), 1.0)
    np.add.at(conf, (rows, top.ravel()), v.max(2).ravel())
    tied = votes == votes.max(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(tied, conf / votes, -np.inf)
    return mean_conf.argmax(1)


def a3rank(clean_proba, probe_proba, clean_pred=None) -> np.ndarray:
    """The adapted A3Rank alignment score of Appendix E.2, Eq. (12), per image (low = high failure risk;
    use -A3 as a risk score):

        A3 = v0(p) - sum_{a in D} [max_c va(c) - va(p)] + sum_{a in S} [va(p) - va(m)]
                   + sum_{a in G} [va(p) - va(m) + v0(m) - v0(p)],

    with v0 (n, C) the clean probabilities, va (n, A, C) the probes', p the clean predicted class
    (`clean_pred`, default the clean arg-max, lower index on ties), m = `modal_class`, distractors
    D = {a: argmax va not in {p, m}}, supporters S = {a: argmax va = p}, dominators G = {a: argmax va = m}.
    When p = m, S = G and both sums vanish term by term, as the appendix states."""
    v0 = np.asarray(clean_proba, dtype=float)
    v = np.asarray(probe_proba, dtype=float)
    if v0.ndim != 2 or v.ndim != 3 or v.shape[0] != v0.shape[0] or v.shape[2] != v0.shape[1]:
        raise ValueError(f"clean_proba (n, C) and probe_proba (n, A, C) disagree: {v0.shape}, {v.shape}")
    rows = np.arange(len(v0))
    p = v0.argmax(1) if clean_pred is None else np.asarray(clean_pred, dtype=np.int64)
    m = modal_class(v)
    top = v.argmax(2)
    vp, vm = v[rows, :, p], v[rows, :, m]                                 # (n, A)
    distract = (top != p[:, None]) & (top != m[:, None])
    support = top == p[:, None]
    dominate = top == m[:, None]
    gap0 = (v0[rows, m] - v0[rows, p])[:, None]
    return (v0[rows, p]
            - np.where(distract, v.max(2) - vp, 0.0).sum(1)
            + np.where(support, vp - vm, 0.0).sum(1)
            + np.where(dominate, vp - vm + gap0, 0.0).sum(1))
