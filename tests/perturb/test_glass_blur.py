"""The compiled glass blur is bit-identical to imagecorruptions' Python loop: same random draws (in bulk),
same pixel moves, same output, same global RNG state afterwards."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from pipeline.perturb.glass_blur import GLASS_BLUR_SEVERITIES, _move_pixels, draw_shifts, glass_blur
from pipeline.perturb.imagenet_c import corrupt, reference_corrupt, reference_function


def _random_image(height: int, width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def _same_state(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


def _reference(image: np.ndarray, severity: int, seed: int) -> tuple[np.ndarray, tuple]:
    np.random.seed(seed)
    out = reference_function("glass_blur")(Image.fromarray(image), severity)
    return out, np.random.get_state()


def _fast(image: np.ndarray, severity: int, seed: int) -> tuple[np.ndarray, tuple]:
    np.random.seed(seed)
    out = glass_blur(image, *GLASS_BLUR_SEVERITIES[severity - 1])
    return out, np.random.get_state()


@pytest.mark.parametrize("max_delta", [1, 2, 3, 4, 5])
def test_bulk_randint_consumes_the_legacy_stream_like_sequential_pairs(max_delta: int) -> None:
    """d = 3 and 5 have non-power-of-two ranges (rejection sampling); the others are exact masks."""
    np.random.seed(max_delta)
    sequential = np.array([np.random.randint(-max_delta, max_delta, size=(2,)) for _ in range(3000)])
    state_sequential = np.random.get_state()
    np.random.seed(max_delta)
    bulk = np.random.randint(-max_delta, max_delta, size=(3000, 2))
    assert np.array_equal(sequential, bulk)
    assert _same_state(state_sequential, np.random.get_state())


@pytest.mark.parametrize(("height", "width", "max_delta", "iterations"), [(12, 9, 1, 2), (9, 14, 3, 2), (8, 8, 4, 1)])
def test_draw_shifts_follows_the_reference_loop_order(height: int, width: int, max_delta: int, iterations: int) -> None:
    np.random.seed(0)
    expected = [
        [[np.random.randint(-max_delta, max_delta, size=(2,)) for _w in range(width - max_delta, max_delta, -1)]
         for _h in range(height - max_delta, max_delta, -1)]
        for _i in range(iterations)
    ]
    state = np.random.get_state()
    np.random.seed(0)
    shifts = draw_shifts(height, width, max_delta, iterations)
    assert shifts.shape == (iterations, max(0, height - 2 * max_delta), max(0, width - 2 * max_delta), 2)
    assert np.array_equal(shifts.reshape(-1), np.asarray(expected, dtype=np.int64).reshape(-1))
    assert _same_state(state, np.random.get_state())


def test_kernel_reproduces_the_aliasing_swap_of_the_reference() -> None:
    """Oracle: the reference's tuple swap, run in Python on numpy views (it copies x[h', w'] into x[h, w])."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (11, 13, 3), dtype=np.uint8)
    d = 2
    shifts = rng.integers(-d, d, size=(2, 11 - 2 * d, 13 - 2 * d, 2))
    expected = x.copy()
    for i in range(shifts.shape[0]):
        for r, h in enumerate(range(11 - d, d, -1)):
            for c, w in enumerate(range(13 - d, d, -1)):
                dx, dy = shifts[i, r, c]
                expected[h, w], expected[h + dy, w + dx] = expected[h + dy, w + dx], expected[h, w]
    got = x.copy()
    _move_pixels(got, shifts, d)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(("height", "width"), [(32, 32), (37, 45), (45, 33)])
def test_identical_to_reference_small_and_non_square(severity: int, height: int, width: int) -> None:
    image = _random_image(height, width, seed=severity)
    (ref, ref_state), (fast, fast_state) = _reference(image, severity, 17), _fast(image, severity, 17)
    assert fast.dtype == ref.dtype == np.float64
    assert np.array_equal(fast, ref)
    assert _same_state(ref_state, fast_state)


def test_identical_to_reference_at_224x224() -> None:
    """Severity 4: max_delta 3 (rejection-sampled draws), two passes; the reference takes ~2 s here."""
    image = _random_image(224, 224, seed=0)
    (ref, ref_state), (fast, fast_state) = _reference(image, 4, 2024), _fast(image, 4, 2024)
    assert np.array_equal(fast, ref)
    assert _same_state(ref_state, fast_state)


def test_corrupt_uses_it_and_matches_the_reference_corrupt() -> None:
    image = _random_image(40, 36, seed=9)
    for severity in range(1, 6):
        assert np.array_equal(corrupt(image, "glass_blur", severity, 5), reference_corrupt(image, "glass_blur", severity, 5))


@pytest.mark.parametrize(("max_delta", "iterations"), [(0, 3), (2, 0)])
def test_no_moves_draws_nothing_and_only_blurs(max_delta: int, iterations: int) -> None:
    image = _random_image(32, 32, seed=1)
    np.random.seed(4)
    before = np.random.get_state()
    no_moves = glass_blur(image, 0.9, max_delta, iterations)
    assert _same_state(before, np.random.get_state())
    assert np.array_equal(no_moves, glass_blur(image, 0.9, 0, 0))
    assert not np.array_equal(no_moves, glass_blur(image, 0.9, 2, 1))


def test_zero_parameters_are_the_identity() -> None:
    image = _random_image(32, 40, seed=2)
    assert np.array_equal(np.uint8(glass_blur(image, 0.0, 0, 0)), image)


@pytest.mark.parametrize(("shape", "params"), [((32, 32), (1.0, 2, 1)), ((32, 32, 3), (-1.0, 2, 1)), ((32, 32, 3), (1.0, -2, 1))])
def test_bad_input_is_rejected(shape: tuple[int, ...], params: tuple[float, int, int]) -> None:
    with pytest.raises(ValueError, match="glass_blur needs|must be >= 0"):
        glass_blur(np.zeros(shape, dtype=np.uint8), *params)
