"""The embedded vision dataset: scikit-learn's bundled handwritten digits as 32x32 RGB uint8 images.

scikit-learn ships the 1,797 8x8 images (values 0..16) inside the package, so this loads offline.
Images are upsampled bilinearly to `size` x `size`, scaled to 0..255 and replicated to three channels;
the split into train/dev/test is stratified by class with a fixed seed.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SPLITS = ("train", "dev", "test")


def digits_images(size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 digits as (N, size, size, 3) uint8 images and int64 labels."""
    if size < 8:
        raise ValueError(f"size must be at least 8 (the native resolution), got {size}")
    bunch = load_digits()
    small = torch.from_numpy(bunch.images.astype(np.float32) / 16.0)[:, None]  # (N, 1, 8, 8) in [0, 1]
    big = F.interpolate(small, size=(size, size), mode="bilinear", align_corners=False)
    grey = np.clip(np.rint(big[:, 0].numpy() * 255.0), 0, 255).astype(np.uint8)
    return np.repeat(grey[..., None], 3, axis=3), bunch.target.astype(np.int64)


def load_digits_splits(
    seed: int = 0, size: int = 32, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Stratified train/dev/test split of the digits; the test split is the clean test set D."""
    if len(fractions) != 3 or any(f <= 0 for f in fractions) or not np.isclose(sum(fractions), 1.0):
        raise ValueError(f"fractions must be three positive numbers summing to 1 (train, dev, test), got {fractions}")
    images, labels = digits_images(size)
    idx = np.arange(len(labels))
    train_idx, rest = train_test_split(idx, train_size=fractions[0], stratify=labels, random_state=seed)
    dev_share = fractions[1] / (fractions[1] + fractions[2])
    dev_idx, test_idx = train_test_split(rest, train_size=dev_share, stratify=labels[rest], random_state=seed)
    return {name: (images[np.sort(i)], labels[np.sort(i)]) for name, i in zip(SPLITS, (train_idx, dev_idx, test_idx))}
