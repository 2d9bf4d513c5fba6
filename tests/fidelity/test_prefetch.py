"""BERT-F1's prefetch (many perturbed sets encoded in one call, `BERTScoreFidelity.prefetch`) and the ground
truth's use of it (`Benchmark.evaluate_many`): the same values bit for bit, in fewer forward passes."""
from __future__ import annotations

import numpy as np

from pipeline.benchmark.problem import PREFETCH_INPUTS, Benchmark
from pipeline.fidelity.text import BERTScoreFidelity
from pipeline.models.text_encoder import TextEncoder
from tests.synthetic import make_benchmark


def _variants(clean: list[str]) -> list[list[str]]:
    """Six perturbed sets of the clean texts: the k-th word dropped, for k = 0..5 (texts of many lengths)."""
    return [[" ".join(w for i, w in enumerate(t.split()) if i != k) for t in clean] for k in range(6)]


class _Counting(TextEncoder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _forward(self, ids):
        self.calls += 1
        return super()._forward(ids)


def test_prefetched_scores_equal_one_set_at_a_time_in_fewer_forward_passes(clean):
    sets = _variants(clean)
    plain_encoder, warm_encoder = _Counting(), _Counting()
    plain, warm = BERTScoreFidelity(clean, plain_encoder), BERTScoreFidelity(clean, warm_encoder)
    expected = [plain.per_input(s) for s in sets]
    warm.prefetch(sets)
    after_prefetch = warm_encoder.calls
    got = [warm.per_input(s) for s in sets]
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))  # bit for bit
    assert warm_encoder.calls == after_prefetch  # scoring found every text in the cache
    assert warm_encoder.forward_texts == plain_encoder.forward_texts  # each distinct text once, either way
    assert warm_encoder.calls < plain_encoder.calls


class _Recording:
    """A fidelity metric with a prefetch that records the sets it is handed."""

    def __init__(self, clean: np.ndarray) -> None:
        self.clean, self.handed = clean, []

    def prefetch(self, sets) -> None:
        self.handed.append(len(sets))

    def __call__(self, x) -> float:
        return -float(np.mean((np.asarray(x) - self.clean) ** 2))


def test_evaluate_many_hands_a_prefetching_metric_whole_groups_and_keeps_every_value():
    base = make_benchmark(300, 4)
    metric = _Recording(base.clean)
    bench = Benchmark(name="prefetch", space=base.space, perturbations=base.perturbations, clean=base.clean, labels=base.labels,
                      predict=base.predict, task_metric=base.task_metric, fidelity={"negmse": metric})
    thetas = [tuple(int(v) for v in t) for t in bench.space.grid()]
    values = dict(bench.evaluate_many(thetas))
    step = PREFETCH_INPUTS // 300
    assert metric.handed == [min(step, len(thetas) - i) for i in range(0, len(thetas), step)]
    for theta in thetas:
        direct = bench.evaluate(theta)
        assert {k: values[theta][k] for k in ("psi", "delta", "rho_negmse")} == {k: direct[k] for k in ("psi", "delta", "rho_negmse")}
