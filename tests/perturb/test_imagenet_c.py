"""The ImageNet-C compatibility layer: every corruption runs, is uint8 of the input's shape, depends only on
the seed, leaves the caller's global RNG alone, and rejects bad input with the valid choices."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest
import skimage.filters

from pipeline.perturb import imagenet_c
from pipeline.perturb.imagenet_c import corrupt, corruption_names, global_rng

ALL = corruption_names("all")
# corruptions that draw random numbers; the others are deterministic functions of the image
# (the library's own list, which lets `corrupt` skip seeding for deterministic ones, is checked against this)
STOCHASTIC = {"gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise", "glass_blur", "motion_blur",
              "snow", "frost", "fog", "spatter", "elastic_transform"}


def test_library_stochastic_list_matches():
    from pipeline.perturb import imagenet_c

    assert imagenet_c.STOCHASTIC == STOCHASTIC


def _image(height: int, width: int, seed: int = 0) -> np.ndarray:
    """A smooth colour pattern plus noise, so every corruption has structure to act on."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width] / max(height, width)
    base = np.stack([np.sin(6 * xx) * 0.5 + 0.5, yy, (xx + yy) / 2], axis=-1) * 200 + 20
    return np.clip(base + rng.normal(0, 15, base.shape), 0, 255).astype(np.uint8)


IMG32 = _image(32, 32)
IMG224 = _image(224, 224)


def test_names_are_the_nineteen_imagenet_c_corruptions() -> None:
    assert len(ALL) == 19 and len(set(ALL)) == 19
    assert corruption_names("common") + corruption_names("validation") == ALL
    assert {"speckle_noise", "glass_blur", "brightness", "pixelate"} <= set(ALL)
    with pytest.raises(ValueError, match="valid choices: common, validation, all"):
        corruption_names("everything")


@pytest.mark.parametrize("name", ALL)
def test_every_severity_at_32x32_is_deterministic_uint8_of_input_shape(name: str) -> None:
    for severity in range(1, 6):
        out = corrupt(IMG32, name, severity, seed=11)
        assert out.dtype == np.uint8 and out.shape == IMG32.shape
        assert np.array_equal(out, corrupt(IMG32, name, severity, seed=11))


@pytest.mark.parametrize("name", ALL)
def test_every_severity_at_224x224_is_uint8_of_input_shape(name: str) -> None:
    outs = [corrupt(IMG224, name, severity, seed=5) for severity in range(1, 6)]
    for out in outs:
        assert out.dtype == np.uint8 and out.shape == IMG224.shape
    assert not np.array_equal(outs[0], IMG224)  # the corruption did something
    assert np.array_equal(outs[2], corrupt(IMG224, name, 3, seed=5))


@pytest.mark.parametrize("name", ALL)
def test_seed_matters_exactly_for_the_stochastic_corruptions(name: str) -> None:
    a, b = corrupt(IMG32, name, 3, seed=1), corrupt(IMG32, name, 3, seed=2)
    assert np.array_equal(a, b) == (name not in STOCHASTIC)


def test_result_ignores_and_preserves_the_callers_global_rng() -> None:
    np.random.seed(123)
    expected_next = np.random.get_state()
    a = corrupt(IMG32, "impulse_noise", 2, seed=9)
    after = np.random.get_state()
    assert np.array_equal(after[1], expected_next[1]) and after[2] == expected_next[2]
    np.random.seed(999)  # a different caller state must not change the result
    assert np.array_equal(a, corrupt(IMG32, "impulse_noise", 2, seed=9))


def test_global_rng_restores_the_state_even_when_the_block_raises() -> None:
    np.random.seed(7)
    before = np.random.get_state()
    with pytest.raises(RuntimeError):
        with global_rng(3):
            np.random.random(10)
            raise RuntimeError("inside")
    assert np.array_equal(np.random.get_state()[1], before[1])
    with global_rng(3):
        inside = np.random.random(3)
    np.random.seed(3)
    assert np.array_equal(inside, np.random.random(3))


@pytest.mark.parametrize("name", ALL)
def test_severity_zero_is_a_copy_of_the_input(name: str) -> None:
    out = corrupt(IMG32, name, 0, seed=4)
    assert np.array_equal(out, IMG32) and out is not IMG32


def test_severity_index_matches_imagenet_c_levels() -> None:
    """Independent check of the 1-based level mapping on closed forms: contrast c = 0.4 at level 1 and
    brightness on a grey image (S = 0, so V + c is the new grey) with c = 0.1 * level."""
    x = IMG32 / 255.0
    means = x.mean(axis=(0, 1), keepdims=True)
    assert np.array_equal(corrupt(IMG32, "contrast", 1, 0), np.uint8(np.clip((x - means) * 0.4 + means, 0, 1) * 255))
    grey = np.repeat((np.arange(32 * 32) % 256).astype(np.uint8).reshape(32, 32, 1), 3, axis=2)
    for level in range(1, 6):
        expected = np.uint8(np.clip(grey / 255.0 + 0.1 * level, 0, 1) * 255)
        assert np.array_equal(corrupt(grey, "brightness", level, 0), expected)


def test_gaussian_noise_has_the_imagenet_c_standard_deviation() -> None:
    grey = np.full((128, 128, 3), 128, dtype=np.uint8)
    for level, std in zip(range(1, 4), (0.08, 0.12, 0.18)):  # levels 4, 5 clip too much at 0 and 1
        residual = corrupt(grey, "gaussian_noise", level, seed=level) / 255.0 - 128 / 255.0
        assert abs(residual.std() - std) < 0.05 * std


@pytest.mark.parametrize("bad", ["gaussian", "Glass_Blur", ""])
def test_unknown_name_lists_the_valid_ones(bad: str) -> None:
    with pytest.raises(ValueError, match="valid choices: gaussian_noise, shot_noise"):
        corrupt(IMG32, bad, 1, 0)
    with pytest.raises(ValueError, match="valid choices: gaussian_noise, shot_noise"):
        imagenet_c.reference_function(bad)


@pytest.mark.parametrize("bad", [-1, 6, 2.0, 2.5, True, "3"])
def test_bad_severity_names_the_valid_range(bad: object) -> None:
    with pytest.raises(ValueError, match=r"integer in 0\.\.5"):
        corrupt(IMG32, "brightness", bad, 0)


@pytest.mark.parametrize("severity", [0, 1])
@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, None])
def test_bad_seed_is_rejected(bad: object, severity: int) -> None:
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*32\)"):
        corrupt(IMG32, "gaussian_noise", severity, bad)


@pytest.mark.parametrize(
    "bad", [IMG32[..., 0], IMG32.astype(np.float32), IMG32[..., :1], IMG32[:16], IMG32.tolist()]
)
def test_bad_image_is_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="image"):
        corrupt(bad, "gaussian_noise", 1, 0)  # type: ignore[arg-type]


def test_numpy_integer_severity_and_seed_are_accepted() -> None:
    assert np.array_equal(corrupt(IMG32, "shot_noise", np.int64(2), np.uint32(8)), corrupt(IMG32, "shot_noise", 2, 8))


def test_shims_stay_local_to_imagecorruptions() -> None:
    if importlib.util.find_spec("pkg_resources") is None:
        assert "pkg_resources" not in sys.modules  # the import-time stand-in was removed
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        assert "float_" not in vars(np)  # no process-wide alias
    assert sys.modules["imagecorruptions.corruptions"].np.float_ is np.float64
    frost = imagenet_c._resource_filename("imagecorruptions.corruptions", "./frost/frost1.png")
    assert os.path.isfile(frost)


def test_gaussian_shim_translates_multichannel() -> None:
    x = IMG32 / 255.0
    assert np.array_equal(imagenet_c._gaussian(x, sigma=1.5, multichannel=True),
                          skimage.filters.gaussian(x, sigma=1.5, channel_axis=-1))
    assert np.array_equal(imagenet_c._gaussian(x[..., 0], sigma=2, multichannel=False),
                          skimage.filters.gaussian(x[..., 0], sigma=2))
