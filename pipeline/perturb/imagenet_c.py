"""ImageNet-C corruptions (Hendrycks & Dietterich, 2019) through a compatibility layer over `imagecorruptions`.

`imagecorruptions` 1.1.2 is the reference implementation of the 19 corruptions, but its last release
(2020) no longer imports or runs on current dependencies. Rather than forking it, this module patches
around it at import time, with each patch confined to the `imagecorruptions.corruptions` module's own
namespace where possible (see `_import_imagecorruptions`):

* setuptools >= 81 no longer ships `pkg_resources`, which the package imports at module level to locate
  its bundled frost textures;
* NumPy 2 removed the `np.float_` alias used by `plasma_fractal` (fog);
* scikit-image >= 0.21 removed `gaussian(..., multichannel=...)` (gaussian_blur, glass_blur);
* scikit-image's `random_noise` (impulse_noise) now draws from a fresh, OS-seeded Generator instead of
  the global `np.random` state, which would make impulse noise impossible to reproduce.

RNG contract: the package draws from the *global* legacy `np.random` state. `corrupt(image, name,
severity, seed)` seeds that state with `np.random.seed(seed)` for the duration of the call and restores
the caller's state afterwards, so the result depends only on (image, name, severity, seed) and the
caller's own global stream is left untouched. Because the global state is shared, concurrent calls from
several *threads* of one process are not safe; use processes (joblib's default loky backend).

Glass blur goes through the bit-identical compiled implementation in `pipeline.perturb.glass_blur`.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
import warnings
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterator

import numpy as np
import skimage
import skimage.filters
import skimage.util

from pipeline.perturb.glass_blur import GLASS_BLUR_SEVERITIES, glass_blur
from pipeline.plugins.protocols import ImageInputs

MAX_SEVERITY = 5
MIN_SIDE = 32  # the reference rejects images whose height or width is below 32 pixels
INPUTS = ImageInputs(min_side=MIN_SIDE, channels=3, dtype="uint8")  # what `check_image` accepts, for the benchmark's check
# corruptions that draw from the global np.random stream; the others are deterministic functions of the
# image, so `corrupt` skips seeding and restoring the global state for them (most of a call's cost at 32x32)
STOCHASTIC = frozenset({"gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise", "glass_blur", "motion_blur",
                        "snow", "frost", "fog", "spatter", "elastic_transform"})


def _module_view(base: types.ModuleType, **overrides: object) -> types.ModuleType:
    """A module object exposing `overrides` and delegating every other attribute to `base` (PEP 562)."""
    view = types.ModuleType(f"{base.__name__}<imagecorruptions-compat>")
    view.__dict__.update(overrides)
    view.__getattr__ = lambda name: getattr(base, name)  # type: ignore[attr-defined]
    return view


def _resource_filename(package_or_module: str, resource_name: str) -> str:
    """`pkg_resources.resource_filename` for a plain file next to an importable module."""
    module = importlib.import_module(package_or_module)
    return os.path.join(os.path.dirname(module.__file__), *resource_name.split("/"))


def _gaussian(image: np.ndarray, *args: object, multichannel: bool | None = None, **kwargs: object) -> np.ndarray:
    """`skimage.filters.gaussian` accepting the removed `multichannel=` keyword (True -> channel_axis=-1)."""
    if multichannel is not None:
        kwargs["channel_axis"] = -1 if multichannel else None
    return skimage.filters.gaussian(image, *args, **kwargs)


def _random_noise(image: np.ndarray, *args: object, **kwargs: object) -> np.ndarray:
    """`skimage.util.random_noise` whose Generator is seeded from the global `np.random` stream.

    The scikit-image of 2020 drew from the global state; today's draws from `default_rng(None)` (OS
    entropy) when no `rng` is given. One 32-bit draw from the global stream seeds it instead, so impulse
    noise obeys the same seed contract as every other corruption (its values differ from 2020's)."""
    if kwargs.get("rng") is None:
        kwargs["rng"] = np.random.default_rng(np.random.randint(0, 2**32, dtype=np.uint64))
    return skimage.util.random_noise(image, *args, **kwargs)


def _import_imagecorruptions() -> types.ModuleType:
    """Import `imagecorruptions` with the shims listed in the module docstring."""
    shim_pkg_resources = importlib.util.find_spec("pkg_resources") is None and "pkg_resources" not in sys.modules
    if shim_pkg_resources:
        # `from pkg_resources import resource_filename` runs at import time; the only use is locating the
        # frost textures. A stand-in module with that one function is visible only during this import and
        # removed afterwards, so other packages still see that pkg_resources is absent.
        stand_in = types.ModuleType("pkg_resources")
        stand_in.resource_filename = _resource_filename  # type: ignore[attr-defined]
        sys.modules["pkg_resources"] = stand_in
    try:
        with warnings.catch_warnings():
            # `from scipy.ndimage.interpolation import map_coordinates`: a deprecated but working namespace.
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*scipy.ndimage.interpolation.*")
            package = importlib.import_module("imagecorruptions")
    finally:
        if shim_pkg_resources:
            del sys.modules["pkg_resources"]
    corruptions = package.corruptions
    # The corruption functions look these names up in their module's globals at call time; rebinding them
    # there changes nothing outside the package (no process-wide `np.float_` alias, no patched skimage).
    corruptions.np = _module_view(np, float_=np.float64)
    corruptions.gaussian = _gaussian
    corruptions.sk = _module_view(skimage, util=_module_view(skimage.util, random_noise=_random_noise))
    return package


_ic = _import_imagecorruptions()


def corruption_names(subset: str = "all") -> list[str]:
    """ImageNet-C corruption names of a subset: 'common', 'validation', 'all', 'noise', 'blur', 'weather',
    'digital' (as `imagecorruptions.get_corruption_names`)."""
    valid = ("common", "validation", "all", "noise", "blur", "weather", "digital")
    if subset not in valid:
        raise ValueError(f"unknown corruption subset {subset!r}; valid choices: {', '.join(valid)}")
    return list(_ic.get_corruption_names(subset))


_ALL = tuple(corruption_names("all"))


def check_seed(seed: int) -> int:
    """`seed` as an int, or a ValueError unless it is an integer in [0, 2**32) (what `np.random.seed` takes)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    return int(seed)


@contextmanager
def global_rng(seed: int) -> Iterator[None]:
    """Seed the global legacy `np.random` state with `seed` inside the block; restore the previous state after."""
    seed = check_seed(seed)
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(saved)


def check_image(image: np.ndarray) -> None:
    """ValueError unless `image` is an (H, W, 3) uint8 array with H, W >= 32."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        described = f"{image.dtype} array of shape {image.shape}" if isinstance(image, np.ndarray) else type(image).__name__
        raise ValueError(f"image must be a uint8 array of shape (H, W, 3), got a {described}")
    if min(image.shape[:2]) < MIN_SIDE:
        raise ValueError(f"image height and width must be at least {MIN_SIDE} pixels, got shape {image.shape}")


def _check_call(image: np.ndarray, name: str, severity: int, seed: int) -> int:
    check_image(image)
    check_seed(seed)
    if name not in _ALL:
        raise ValueError(f"unknown corruption {name!r}; valid choices: {', '.join(_ALL)}")
    if isinstance(severity, (bool, np.bool_)) or not isinstance(severity, (int, np.integer)) or not 0 <= severity <= MAX_SEVERITY:
        raise ValueError(f"severity must be an integer in 0..{MAX_SEVERITY}, got {severity!r}")
    return int(severity)


def _run(image: np.ndarray, name: str, severity: int, seed: int, fast_glass_blur: bool) -> np.ndarray:
    severity = _check_call(image, name, severity, seed)
    if severity == 0:
        return image.copy()
    with global_rng(seed) if name in STOCHASTIC else nullcontext():
        if name == "glass_blur" and fast_glass_blur:
            # same float -> uint8 conversion (truncation) as imagecorruptions.corrupt
            corrupted = np.uint8(glass_blur(image, *GLASS_BLUR_SEVERITIES[severity - 1]))
        else:
            corrupted = _ic.corrupt(np.ascontiguousarray(image), severity=severity, corruption_name=name)
    corrupted = np.asarray(corrupted, dtype=np.uint8)
    if corrupted.shape != image.shape:
        # never observed for any size >= 32 with the pinned dependencies (tests sweep 32x32 and 224x224);
        # fail loudly should a dependency upgrade change a corruption's output size
        raise RuntimeError(f"{name} at severity {severity} returned shape {corrupted.shape} for an image of shape {image.shape}")
    return corrupted


def corrupt(image: np.ndarray, name: str, severity: int, seed: int) -> np.ndarray:
    """ImageNet-C corruption `name` at `severity` (0 = identity, 1..5 = ImageNet-C levels) of an (H, W, 3)
    uint8 image; the result is an (H, W, 3) uint8 image that depends only on the arguments."""
    return _run(image, name, severity, seed, fast_glass_blur=True)


def reference_corrupt(image: np.ndarray, name: str, severity: int, seed: int) -> np.ndarray:
    """`corrupt` with imagecorruptions' own pure-Python glass blur (the oracle for the fast one)."""
    return _run(image, name, severity, seed, fast_glass_blur=False)


def reference_function(name: str) -> Callable[..., object]:
    """The patched reference corruption function `name(x, severity)` of imagecorruptions."""
    if name not in _ALL:
        raise ValueError(f"unknown corruption {name!r}; valid choices: {', '.join(_ALL)}")
    return _ic.corruption_dict[name]
