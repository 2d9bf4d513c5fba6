"""Information levels of Definition 1 and the classwise extremes of linear event counts over them.

Fix a class and let A be its u clean records that are correct and accepted. Every event count used in
Section 4 (H, L, the policy costs and their differences) is a weighted count of A's perturbed partners:
``c_alpha * alpha + c_beta * beta``, where alpha counts partners among a set of *wrong* perturbed records
(a "wrong band") and beta partners among a set of *correct* perturbed records (a "correct band").

Write x for the number of A-records matched to correct perturbed records. Given x, the correct partners
are any x of the b correct perturbed records, and the wrong partners are any u - x records of a wrong
pool:

* I0 (marginal records): x in [max(0, u-(n-b)), min(u, b)], the pool is all n-b wrong perturbed records;
* Ik (+ correct–correct counts k): x in [max(0, u-h), min(u, k)], the pool is the h wrong perturbed
  records of the correct→wrong block, which may be any h of them (Appendix A.4);
* I5 (+ all five state counts): as Ik, but the pool must leave a wrong–wrong block with the observed s/w
  split (Appendix A.6); its band content ranges over [cmin, cmax] from `wrongblock.mark_range`.

The correct-record symmetry (Appendix A.3) makes the choices of x, of the correct partners and of the
wrong partners independent, so each extreme is a maximum over x of the best alpha plus the best beta.
Both are piecewise linear in x, so evaluating the breakpoints is exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.paired.identification.cell import Cell
from pipeline.paired.identification.states import ClassCounts, class_counts
from pipeline.paired.identification.wrongblock import hblock_probabilities, mark_range

LEVELS = ("I0", "Ik", "I5")


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"unknown information level {level!r}; valid levels are {list(LEVELS)}")
    return level


@dataclass(frozen=True)
class CellContext:
    """A cell with its observed classwise counts and the accepted correct clean records A (per class u)."""

    cell: Cell
    counts: ClassCounts
    clean_accept: np.ndarray   # Z per record
    u: np.ndarray              # |A| per class

    @property
    def wrong_pert(self) -> np.ndarray:
        return ~self.cell.pert_correct


def context(cell: Cell, clean_threshold: float) -> CellContext:
    clean_accept = cell.clean_max >= clean_threshold
    return CellContext(cell=cell, counts=class_counts(cell), clean_accept=clean_accept,
                       u=cell.per_class(cell.clean_correct & clean_accept))


@dataclass(frozen=True)
class Band:
    """Per-class band contents at one level, shape (C,) or (B, C) for B bands: the correct-band size, and
    the range [cmin, cmax] of the number of wrong-band records inside the wrong pool."""

    b_correct: np.ndarray
    cmin: np.ndarray
    cmax: np.ndarray


def x_range(ctx: CellContext, level: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xlo, xhi, wrong-pool size) per class at `level`."""
    c, u = ctx.counts, ctx.u
    if level == "I0":
        return np.maximum(0, u - (c.n - c.b)), np.minimum(u, c.b), c.n - c.b
    return np.maximum(0, u - c.h), np.minimum(u, c.k), c.h


def _per_class_stack(ctx: CellContext, masks: np.ndarray) -> np.ndarray:
    """Per-class counts for each row of a (B, N) mask stack, shape (B, C)."""
    n_bands, n_cls = masks.shape[0], ctx.cell.n_classes
    keys = (np.arange(n_bands)[:, None] * n_cls + ctx.cell.cls[None, :])[masks]
    return np.bincount(keys, minlength=n_bands * n_cls).reshape(n_bands, n_cls).astype(np.int64)


def band(ctx: CellContext, wrong_mask: np.ndarray, correct_mask: np.ndarray, level: str) -> Band:
    """Band contents for records flagged by `wrong_mask` (wrong perturbed) and `correct_mask` (correct
    perturbed); masks of shape (N,) or (B, N) for B bands at once."""
    cell, c = ctx.cell, ctx.counts
    single = np.ndim(wrong_mask) == 1
    wrong_mask, correct_mask = np.atleast_2d(wrong_mask), np.atleast_2d(correct_mask)
    b_wrong = _per_class_stack(ctx, wrong_mask & ctx.wrong_pert)
    b_correct = _per_class_stack(ctx, correct_mask & cell.pert_correct)
    if level == "I0":
        cmin = cmax = b_wrong
    else:
        n_wrong = c.n - c.b
        cmin, cmax = np.maximum(0, c.h - (n_wrong - b_wrong)), np.minimum(c.h, b_wrong)
    if level == "I5":
        # Only classes with both a correct→wrong and a wrong–wrong block, and a mixed band, can differ from Ik.
        mixed = (b_wrong > 0) & (b_wrong < c.n - c.b)
        pending = np.flatnonzero((c.h > 0) & (c.s + c.w > 0) & mixed.any(axis=0))
        for y, (cw_labels, pw_index) in _wrong_records(ctx, pending):
            pw_labels = cell.pert_pred[pw_index]
            for i in np.flatnonzero(mixed[:, y]):
                lo, hi = mark_range(cw_labels, pw_labels, wrong_mask[i, pw_index], c.s[y], c.w[y])
                cmin[i, y], cmax[i, y] = b_wrong[i, y] - hi, b_wrong[i, y] - lo
    if single:
        return Band(b_correct[0], cmin[0], cmax[0])
    return Band(b_correct, cmin, cmax)


def _wrong_records(ctx: CellContext, classes: np.ndarray):
    """(class, (clean wrong labels, perturbed wrong record indices)) for the given classes."""
    cell = ctx.cell
    clean_wrong = ~cell.clean_correct
    wanted = np.zeros(cell.n_classes, dtype=bool)
    wanted[classes] = True
    sel = np.flatnonzero(wanted[cell.cls] & (clean_wrong | ctx.wrong_pert))
    sel = sel[np.argsort(cell.cls[sel], kind="stable")]
    bounds = np.searchsorted(cell.cls[sel], classes), np.searchsorted(cell.cls[sel], classes, side="right")
    for y, start, stop in zip(classes, *bounds):
        idx = sel[start:stop]
        yield y, (cell.clean_pred[idx[clean_wrong[idx]]], idx[ctx.wrong_pert[idx]])


def extremes(ctx: CellContext, bnd: Band, level: str, c_alpha, c_beta) -> tuple[np.ndarray, np.ndarray]:
    """Per-class [min, max] of c_alpha * alpha + c_beta * beta over Pi(level).

    Band fields have shape (C,) or (B, C); `c_alpha`, `c_beta` are scalars or 1-d arrays of Q weights.
    Results have shape band.shape for scalar weights, else (Q,) + band.shape.
    """
    c, u = ctx.counts, ctx.u
    xlo, xhi, pool = x_range(ctx, level)
    bc, cmin, cmax = bnd.b_correct, bnd.cmin, bnd.cmax
    x = np.clip(np.stack(np.broadcast_arrays(xlo, xhi, u - cmax, u - pool + cmin, bc, c.b - bc)), xlo, xhi)
    a_hi = np.minimum(u - x, cmax)
    a_lo = np.maximum(0, u - x - (pool - cmin))
    b_hi = np.minimum(x, bc)
    b_lo = np.maximum(0, x - (c.b - bc))
    feats = np.stack([a_hi, a_lo, b_hi, b_lo]).reshape(4, -1).astype(float)
    ca, cb = np.broadcast_arrays(np.atleast_1d(np.asarray(c_alpha, dtype=float)),
                                 np.atleast_1d(np.asarray(c_beta, dtype=float)))
    ca_pos, ca_neg, cb_pos, cb_neg = np.maximum(ca, 0), np.maximum(-ca, 0), np.maximum(cb, 0), np.maximum(-cb, 0)
    # max: positive weights take the largest count, negative ones the smallest; min: the reverse.
    # einsum keeps these tiny products off multithreaded BLAS, whose spin-up costs more than the work.
    shape = (len(ca),) + x.shape
    top = np.einsum("qf,fm->qm", np.stack([ca_pos, -ca_neg, cb_pos, -cb_neg], axis=1), feats).reshape(shape).max(axis=1)
    bottom = np.einsum("qf,fm->qm", np.stack([-ca_neg, ca_pos, -cb_neg, cb_pos], axis=1), feats).reshape(shape).min(axis=1)
    if np.ndim(c_alpha) == 0 and np.ndim(c_beta) == 0:
        return bottom[0], top[0]
    return bottom, top


def partner_probability(ctx: CellContext, level: str) -> np.ndarray:
    """Per perturbed record, the probability that its clean partner lies in A under the uniform
    distribution over Pi(level) (the feasible-mean rule of Appendix D; at I0 the independent value).

    The uniform distribution is invariant under permuting clean correct records among themselves, so a
    partner in the correct→wrong or correct–correct block lies in A with probability u/a.
    """
    cell, c = ctx.cell, ctx.counts
    cls = cell.cls
    if level == "I0":
        return (ctx.u / c.n)[cls]
    with np.errstate(invalid="ignore", divide="ignore"):
        in_a = np.where(c.a > 0, ctx.u / c.a, 0.0)
        p_cc = np.where(c.b > 0, c.k / c.b, 0.0)
        p_hw = np.where(c.n > c.b, c.h / (c.n - c.b), 0.0)
    block = np.where(cell.pert_correct, p_cc[cls], p_hw[cls])
    if level == "I5":
        pending = np.flatnonzero((c.h > 0) & (c.s + c.w > 0) & (ctx.u > 0))
        for y, (cw_labels, pw_index) in _wrong_records(ctx, pending):
            block[pw_index] = hblock_probabilities(cw_labels, cell.pert_pred[pw_index], c.s[y], c.w[y])
    return in_a[cls] * block
