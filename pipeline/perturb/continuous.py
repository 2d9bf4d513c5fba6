"""Continuous-severity versions of four ImageNet-C families (speckle noise, glass blur, brightness, pixelate).

Structural fuzzing asks questions such as "how much brightness before digit 7 breaks?", which needs a
severity s in [0, 5] rather than the five ImageNet-C levels. Each family's parameters are tabulated at
s = 0 (the identity) and at the ImageNet-C severities 1..5 (the constants of imagecorruptions 1.1.2), and
interpolated piecewise-linearly between neighbouring integers. Glass blur's two integer parameters
(max_delta, iterations) are rounded half up after interpolation, so that on each side of an integer
severity the random pixel moves (same seed) stay those of that severity while sigma varies smoothly.

At integer s the output equals `imagenet_c.corrupt(image, name, s, seed)` bit for bit (same formula, same
parameter value, same global-RNG draws); s = 0 returns the image itself. The RNG contract is that of
`imagenet_c.corrupt`: the global legacy `np.random` is seeded with `seed` for the call and restored after.
Severities outside [0, 5] are an error (a fuzzer must know the bounds it searches, not be clipped silently).
"""
from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np
from PIL import Image
from skimage.color import hsv2rgb, rgb2hsv

from pipeline.plugins.catalog import CONTINUOUS_FAMILIES
from pipeline.perturb.glass_blur import GLASS_BLUR_SEVERITIES, glass_blur
from pipeline.perturb.imagenet_c import (
    MAX_SEVERITY,
    STOCHASTIC,
    check_image,
    check_seed,
    global_rng,
)

# Parameter tables, index = severity 0..5; index 0 is the identity, 1..5 are imagecorruptions 1.1.2's.
SPECKLE_STD = (0.0, 0.15, 0.2, 0.35, 0.45, 0.6)  # std of the multiplicative Gaussian noise
BRIGHTNESS_SHIFT = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)  # added to V of HSV (V in [0, 1])
PIXELATE_FACTOR = (1.0, 0.6, 0.5, 0.4, 0.3, 0.25)  # box-downsampling factor before nearest upsampling
GLASS_SIGMA = (0.0, *(p[0] for p in GLASS_BLUR_SEVERITIES))  # Gaussian blur sigma (pixels)
GLASS_MAX_DELTA = (0, *(p[1] for p in GLASS_BLUR_SEVERITIES))  # pixel moves drawn from [-d, d)
GLASS_ITERATIONS = (0, *(p[2] for p in GLASS_BLUR_SEVERITIES))  # passes of pixel moves

FAMILIES = CONTINUOUS_FAMILIES


def _lerp(table: tuple[float, ...], severity: float) -> float:
    """Piecewise-linear interpolation of a table indexed by integer severity; exact table value at integers."""
    low = math.floor(severity)
    frac = severity - low
    if frac == 0:
        return table[low]
    return table[low] + frac * (table[low + 1] - table[low])


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


def _check_severity(severity: float) -> float:
    if isinstance(severity, (bool, np.bool_)) or not isinstance(severity, (int, float, np.integer, np.floating)):
        raise ValueError(f"severity must be a number in [0, {MAX_SEVERITY}], got {severity!r}")
    if not 0 <= severity <= MAX_SEVERITY:  # also rejects NaN
        raise ValueError(f"severity must be in [0, {MAX_SEVERITY}], got {severity!r}")
    return float(severity)


def continuous_parameters(name: str, severity: float) -> dict[str, float]:
    """The interpolated ImageNet-C parameters of family `name` at continuous `severity` in [0, 5]."""
    severity = _check_severity(severity)
    if name == "speckle_noise":
        return {"std": _lerp(SPECKLE_STD, severity)}
    if name == "brightness":
        return {"shift": _lerp(BRIGHTNESS_SHIFT, severity)}
    if name == "pixelate":
        return {"factor": _lerp(PIXELATE_FACTOR, severity)}
    if name == "glass_blur":
        return {
            "sigma": _lerp(GLASS_SIGMA, severity),
            "max_delta": _round_half_up(_lerp(GLASS_MAX_DELTA, severity)),
            "iterations": _round_half_up(_lerp(GLASS_ITERATIONS, severity)),
        }
    raise ValueError(f"unknown continuous family {name!r}; valid choices: {', '.join(FAMILIES)}")


def _speckle_noise(image: np.ndarray, std: float) -> np.ndarray:
    """ImageNet-C speckle noise x + x * N(0, std^2) on x in [0, 1], clipped (global-RNG draw)."""
    x = image / 255.0
    return np.clip(x + x * np.random.normal(size=x.shape, scale=std), 0, 1) * 255


def _brightness(image: np.ndarray, shift: float) -> np.ndarray:
    """ImageNet-C brightness: add `shift` to V in HSV, clipped to [0, 1]."""
    hsv = rgb2hsv(image / 255.0)
    hsv[:, :, 2] = np.clip(hsv[:, :, 2] + shift, 0, 1)
    return np.clip(hsv2rgb(hsv), 0, 1) * 255


def _pixelate(image: np.ndarray, factor: float) -> np.ndarray:
    """ImageNet-C pixelate: box-downsample to int(side * factor), nearest-upsample back."""
    height, width = image.shape[:2]
    small = Image.fromarray(image).resize((int(width * factor), int(height * factor)), Image.BOX)
    return np.asarray(small.resize((width, height), Image.NEAREST))


def apply_with_parameters(image: np.ndarray, name: str, parameters: dict[str, float], seed: int) -> np.ndarray:
    """Family `name` with explicit parameters (as `continuous_parameters` returns them) on an (H, W, 3)
    uint8 image, under the global-RNG seed contract; returns (H, W, 3) uint8 (float results truncated,
    as imagecorruptions does)."""
    check_image(image)
    seed = check_seed(seed)
    # brightness and pixelate draw nothing: seeding and restoring the global state (33 µs) would change no bit
    with global_rng(seed) if name in STOCHASTIC else nullcontext():
        if name == "speckle_noise":
            out = _speckle_noise(image, parameters["std"])
        elif name == "brightness":
            out = _brightness(image, parameters["shift"])
        elif name == "pixelate":
            out = _pixelate(image, parameters["factor"])
        elif name == "glass_blur":
            out = glass_blur(image, parameters["sigma"], parameters["max_delta"], parameters["iterations"])
        else:
            raise ValueError(f"unknown continuous family {name!r}; valid choices: {', '.join(FAMILIES)}")
    return np.uint8(out)


def apply_continuous(image: np.ndarray, name: str, severity: float, seed: int) -> np.ndarray:
    """Family `name` (speckle_noise, glass_blur, brightness, pixelate) at continuous severity s in [0, 5]
    on an (H, W, 3) uint8 image: s = 0 is the identity, integer s equals the ImageNet-C level exactly."""
    parameters = continuous_parameters(name, severity)
    if severity == 0:
        check_image(image)
        check_seed(seed)
        return image.copy()
    return apply_with_parameters(image, name, parameters, seed)
