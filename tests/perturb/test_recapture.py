"""The embedded recapture source: the 54-condition grid (ImageNet-ES numbering), determinism per (image,
index, condition, seed), order independence, output dtype and shape, physical effects that must hold
(ISO noise, shutter motion blur, aperture defocus, lighting and shutter exposure), tiers, Syn-B and the figure."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.figure import Figure

from pipeline.data.digits import digits_images
from pipeline.figures.recapture import plot_recapture_grid
from pipeline.perturb import recapture as rc
from pipeline.perturb.compose import apply_step
from pipeline.perturb.recapture import (
    RecaptureCondition,
    make_condition,
    recapture,
    recapture_conditions,
    syn_b_conditions,
    tier_of,
)
from pipeline.perturb.registry import available, get_perturbation

IMAGES = digits_images(32)[0][:6]
GREY = np.full((3, 32, 32, 3), 128, np.uint8)


def _param(iso: int, shutter: int, aperture: int) -> int:
    """ImageNet-ES param number of level indices (ISO fastest, then shutter, then aperture)."""
    return 1 + iso + 3 * shutter + 9 * aperture


# --------------------------------------------------------------------------------------------------
# the grid
# --------------------------------------------------------------------------------------------------
def test_54_distinct_conditions_on_the_es_grid():
    conditions = recapture_conditions()
    assert len(conditions) == 54 and len(set(conditions)) == 54
    assert len({c.name for c in conditions}) == 54
    assert [c.lighting for c in conditions] == ["l1"] * 27 + ["l5"] * 27
    for lighting in ("l1", "l5"):
        settings = [(c.shutter, c.iso, c.aperture) for c in conditions if c.lighting == lighting]
        assert sorted(settings) == sorted(itertools.product(rc.SHUTTERS, rc.ISOS, rc.APERTURES))
        assert [c.param for c in conditions if c.lighting == lighting] == list(range(1, 28))


@pytest.mark.parametrize("param, setting", [
    (1, (1 / 4, 250, 5.0)), (2, (1 / 4, 2000, 5.0)), (3, (1 / 4, 16000, 5.0)), (4, (1 / 60, 250, 5.0)),
    (9, (1 / 1000, 16000, 5.0)), (10, (1 / 4, 250, 9.0)), (14, (1 / 60, 2000, 9.0)), (19, (1 / 4, 250, 16.0)),
    (27, (1 / 1000, 16000, 16.0)),
])
def test_param_numbering_follows_imagenet_es_grid_csv(param, setting):
    # rows of ImageNet-ES settings/grid-options-3x3x3.csv: idx, iso, ss, aperture
    assert rc.camera_setting(param) == setting
    condition = make_condition("l5", param)
    assert (condition.shutter, condition.iso, condition.aperture) == setting
    assert condition.name == f"l5-param_{param}"


def test_condition_label_and_bad_params():
    assert make_condition("l1", 4).label == "ISO 250, 1/60 s, f/5"
    for bad in (0, 28):
        with pytest.raises(ValueError, match="1..27"):
            rc.camera_setting(bad)


def test_tier_cuts():
    assert [tier_of(a) for a in (1.0, 0.4, 0.3999, 0.2, 0.1999, 0.0)] == ["mild", "mild", "severe", "severe", "extreme", "extreme"]


# --------------------------------------------------------------------------------------------------
# determinism, order independence, dtype and shape
# --------------------------------------------------------------------------------------------------
def test_output_dtype_and_shape():
    for images in (IMAGES[:2], np.zeros((2, 24, 40, 3), np.uint8)):
        out = recapture(images, make_condition("l5", 14), seed=0)
        assert out.dtype == np.uint8 and out.shape == images.shape
    empty = recapture(np.zeros((0, 32, 32, 3), np.uint8), make_condition("l1", 1), seed=0)
    assert empty.shape == (0, 32, 32, 3)


def test_deterministic_per_image_condition_and_seed():
    condition = make_condition("l1", 6)
    first = recapture(IMAGES, condition, seed=3)
    assert np.array_equal(first, recapture(IMAGES, condition, seed=3))
    assert not np.array_equal(first, recapture(IMAGES, condition, seed=4))
    assert not np.array_equal(first, recapture(IMAGES, make_condition("l5", 6), seed=3))
    assert not np.array_equal(first, recapture(IMAGES, make_condition("l1", 5), seed=3))
    # the index is part of the identity: the same picture at another index is another capture
    assert not np.array_equal(first[0], recapture(IMAGES[:1], condition, seed=3, indices=[1])[0])


def test_order_independence():
    condition = make_condition("l5", 20)
    batch = recapture(IMAGES, condition, seed=1)
    for i in range(len(IMAGES)):
        assert np.array_equal(batch[i], recapture(IMAGES[i : i + 1], condition, seed=1, indices=[i])[0])
    order = np.random.default_rng(0).permutation(len(IMAGES))
    assert np.array_equal(recapture(IMAGES[order], condition, seed=1, indices=order), batch[order])


def test_global_numpy_state_untouched():
    np.random.seed(5)
    expected = np.random.random(3)
    np.random.seed(5)
    recapture(IMAGES[:2], make_condition("l1", 1), seed=0)
    assert np.array_equal(np.random.random(3), expected)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="uint8"):
        recapture(IMAGES.astype(np.float32), make_condition("l1", 1), seed=0)
    with pytest.raises(ValueError, match="one index per image"):
        recapture(IMAGES, make_condition("l1", 1), seed=0, indices=[0, 1])
    with pytest.raises(ValueError, match="unknown lighting"):
        recapture(IMAGES[:1], make_condition("l3", 1), seed=0)
    with pytest.raises(ValueError, match="camera setting"):
        recapture(IMAGES[:1], RecaptureCondition("l1", 1, 1 / 60, 250, 5.0), seed=0)


# --------------------------------------------------------------------------------------------------
# physical effects
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lighting, shutter, aperture", [("l5", 1, 2), ("l1", 0, 2), ("l1", 1, 1), ("l5", 2, 2)])
def test_higher_iso_more_noise_variance_on_flat_grey(lighting, shutter, aperture):
    variances = []
    for iso in range(3):
        out = recapture(GREY, make_condition(lighting, _param(iso, shutter, aperture)), seed=0)
        variances.append(out[:, 8:24, 8:24].astype(float).var(axis=(1, 2, 3)).mean())
    assert variances[0] < variances[1] < variances[2]


def test_sensor_noise_rises_with_iso_at_fixed_exposure():
    flat = np.full((64, 64, 3), 0.2)
    for shutter, aperture in itertools.product(range(3), range(3)):
        sds = []
        for iso in range(3):
            condition = make_condition("l5", _param(iso, shutter, aperture))
            raw = rc.expose(flat, condition, np.random.default_rng(0))
            noiseless = rc.PHOTON_RATE * condition.shutter / condition.aperture ** 2 * 0.2 * condition.iso / (rc.ISO_BASE * rc.FULL_WELL)
            if noiseless < 0.8:  # the spread of a clipped signal says nothing about noise
                sds.append(raw.std())
        assert all(a < b for a, b in itertools.pairwise(sds))


def _sharpness(image: np.ndarray) -> float:
    """Gradient energy per unit signal energy (blur lowers it, exposure does not change it)."""
    gy, gx = np.gradient(image, axis=(0, 1))
    return float((gy ** 2 + gx ** 2).sum() / (image ** 2).sum())


def test_longer_shutter_more_motion_blur_energy_loss():
    pattern = np.random.default_rng(0).random((96, 96, 3))
    for aperture in rc.APERTURES:
        for angle in (0.0, 0.7, 1.9):
            kept = [_sharpness(rc.blur(pattern, rc.optics_psf(aperture, shutter, angle), aperture)) for shutter in rc.SHUTTERS]
            assert kept[0] < kept[1] <= kept[2]  # 1/4 s loses most, 1/1000 s least
    assert rc.motion_kernel(rc.SHAKE * rc.SHUTTERS[0], 0.3).shape[0] > rc.motion_kernel(rc.SHAKE * rc.SHUTTERS[2], 0.3).shape[0]


def test_wider_aperture_more_defocus_blur():
    pattern = np.random.default_rng(1).random((96, 96, 3))
    kept = [_sharpness(rc.blur(pattern, rc.optics_psf(n, rc.SHUTTERS[2], 0.0), n)) for n in rc.APERTURES]
    assert kept[0] < kept[1] < kept[2]  # f/5 blurs most


def test_darker_lighting_and_shorter_shutter_give_darker_images():
    means = {c.name: recapture(IMAGES, c, seed=0).astype(float).mean() for c in recapture_conditions()}
    for param in range(1, 28):
        assert means[f"l1-param_{param}"] < means[f"l5-param_{param}"]
    for lighting, iso, aperture in itertools.product(("l1", "l5"), range(3), range(3)):
        by_shutter = [means[f"{lighting}-param_{_param(iso, s, aperture)}"] for s in range(3)]  # 1/4, 1/60, 1/1000 s
        assert by_shutter[0] >= by_shutter[1] > by_shutter[2]  # the longest may clip at white


def test_dark_capture_is_dark_and_bright_capture_is_bright():
    dark = recapture(IMAGES, make_condition("l1", _param(0, 2, 2)), seed=0)  # ISO 250, 1/1000 s, f/16, dim
    bright = recapture(IMAGES, make_condition("l5", _param(2, 0, 0)), seed=0)  # ISO 16000, 1/4 s, f/5, lit
    assert dark.mean() < 15 and bright.mean() > 240


def test_srgb_round_trip():
    codes = np.linspace(0, 1, 256)
    assert np.allclose(rc.linear_to_srgb(rc.srgb_to_linear(codes)), codes)


def test_subpixel_mask_preserves_each_channel_mean():
    mask = rc.subpixel_mask()
    assert np.allclose(mask.mean(axis=(0, 1)), 1.0)
    assert (mask[..., 0][:, 1:] == 0).all()  # the red stripe is the first subpixel column
    with pytest.raises(ValueError, match="multiple of 3"):
        rc.subpixel_mask(4)


def test_framing_is_shared_by_the_conditions_of_an_image():
    a, _ = rc._streams(0, 7, make_condition("l1", 1))
    b, _ = rc._streams(0, 7, make_condition("l5", 27))
    assert np.array_equal(rc.framing((32, 32), a).params, rc.framing((32, 32), b).params)


# --------------------------------------------------------------------------------------------------
# Syn-B and the figure
# --------------------------------------------------------------------------------------------------
def test_syn_b_conditions():
    pairs = syn_b_conditions()
    assert len(pairs) == 18 and len(set(pairs)) == 18
    assert [name for name, _ in pairs[::2]] == ["brightness", "fog", "snow", "contrast", "jpeg_compression", "pixelate",
                                                 "defocus_blur", "gaussian_noise", "motion_blur"]
    assert [sev for _, sev in pairs] == [2, 4] * 9
    assert all(name in available() for name, _ in pairs)


def test_apply_syn_b_matches_the_records_stage_seeding():
    images = IMAGES[:2]
    out = rc.apply_syn_b(images, seed=0)
    assert list(out) == [f"{n}-{s}" for n, s in syn_b_conditions()]
    assert all(v.shape == images.shape and v.dtype == np.uint8 for v in out.values())
    assert np.array_equal(out["gaussian_noise-4"], apply_step(get_perturbation("gaussian_noise"), images, (4,), 0))


def test_figure_shows_clean_and_each_condition():
    conditions = recapture_conditions()[::13]
    fig = plot_recapture_grid(IMAGES[0], conditions, seed=0, columns=3)
    assert isinstance(fig, Figure)
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == len(conditions) + 1
    assert shown[0].get_title() == "clean" and conditions[0].name in shown[1].get_title()
    assert np.array_equal(shown[1].images[0].get_array(), recapture(IMAGES[:1], conditions[0], seed=0)[0])
