"""What BERT-F1's prefetch saves in the text ground truth (`BERTScoreFidelity.prefetch`, `Benchmark.evaluate_many`).

The encoder batches only texts of equal token length (a text's encoding is then the same bits whatever its
batch), so one configuration's 60 BBC News leads go through it nearly one at a time; the ground truth hands
BERT-F1 the perturbed sets of about 1,024 inputs at once instead. Measured in one process on the same kind of
sets (each a typo perturbation of the clean leads at its own level and seed): K sets encoded one call each by a
fresh encoder (the reference) against K other sets in one call by another fresh encoder. Prints both times, the
ratio, and whether the prefetched encodings equal the ones computed set by set.

    python perf/bench_text_prefetch.py            # 17 sets of 60 leads (one prefetch group), twice
    python perf/bench_text_prefetch.py --quick    # 3 sets of 12 leads, once (seconds)
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: the pinned numerics the stages run under)

import argparse
import time

import torch

from pipeline.data.text_corpus import load_text_splits
from pipeline.models.text_encoder import TextEncoder
from pipeline.runtime.numerics import configure_torch
from pipeline.perturb.registry import get_perturbation


def typo_sets(clean: list[str], count: int, offset: int) -> list[list[str]]:
    """`count` perturbed sets of `clean`: typos at level 1..5 in turn, each set with seeds of its own."""
    typo = get_perturbation("typo")
    return [[typo.apply(text, k % 5 + 1, (offset + k) * 1000 + i) for i, text in enumerate(clean)] for k in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 sets of 12 leads, one repetition")
    args = parser.parse_args()
    configure_torch()
    n, count, repeats = (12, 3, 1) if args.quick else (60, 17, 2)
    clean = load_text_splits(seed=0, test_size=n)["test"][0]
    for r in range(repeats):
        one, many = typo_sets(clean, count, 2 * r * count), typo_sets(clean, count, (2 * r + 1) * count)
        reference, prefetching = TextEncoder(), TextEncoder()
        t = time.perf_counter()
        for texts in one:
            reference.encode(texts)
        alone = time.perf_counter() - t
        t = time.perf_counter()
        prefetching.encode([text for texts in many for text in texts])
        together = time.perf_counter() - t
        same = all(torch.equal(a.tokens, b.tokens) and (a.sentence == b.sentence).all()
                   for texts in many for a, b in zip(prefetching.encode(texts), TextEncoder().encode(texts)))
        print(f"{count} sets of {n} leads: one call per set {alone:.2f} s, one call for all {together:.2f} s "
              f"-> {alone / together:.2f}x; prefetched encodings equal set by set: {same}")


if __name__ == "__main__":
    main()
