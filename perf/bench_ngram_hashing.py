"""The retrieval code model's hashed character n-grams: scikit-learn's `HashingVectorizer` against the vectorised
`pipeline.models.char_ngram_hashing`, on the same perturbed HumanEval prompts, in one run.

Perturbs the 164 HumanEval prompts under random configurations of the code benchmark's four perturbations (seeded),
hashes them both ways (one call per configuration, as the ground truth calls the model), and prints both times,
their ratio, and whether the count matrices and the retrieval model's similarities are identical.

    python perf/bench_ngram_hashing.py [--configurations 40]
    python perf/bench_ngram_hashing.py --quick   # 4 configurations
"""
from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.runtime.numerics import ensure_pinned  # noqa: E402

ensure_pinned()

import numpy as np  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configurations", type=int, default=40, help="random configurations θ of the 6^4 space")
    parser.add_argument("--quick", action="store_true", help="4 configurations")
    args = parser.parse_args()

    from sklearn.feature_extraction.text import HashingVectorizer

    from pipeline.data.humaneval import load_humaneval
    from pipeline.models.char_ngram_hashing import hashed_char_ngram_counts
    from pipeline.models.code_retrieval import NGRAMS, RetrievalCodeModel, char_ngrams
    from pipeline.perturb.compose import compose
    from pipeline.perturb.registry import get_perturbation

    problems = load_humaneval()
    prompts = [p.prompt for p in problems]
    perturbations = [get_perturbation(n) for n in ("butterfingers", "char_case", "whitespace", "newline")]
    rng = np.random.default_rng(0)
    n = 4 if args.quick else args.configurations
    batches = [compose(perturbations, prompts, tuple(int(v) for v in rng.integers(0, 6, size=4)), 0) for _ in range(n)]
    low, high, n_features = *NGRAMS, 2**20
    reference = HashingVectorizer(analyzer=partial(char_ngrams, low=low, high=high), n_features=n_features,
                                  alternate_sign=False, norm=None)

    t0 = time.perf_counter()
    want = [reference.transform(batch) for batch in batches]
    t_reference = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = [hashed_char_ngram_counts(batch, low, high, n_features) for batch in batches]
    t_ours = time.perf_counter() - t0
    identical = all((g != w).nnz == 0 and np.array_equal(g.indices, w.indices) and np.array_equal(g.indptr, w.indptr)
                    for g, w in zip(got, want))
    model = RetrievalCodeModel(problems)
    sims = [model.similarities(batch) for batch in batches]
    keys = reference.transform(prompts)
    from sklearn.feature_extraction.text import TfidfTransformer

    idf = TfidfTransformer(norm="l2", smooth_idf=True).fit(keys)
    same_sims = all(np.array_equal(s, np.asarray((idf.transform(w) @ idf.transform(keys).T).todense())) for s, w in zip(sims, want))
    grams = int(sum(w.sum() for w in want))
    print(f"{sum(map(len, batches))} perturbed prompts ({grams} n-grams) in {n} calls: scikit-learn {t_reference:.2f} s, "
          f"vectorised {t_ours:.2f} s -> {t_reference / t_ours:.1f}x faster")
    print(f"count matrices identical: {identical}; retrieval similarities identical: {same_sims}")


if __name__ == "__main__":
    main()
