"""Continuous severities: exact ImageNet-C levels at integers, the identity at 0, interpolated parameters
in between (closed forms), continuity for a fixed seed, and range / name errors."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from pipeline.perturb.continuous import FAMILIES, apply_continuous, apply_with_parameters, continuous_parameters
from pipeline.perturb.glass_blur import glass_blur
from pipeline.perturb.imagenet_c import corrupt


def _image(height: int, width: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width] / max(height, width)
    base = np.stack([np.cos(5 * yy) * 0.5 + 0.5, xx, 1 - (xx + yy) / 2], axis=-1) * 180 + 30
    return np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8)


IMAGES = {"32x32": _image(32, 32), "40x48": _image(40, 48, 1), "64x64": _image(64, 64, 2)}


@pytest.mark.parametrize("shape", list(IMAGES))
@pytest.mark.parametrize("name", FAMILIES)
def test_integer_severities_equal_imagenet_c_bit_for_bit(name: str, shape: str) -> None:
    image = IMAGES[shape]
    for level in range(6):
        expected = corrupt(image, name, level, seed=21)
        assert np.array_equal(apply_continuous(image, name, level, seed=21), expected)
        assert np.array_equal(apply_continuous(image, name, float(level), seed=21), expected)


@pytest.mark.parametrize("name", FAMILIES)
def test_zero_is_a_copy_and_the_identity_parameters_are_the_identity(name: str) -> None:
    image = IMAGES["40x48"]
    out = apply_continuous(image, name, 0.0, seed=3)
    assert np.array_equal(out, image) and out is not image
    by_formula = apply_with_parameters(image, name, continuous_parameters(name, 0.0), seed=3)
    # brightness' HSV round trip truncates some values by one level; the other formulas are exact
    assert np.abs(by_formula.astype(int) - image).max() <= (1 if name == "brightness" else 0)


def test_parameters_interpolate_linearly_between_levels() -> None:
    assert continuous_parameters("speckle_noise", 2.5) == pytest.approx({"std": 0.275})
    assert continuous_parameters("speckle_noise", 0.5) == pytest.approx({"std": 0.075})
    assert continuous_parameters("brightness", 4.25) == pytest.approx({"shift": 0.425})
    assert continuous_parameters("pixelate", 0.25) == pytest.approx({"factor": 0.9})
    assert continuous_parameters("pixelate", 4.5) == pytest.approx({"factor": 0.275})
    # glass blur: sigma linear; max_delta and iterations linear then rounded half up
    assert continuous_parameters("glass_blur", 0.2) == pytest.approx({"sigma": 0.14, "max_delta": 0, "iterations": 0})
    assert continuous_parameters("glass_blur", 0.3) == pytest.approx({"sigma": 0.21, "max_delta": 0, "iterations": 1})
    assert continuous_parameters("glass_blur", 1.4) == pytest.approx({"sigma": 0.78, "max_delta": 1, "iterations": 2})
    assert continuous_parameters("glass_blur", 1.5) == pytest.approx({"sigma": 0.8, "max_delta": 2, "iterations": 2})
    assert continuous_parameters("glass_blur", 2.5) == pytest.approx({"sigma": 0.95, "max_delta": 2, "iterations": 2})
    assert continuous_parameters("glass_blur", 4.6) == pytest.approx({"sigma": 1.34, "max_delta": 4, "iterations": 2})


def test_glass_blur_integer_parameters_change_only_at_the_documented_points() -> None:
    grid = np.round(np.arange(0, 5.0005, 0.001), 3)
    keys = [tuple(continuous_parameters("glass_blur", float(s))[k] for k in ("max_delta", "iterations")) for s in grid]
    changes = [float(grid[i]) for i in range(1, len(grid)) if keys[i] != keys[i - 1]]
    assert changes == [0.25, 0.5, 0.75, 1.5, 1.501, 2.25, 2.75, 3.5, 3.501, 4.5]


def test_brightness_on_grey_is_the_closed_form() -> None:
    """Grey pixels have S = 0, so brightness with shift c maps v to min(v / 255 + c, 1) * 255 (truncated)."""
    grey = np.repeat((np.arange(32 * 32) % 256).astype(np.uint8).reshape(32, 32, 1), 3, axis=2)
    for severity in (0.3, 1.7, 2.5, 4.99):
        shift = 0.1 * severity
        expected = np.uint8(np.clip(grey / 255.0 + shift, 0, 1) * 255)
        assert np.array_equal(apply_continuous(grey, "brightness", severity, seed=0), expected)


def test_speckle_noise_has_the_interpolated_standard_deviation() -> None:
    """On a constant grey 100 (no clipping), the output is 100 (1 + std z) truncated: its std is 100 std."""
    grey = np.full((64, 64, 3), 100, dtype=np.uint8)
    for severity, std in ((0.5, 0.075), (2.5, 0.275), (4.5, 0.525)):
        out = apply_continuous(grey, "speckle_noise", severity, seed=8).astype(float)
        assert abs(out.std() - 100 * std) < 0.03 * 100 * std


def test_pixelate_has_the_interpolated_block_count() -> None:
    """Factor 0.45 at s = 2.5 downsamples 32 columns to int(14.4) = 14 blocks, nearest-upsampled back."""
    image = np.random.default_rng(0).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    for severity, blocks in ((2.5, 14), (0.5, 25), (4.5, 8)):  # 32 * 0.8 = 25.6, 32 * 0.275 = 8.8
        out = apply_continuous(image, "pixelate", severity, seed=0)
        column_changes = np.any(out[:, 1:] != out[:, :-1], axis=(0, 2)).sum()
        assert column_changes + 1 == blocks
        small = Image.fromarray(image).resize((blocks, blocks), Image.BOX)
        assert np.array_equal(out, np.asarray(small.resize((32, 32), Image.NEAREST)))


def test_glass_blur_between_levels_uses_the_rounded_parameters() -> None:
    image = IMAGES["32x32"]
    np.random.seed(13)
    expected = np.uint8(glass_blur(image, 0.95, 2, 2))
    assert np.array_equal(apply_continuous(image, "glass_blur", 2.5, seed=13), expected)


@pytest.mark.parametrize("name", ["speckle_noise", "brightness", "glass_blur"])
def test_small_steps_in_severity_give_small_changes_for_a_fixed_seed(name: str) -> None:
    """Away from glass blur's rounding points, the output moves by a few levels per 0.01 of severity; just
    above 0 it is the input up to the one-level truncation of the float formula."""
    image = IMAGES["64x64"]
    grid = [0.0, 1e-6, 0.6, 0.61, 1.0, 1.01, 2.2, 2.21, 3.0, 3.01, 4.9, 4.91, 5.0]
    outs = {s: apply_continuous(image, name, s, seed=2).astype(int) for s in grid}
    for a, b in zip(grid[:-1], grid[1:]):
        if b - a <= 0.011:
            diff = np.abs(outs[a] - outs[b])
            if a == 0.0:
                assert diff.max() <= 1
            else:
                assert diff.mean() < 0.5 and diff.max() <= 4, (a, b)


@pytest.mark.parametrize("name", ["speckle_noise", "brightness"])
def test_distortion_grows_with_severity(name: str) -> None:
    """(Glass blur is left out: ImageNet-C's own levels are not monotone in pixel error, level 2 moves
    pixels in one pass where level 1 uses two.)"""
    image = IMAGES["64x64"]
    severities = np.linspace(0, 5, 11)
    if name == "brightness":  # brightness only brightens
        means = [apply_continuous(image, name, s, seed=4).mean() for s in severities]
        assert np.all(np.diff(means) > 0)
    else:
        errors = [np.abs(apply_continuous(image, name, s, seed=4).astype(int) - image).mean() for s in severities]
        assert np.all(np.diff(errors) > 0)


def test_seed_contract() -> None:
    image = IMAGES["32x32"]
    np.random.seed(77)
    before = np.random.get_state()
    a = apply_continuous(image, "speckle_noise", 2.5, seed=1)
    assert np.array_equal(np.random.get_state()[1], before[1])
    assert np.array_equal(a, apply_continuous(image, "speckle_noise", 2.5, seed=1))
    assert not np.array_equal(a, apply_continuous(image, "speckle_noise", 2.5, seed=2))
    assert np.array_equal(apply_continuous(image, "brightness", 2.5, seed=1), apply_continuous(image, "brightness", 2.5, seed=2))


@pytest.mark.parametrize("name", FAMILIES)
def test_the_global_rng_is_left_as_found_and_the_result_depends_on_the_seed_alone(name: str) -> None:
    """Stochastic families seed and restore the global legacy state; brightness and pixelate never touch it."""
    image = IMAGES["40x48"]
    np.random.seed(5)
    before = np.random.get_state()
    a = apply_continuous(image, name, 3.3, seed=4)
    after = np.random.get_state()
    assert np.array_equal(after[1], before[1]) and after[2:] == before[2:]
    np.random.seed(6)
    assert np.array_equal(apply_continuous(image, name, 3.3, seed=4), a)


@pytest.mark.parametrize("bad", [-0.01, 5.0001, float("nan"), float("inf"), True, "2", None])
def test_severity_outside_zero_to_five_is_an_error(bad: object) -> None:
    with pytest.raises(ValueError, match=r"severity must be .*\[0, 5\]"):
        apply_continuous(IMAGES["32x32"], "brightness", bad, seed=0)  # type: ignore[arg-type]


def test_unknown_family_lists_the_four() -> None:
    with pytest.raises(ValueError, match="valid choices: speckle_noise, glass_blur, brightness, pixelate"):
        apply_continuous(IMAGES["32x32"], "contrast", 1.0, seed=0)
    with pytest.raises(ValueError, match="valid choices: speckle_noise"):
        apply_with_parameters(IMAGES["32x32"], "fog", {"std": 0.1}, seed=0)


def test_bad_image_or_seed_is_rejected_even_at_zero() -> None:
    with pytest.raises(ValueError, match="image"):
        apply_continuous(IMAGES["32x32"][..., 0], "brightness", 0.0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        apply_continuous(IMAGES["32x32"], "brightness", 0.0, seed=-3)
