"""Glass blur of ImageNet-C, compiled: bit-identical to `imagecorruptions.glass_blur`.

The reference blurs with a Gaussian (sigma), then for each of `iterations` passes visits every interior
pixel (h from H - d down to d + 1, w from W - d down to d + 1, with d = max_delta) and draws
`np.random.randint(-d, d, size=(2,))` -> (dx, dy) from the global legacy RNG, then blurs again, in a
Python loop (docs/perturbations.md has its cost). Here the same integers are drawn in ONE call of shape
(iterations, rows, cols, 2): the legacy `RandomState.randint` fills arrays element by element from the
same MT19937 stream, so one bulk draw yields exactly the sequence of the per-pixel draws and leaves the
global state where the reference leaves it (tests/perturb/test_glass_blur.py checks both). The pixel
moves then run in a numba kernel.

The reference's "swap" `x[h, w], x[h', w'] = x[h', w'], x[h, w]` on an (H, W, C) array assigns through
views that alias, so it is a copy x[h, w] <- x[h', w'] (x[h', w'] keeps its value); the kernel
reproduces that, which is why only multichannel (H, W, C) arrays are accepted.
"""
from __future__ import annotations

import numba
import numpy as np
from skimage.filters import gaussian

# ImageNet-C glass blur parameters (sigma, max_delta, iterations) for severities 1..5, as in
# imagecorruptions 1.1.2 `glass_blur`.
GLASS_BLUR_SEVERITIES: tuple[tuple[float, int, int], ...] = (
    (0.7, 1, 2),
    (0.9, 2, 1),
    (1.0, 2, 3),
    (1.1, 3, 2),
    (1.5, 4, 2),
)


@numba.njit(cache=True, nogil=True)
def _move_pixels(x: np.ndarray, shifts: np.ndarray, max_delta: int) -> None:
    """In place: for each pass and each visited pixel (reference loop order), x[h, w] <- x[h + dy, w + dx]."""
    height, width, channels = x.shape
    iterations, rows, cols, _ = shifts.shape
    for i in range(iterations):
        for r in range(rows):
            h = height - max_delta - r
            for c in range(cols):
                w = width - max_delta - c
                dx = shifts[i, r, c, 0]
                dy = shifts[i, r, c, 1]
                for k in range(channels):
                    x[h, w, k] = x[h + dy, w + dx, k]


def draw_shifts(height: int, width: int, max_delta: int, iterations: int) -> np.ndarray:
    """The reference's per-pixel (dx, dy) draws from the global `np.random`, in one bulk call:
    an int array of shape (iterations, rows, cols, 2), rows = max(0, height - 2 d), cols likewise."""
    rows, cols = max(0, height - 2 * max_delta), max(0, width - 2 * max_delta)
    if max_delta <= 0 or iterations <= 0 or rows == 0 or cols == 0:
        return np.zeros((max(iterations, 0), rows, cols, 2), dtype=np.int64)
    return np.random.randint(-max_delta, max_delta, size=(iterations, rows, cols, 2)).astype(np.int64, copy=False)


def glass_blur(image: np.ndarray, sigma: float, max_delta: int, iterations: int) -> np.ndarray:
    """Glass blur of an (H, W, C) image with values in 0..255 (uint8): Gaussian blur, local pixel moves
    drawn from the global `np.random`, Gaussian blur. Returns float64 in [0, 255] exactly as the reference
    returns it. `max_delta == 0` or `iterations == 0` means no moves and no random draws."""
    x = np.asarray(image)
    if x.ndim != 3:
        raise ValueError(f"glass_blur needs an (H, W, C) image, got shape {x.shape}")
    if sigma < 0 or max_delta < 0 or iterations < 0:
        raise ValueError(f"sigma, max_delta and iterations must be >= 0, got {(sigma, max_delta, iterations)}")
    blurred = np.uint8(gaussian(x / 255.0, sigma=sigma, channel_axis=-1) * 255)
    shifts = draw_shifts(x.shape[0], x.shape[1], int(max_delta), int(iterations))
    if shifts.size:
        _move_pixels(blurred, shifts, int(max_delta))
    return np.clip(gaussian(blurred / 255.0, sigma=sigma, channel_axis=-1), 0, 1) * 255
