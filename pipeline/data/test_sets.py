"""The built-in clean test sets D as plug-ins (`pipeline.plugins.protocols.DataSet`): each `conf/benchmark/<name>.yaml`
names one of these classes as `benchmark.dataset._target_`, as a user's config names a class of their own.
The embedded sets read what the prepare stage wrote into the benchmark's folder; the real-world ones read
their files where they are."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pipeline.perturb.text_pairs import TextPair


class DigitsTestSet:
    """The digits test split of `data_dir/splits.npz` (its first `test_limit` images), (N, size, size, 3) uint8."""

    def __init__(self, data_dir: Path, size: int, split_seed: int, test_limit: int | None = None) -> None:
        self.data_dir, self.test_limit = Path(data_dir), test_limit

    def test_set(self) -> tuple[np.ndarray, np.ndarray]:
        with np.load(self.data_dir / "splits.npz") as z:
            x, y = z["test_x"], z["test_y"]
        return (x[: self.test_limit], y[: self.test_limit]) if self.test_limit is not None else (x, y)


class TinyImagenetTestSet:
    """Tiny-ImageNet validation images read from `root` (`pipeline.data.tiny_imagenet`)."""

    def __init__(self, root: str, limit: int | None = None, size: int | None = None) -> None:
        self.root, self.limit, self.size = root, limit, size

    def test_set(self) -> tuple[np.ndarray, np.ndarray]:
        from pipeline.data.tiny_imagenet import load_tiny_imagenet_val

        return load_tiny_imagenet_val(self.root, limit=self.limit, size=self.size)


class BBCNewsTestSet:
    """The BBC News leads the prepare stage wrote as `data_dir/test.json`."""

    def __init__(self, data_dir: Path, split_seed: int, test_size: int | None = None) -> None:
        self.data_dir = Path(data_dir)

    def test_set(self) -> tuple[list[str], np.ndarray]:
        test = json.loads((self.data_dir / "test.json").read_text(encoding="utf-8"))
        return list(test["texts"]), np.asarray(test["labels"], dtype=np.int64)


class QQPTestSet:
    """The question pairs `prepare` read from the local QQP copy and wrote as `data_dir/test.json`."""

    def __init__(self, data_dir: Path, root: str | None, limit: int | None = None) -> None:
        self.data_dir = Path(data_dir)

    def test_set(self) -> tuple[list[TextPair], np.ndarray]:
        from pipeline.data.qqp import read_pairs

        return read_pairs(self.data_dir / "test.json")
