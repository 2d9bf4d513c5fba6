"""TTA18, the fixed set of 18 natural test-time transformations that the screening comparison scores
with (Paired Evaluations, arXiv 2609.35583, Section 5.3, Appendix E.1 "Natural test-time augmentation"), applied
to the original image before the model's own preprocessing, in this order:

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
