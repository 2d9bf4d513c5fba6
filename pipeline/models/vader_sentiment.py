"""A sentiment model that is not ours: VADER (Hutto and Gilbert, ICWSM 2014; `vaderSentiment` 3.3.2, MIT licence),
a rule-based scorer over a human-rated lexicon. Its compound score lies in [-1, 1]; on the paper's two-class task
a text is positive where the compound is at least 0 (the rule that gives the paper's F1 of 0.96 on its tweets)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class VaderSentiment:
    """The model under test of `benchmark=tweets`: `predict` gives 1 (positive) or 0 (negative) per text."""

    def __init__(self) -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.analyzer = SentimentIntensityAnalyzer()

    def compound(self, texts: Sequence[str]) -> np.ndarray:
        """VADER's normalised compound score of each text, in [-1, 1]."""
        return np.array([self.analyzer.polarity_scores(t)["compound"] for t in texts], dtype=np.float64)

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return (self.compound(texts) >= 0).astype(np.int64)
