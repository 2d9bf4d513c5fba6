"""The embedded code model (TestNav §4.1, benchmark (iii)): a memorising retrieval model.

The paper generates with CodeGen-2B-mono; a local LLM runs at about 6 tokens/s on 2 cores, days for an
exhaustive ground truth. This model answers in microseconds and its pass rate is a real function of the
prompt it reads: it embeds the (perturbed) prompt, finds the most similar prompt in a bank of solved
problems, and answers with that problem's canonical solution if it recognises the prompt (cosine
similarity ≥ `threshold`), or with nothing (the empty completion) if it does not. The completion is then
executed against the real tests (`pipeline.code.robust_pass`): a wrong retrieval fails because another
problem's body does not solve this one, an abstention fails because the function returns None.

Embedding: TF-IDF of character 3- to 5-grams of the raw prompt, case and whitespace kept (code models
read cased sub-word tokens in which whitespace counts), hashed into 2^20 columns (scikit-learn's
`HashingVectorizer`'s columns, computed about three times faster by `char_ngram_hashing`; no vocabulary, so
n-grams that no bank prompt has, which perturbations create, keep their weight: the largest idf), idf fitted on
the bank prompts, L2-normalised. Why not the MiniLM
encoder: it lowercases its input (character case perturbations would be invisible to it), it treats
runs of whitespace as one separator, and it encodes a prompt in about 20-50 ms where this takes about
0.1 ms.

Why a threshold: measured on the 164 HumanEval prompts, plain nearest-neighbour retrieval finds the
right problem for 100% of prompts under level-5 butterfingers, whitespace or newline alone and for 96%
under (5, 5, 5, 5): a perturbed prompt still shares far more n-grams with its original than with any
other problem, so that model would show almost no degradation anywhere in Θ. Its similarity to the
original does fall with every perturbation (median 0.90 at butterfingers 5, 0.82 at character case 5,
0.75 at whitespace 5, 0.997 at newline 5, 0.68 at (5, 5, 5, 5)), and the threshold turns that into
failures: the model stands for one that has memorised the benchmark and answers only when it recognises
the prompt. `threshold` sets how much perturbation it tolerates. The default 0.7 was chosen on the first
40 problems (RP5@1, seed 0) for a graded response: 1.0 clean, 0.88 / 0.60 / 0.60 at butterfingers 3 /
character case 3 / whitespace 3, 0.60 / 0.42 / 0.55 at level 5, 0.62 at (1, 1, 1, 1), 0.30 at
(5, 5, 5, 5); 0.85 drops most of Θ to the floor (0.05), 0.6 leaves level 4 of butterfingers untouched.
Newline insertion alone never moves the similarity below 0.988: blank lines add few n-grams, so this model
is insensitive to them.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from pipeline.data.humaneval import CodeProblem
from pipeline.models.char_ngram_hashing import hashed_char_ngram_counts

DEFAULT_THRESHOLD = 0.7
NGRAMS = (3, 5)


def char_ngrams(text: str, low: int = NGRAMS[0], high: int = NGRAMS[1]) -> list[str]:
    """Every character n-gram of `text` for n in low..high, in order (whitespace and case kept)."""
    return [text[i : i + n] for n in range(low, high + 1) for i in range(len(text) - n + 1)]


class RetrievalCodeModel:
    """`complete(prompts) -> completions`: the canonical solution of the recognised bank problem, or ""."""

    def __init__(self, bank: Sequence[CodeProblem], *, threshold: float = DEFAULT_THRESHOLD,
                 ngrams: tuple[int, int] = NGRAMS, n_features: int = 2**20) -> None:
        from sklearn.feature_extraction.text import TfidfTransformer

        if not bank:
            raise ValueError("the solution bank is empty")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}")
        low, high = ngrams
        if not 1 <= low <= high:
            raise ValueError(f"ngrams must be (low, high) with 1 <= low <= high, got {ngrams}")
        self.bank = list(bank)
        self.threshold = float(threshold)
        self._hash = partial(hashed_char_ngram_counts, low=low, high=high, n_features=n_features)
        self._idf = TfidfTransformer(norm="l2", smooth_idf=True).fit(self._hash([p.prompt for p in self.bank]))
        self._keys = self._embed([p.prompt for p in self.bank])

    def _embed(self, prompts: Sequence[str]):
        return self._idf.transform(self._hash(list(prompts)))

    def similarities(self, prompts: Sequence[str]) -> np.ndarray:
        """(N, bank size) cosine similarities of the prompts to the bank prompts."""
        return np.asarray((self._embed(prompts) @ self._keys.T).todense())

    def retrieve(self, prompts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(index of the nearest bank problem or -1 when below the threshold, its similarity) per prompt.
        Ties go to the lower bank index."""
        sims = self.similarities(prompts)
        best = sims.argmax(axis=1)
        score = sims[np.arange(len(best)), best]
        return np.where(score >= self.threshold - 1e-12, best, -1), score

    def complete(self, prompts: Sequence[str]) -> list[str]:
        """One greedy completion per prompt: the body that follows the prompt."""
        index, _ = self.retrieve(prompts)
        return [self.bank[i].canonical_solution if i >= 0 else "" for i in index]

    def __call__(self, prompts: Sequence[str]) -> list[str]:
        return self.complete(prompts)
