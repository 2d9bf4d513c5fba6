"""The 4,200 tweets of VADER's ground truth (Hutto and Gilbert, ICWSM 2014: `tweets_GroundTruth.txt`, each
with the mean sentiment rating of about 20 raters on -4..4), from the source archive of `vaderSentiment` 3.3.2
(`additional_resources/hutto_ICWSM_2014.tar.gz`).

Labels are the paper's two-class task: 1 (positive) where the mean rating is above 0, 0 (negative) below it; the
4 tweets rated 0 on average belong to neither class and are left out (4,196 remain)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.data.image_folder import subset_indices
from pipeline.data.packages import packaged_file

PACKAGED = "vaderSentiment-3.3.2/tweets_GroundTruth.txt"


def read_ratings(path: str | Path) -> tuple[list[str], np.ndarray]:
    """(texts, mean ratings) of a `*_GroundTruth.txt` file: tab-separated id, mean rating, text (CRLF lines)."""
    texts, ratings = [], []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: expected 3 tab-separated fields (id, mean rating, text), got {len(fields)}")
        ratings.append(float(fields[1]))
        texts.append(fields[2])
    return texts, np.asarray(ratings)


class VaderTweetsTestSet:
    """The rated tweets as the clean test set D: texts and labels 0 (negative) / 1 (positive).

    limit: a seeded simple random subset of this many tweets, in file order (None: all 4,196);
    path: the ground-truth file (None: the one the set-up took out of vaderSentiment's archive)."""

    def __init__(self, limit: int | None = None, seed: int = 0, path: str | None = None) -> None:
        self.path = Path(path).expanduser() if path else packaged_file(PACKAGED)
        self.limit, self.seed = limit, int(seed)

    def test_set(self) -> tuple[list[str], np.ndarray]:
        texts, ratings = read_ratings(self.path)
        rated = np.flatnonzero(ratings != 0)
        keep = rated[subset_indices(len(rated), self.limit, self.seed)]
        return [texts[i] for i in keep], (ratings[keep] > 0).astype(np.int64)
