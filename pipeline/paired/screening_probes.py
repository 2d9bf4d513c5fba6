"""Probe sets and scoring rules at equal inference counts (papers/paired-evaluations.md, Section 5.3,
Appendices E.1 "Natural test-time augmentation" and E.2): the 18 fixed natural transformations of TTA18,
probe averaging and the adapted A3Rank alignment score, Eq. (12).

TTA18 (Appendix E.1, the fixed set of 18, applied to the original image before the model's own
preprocessing), in this order:

  hflip; shift_x+2, shift_x-2, shift_x+5, shift_x-5, shift_y+2, shift_y-2, shift_y+5, shift_y-5 (percent of
  the width or height); zoom1.1, zoom1.2 (central crop of 1/z of each side, resized back); rot+5, rot-5,
  rot+10, rot-10 (degrees); gamma0.8, gamma0.9; hflip_zoom1.1.

Choices where the appendix leaves room: shifts move content right/down for positive values by
round-half-up(fraction x side) whole pixels (so they are exact copies of pixels); positive rotations are
counter-clockwise as displayed (rows growing downwards), about the image centre; geometric transforms
sample bilinearly at pixel centres with half-sample symmetric reflect padding (scipy's "reflect",
PyTorch grid_sample's "reflection"), zoom is the continuous central crop (no integer crop rounding);
gamma maps x in [0, 1] to x ** gamma. uint8 images (N, H, W, C), this code base's image convention, are
rounded to the nearest integer and returned as uint8; float images in [0, 1] are returned as float.
"""
from __future__ import annotations

import math

import numpy as np

TTA18 = ("hflip", "shift_x+2", "shift_x-2", "shift_x+5", "shift_x-5", "shift_y+2", "shift_y-2", "shift_y+5",
         "shift_y-5", "zoom1.1", "zoom1.2", "rot+5", "rot-5", "rot+10", "rot-10", "gamma0.8", "gamma0.9",
         "hflip_zoom1.1")


def _reflect(idx: np.ndarray, size: int) -> np.ndarray:
    """Half-sample symmetric reflection of integer indices into [0, size): ... 1 0 | 0 1 ... size-1 | size-1 ..."""
    m = np.mod(idx, 2 * size)
    return np.where(m >= size, 2 * size - 1 - m, m)


def _sample(images: np.ndarray, src_y: np.ndarray, src_x: np.ndarray) -> np.ndarray:
    """Bilinear sampling of (N, H, W, C) float images at source pixel coordinates (H, W) (pixel centres at
    integers), with symmetric reflect padding."""
    h, w = images.shape[1:3]
    y0, x0 = np.floor(src_y), np.floor(src_x)
    fy, fx = (src_y - y0)[None, :, :, None], (src_x - x0)[None, :, :, None]
    y0, x0 = y0.astype(np.int64), x0.astype(np.int64)
    ya, yb = _reflect(y0, h), _reflect(y0 + 1, h)
    xa, xb = _reflect(x0, w), _reflect(x0 + 1, w)
    top = images[:, ya, xa] * (1 - fx) + images[:, ya, xb] * fx
    bottom = images[:, yb, xa] * (1 - fx) + images[:, yb, xb] * fx
    return top * (1 - fy) + bottom * fy


def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    yy, xx = np.meshgrid(np.arange(h, dtype=float), np.arange(w, dtype=float), indexing="ij")
    return yy, xx, (h - 1) / 2.0, (w - 1) / 2.0


def rotate(images: np.ndarray, degrees: float) -> np.ndarray:
    """Rotate (N, H, W, C) float images counter-clockwise (as displayed) by `degrees` about the centre."""
    yy, xx, cy, cx = _grid(*images.shape[1:3])
    t = math.radians(degrees)
    dx, dy = xx - cx, yy - cy
    # inverse map of the displayed counter-clockwise rotation (y axis pointing down)
    return _sample(images, cy + math.sin(t) * dx + math.cos(t) * dy, cx + math.cos(t) * dx - math.sin(t) * dy)


def zoom(images: np.ndarray, factor: float) -> np.ndarray:
    """Central crop of 1/factor of each side, resized back to the full size (bilinear)."""
    yy, xx, cy, cx = _grid(*images.shape[1:3])
    return _sample(images, cy + (yy - cy) / factor, cx + (xx - cx) / factor)


def shift(images: np.ndarray, percent: float, axis: str) -> np.ndarray:
    """Shift content right (axis "x") or down ("y") by round-half-up(percent/100 x side) pixels
    (negative: left/up), filling with the symmetric reflection."""
    h, w = images.shape[1:3]
    side = w if axis == "x" else h
    pixels = int(math.copysign(math.floor(abs(percent) / 100.0 * side + 0.5), percent))
    if axis == "x":
        return images[:, :, _reflect(np.arange(w) - pixels, w)]
    return images[:, _reflect(np.arange(h) - pixels, h)]


def tta_transform(images: np.ndarray, name: str) -> np.ndarray:
    """One TTA18 transformation (module docstring) of an (N, H, W, C) batch, uint8 or float in [0, 1]."""
    images = np.asarray(images)
    if images.ndim != 4:
        raise ValueError(f"expected an (N, H, W, C) batch, got shape {images.shape}")
    is_uint8 = images.dtype == np.uint8
    x = images.astype(float) / 255.0 if is_uint8 else images.astype(float)
    if name == "hflip":
        out = x[:, :, ::-1]
    elif name.startswith("shift_"):
        out = shift(x, float(name[7:]), name[6])
    elif name.startswith("zoom"):
        out = zoom(x, float(name[4:]))
    elif name.startswith("rot"):
        out = rotate(x, float(name[3:]))
    elif name.startswith("gamma"):
        out = np.clip(x, 0.0, 1.0) ** float(name[5:])
    elif name == "hflip_zoom1.1":
        out = zoom(x[:, :, ::-1], 1.1)
    else:
        raise ValueError(f"unknown transformation {name!r}; valid names: {', '.join(TTA18)}")
    if is_uint8:
        return np.clip(np.rint(out * 255.0), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(out)


def tta18(images: np.ndarray) -> np.ndarray:
    """The 18 transformed versions of a batch, (18, N, H, W, C), in the order of `TTA18`."""
    return np.stack([tta_transform(images, name) for name in TTA18])


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
