"""Speed of the compiled glass blur vs imagecorruptions' reference, measured in one run.

    .venv/bin/python perf/bench_glass_blur.py [--images-32 N] [--images-224 N]
    .venv/bin/python perf/bench_glass_blur.py --quick   # 3 images at 32x32, 1 at 224x224

Prints numba's compile time (a fresh, uncached compilation of the pixel-move kernel), then, per image size
and severity, the median time per image of the reference and of the compiled version on the same images and
seeds (after warm-up), their ratio, and checks that both outputs are bit-identical.
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from PIL import Image

from pipeline.perturb.glass_blur import GLASS_BLUR_SEVERITIES, _move_pixels, glass_blur
from pipeline.perturb.imagenet_c import reference_function


def compile_seconds() -> float:
    """Time of the first call of a freshly jitted (uncached) copy of the kernel: typing + LLVM compilation."""
    kernel = numba.njit(_move_pixels.py_func)
    x = np.zeros((8, 8, 3), dtype=np.uint8)
    shifts = np.zeros((1, 6, 6, 2), dtype=np.int64)
    start = time.perf_counter()
    kernel(x, shifts, 1)
    return time.perf_counter() - start


def time_per_image(fn, images: list[np.ndarray], severity: int) -> tuple[float, list[np.ndarray]]:
    """Median wall time of one call over the images (robust to other load on the machine), and the outputs."""
    outs, seconds = [], []
    for seed, image in enumerate(images):
        np.random.seed(seed)
        start = time.perf_counter()
        outs.append(fn(image, severity))
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), outs


def main() -> None:
    """Compile time, then reference and compiled medians per size and severity, checked bit-identical."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images-32", type=int, default=20, help="images per severity at 32x32")
    parser.add_argument("--images-224", type=int, default=3, help="images per severity at 224x224")
    parser.add_argument("--quick", action="store_true", help="3 images per severity at 32x32 and 1 at 224x224")
    args = parser.parse_args()
    counts = (3, 1) if args.quick else (args.images_32, args.images_224)

    print(f"numba {numba.__version__}: kernel compile time {compile_seconds():.3f} s (fresh, uncached)")
    reference = reference_function("glass_blur")

    def run_reference(image: np.ndarray, severity: int) -> np.ndarray:
        return reference(Image.fromarray(image), severity)

    def run_fast(image: np.ndarray, severity: int) -> np.ndarray:
        return glass_blur(image, *GLASS_BLUR_SEVERITIES[severity - 1])

    rng = np.random.default_rng(0)
    run_fast(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8), 1)  # warm-up: load the cached kernel
    print(f"{'size':>8} {'severity':>8} {'reference s/img':>16} {'compiled s/img':>15} {'speed-up':>9}  (medians)")
    for size, count in zip((32, 224), counts):
        images = [rng.integers(0, 256, (size, size, 3), dtype=np.uint8) for _ in range(count)]
        total_reference = total_fast = 0.0
        for severity in range(1, 6):
            t_reference, out_reference = time_per_image(run_reference, images, severity)
            t_fast, out_fast = time_per_image(run_fast, images, severity)
            if not all(np.array_equal(a, b) for a, b in zip(out_reference, out_fast)):
                raise SystemExit(f"outputs differ at {size}x{size}, severity {severity}")
            total_reference, total_fast = total_reference + t_reference, total_fast + t_fast
            print(f"{size:>5}^2 {severity:>8} {t_reference:>16.5f} {t_fast:>15.5f} {t_reference / t_fast:>8.1f}x")
        print(f"{size:>5}^2 {'all':>8} {total_reference / 5:>16.5f} {total_fast / 5:>15.5f} "
              f"{total_reference / total_fast:>8.1f}x  (bit-identical on {count} images x 5 severities)")


if __name__ == "__main__":
    main()
