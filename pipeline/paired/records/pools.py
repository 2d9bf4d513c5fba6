"""Record pools: the labelled data a records stage trains its model zoo on and predicts, per source.

A pool, `load(seed, image_size) -> (train, test)` with each split (inputs, labels), gives the zoo's training
split and the test split whose clean and perturbed predictions become the prediction records
(`pipeline.paired.records.table`); its modality (a fact of `pipeline.plugins.catalog.POOLS`) says which zoo kinds and
which synthetic perturbations fit it. The split seed is the records' seed, so a pool is a pure function of its settings.

* ``digits``: scikit-learn's 8×8 digits upscaled to `image_size` (`pipeline.data.digits`), ~360 test images;
* ``bbc_news``: the BBC News lead paragraphs of the text benchmark (`pipeline.data.text_corpus`), its full
  414-lead test split (the text benchmark's ground truth uses a 60-lead subset of it; records are cheap
  enough per condition to use all of it, and the paired bounds need many images per cell).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.plugins.catalog import POOLS
from pipeline.paired.records.table import split_dev_eval

Split = tuple[Any, np.ndarray]


def digits_pool(seed: int, image_size: int | None) -> tuple[Split, Split]:
    from pipeline.data.digits import load_digits_splits

    splits = load_digits_splits(seed=seed, size=int(image_size))
    return splits["train"], splits["test"]


def bbc_news_pool(seed: int, image_size: int | None) -> tuple[Split, Split]:
    from pipeline.data.text_corpus import load_text_splits

    splits = load_text_splits(seed=seed, test_size=None)
    return splits["train"], splits["test"]


@dataclass(frozen=True)
class PoolImages:
    """The test inputs of a pool (an image stack or a list of texts) with their labels, record ids and dev/eval split."""

    images: np.ndarray
    labels: np.ndarray
    image_ids: np.ndarray
    split: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.labels)
        if not (len(self.images) == len(self.image_ids) == len(self.split) == n):
            raise ValueError(f"images {len(self.images)}, labels {n}, ids {len(self.image_ids)} and split "
                             f"{len(self.split)} must have one length")


def pool_test_set(rec: dict) -> tuple[Split, PoolImages]:
    """The train split and the test set of a records config (`paired.records`): the pool's test split (its
    first `test_limit` inputs), record ids test0000…, and the within-class dev/eval split of `dev_fraction`."""
    train, (test_x, test_y) = POOLS.get(rec["pool"])(rec["seed"], rec["image_size"])
    if rec["test_limit"] is not None:
        test_x, test_y = test_x[: rec["test_limit"]], test_y[: rec["test_limit"]]
    ids = np.array([f"test{i:04d}" for i in range(len(test_y))])
    return train, PoolImages(test_x, test_y, ids, split_dev_eval(test_y, rec["dev_fraction"], rec["seed"]))

