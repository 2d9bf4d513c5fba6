import itertools

import numpy as np

from pipeline.perturb.compose import PrefixCache, compose, step_seed
from pipeline.perturb.registry import Perturbation
from tests.synthetic import make_benchmark


def _recording(name, log):
    def apply(x, level, seed):
        log.append((name, level))
        return x * 10 + level  # order-revealing: T2(T1(x)) differs from T1(T2(x))
    return Perturbation(name, "test", 5, apply)


def test_composition_applies_t1_first_and_skips_identity():
    log = []
    perts = [_recording("t1", log), _recording("t2", log), _recording("t3", log)]
    out = compose(perts, np.array([0.0]), (1, 0, 2), global_seed=0)
    assert log == [("t1", 1), ("t3", 2)]  # level 0 is the identity, never applied
    assert out[0] == (0 * 10 + 1) * 10 + 2


def test_step_seed_depends_only_on_seed_input_and_prefix():
    assert step_seed(0, 3, (1, 2)) == step_seed(0, 3, (1, 2))
    assert len({step_seed(0, 3, (1, 2)), step_seed(1, 3, (1, 2)), step_seed(0, 4, (1, 2)), step_seed(0, 3, (2, 2)), step_seed(0, 3, (1, 2, 0))}) == 5


def test_prefix_cache_equals_direct_composition_and_saves_applications():
    bench = make_benchmark(n_inputs=7, levels=3)
    thetas = list(itertools.product(range(3), repeat=2))
    cache = PrefixCache(bench.perturbations, bench.clean, bench.seed)
    for theta in thetas:
        np.testing.assert_array_equal(cache.get(theta), compose(bench.perturbations, bench.clean, theta, bench.seed))
    # active applications with reuse: level-1 prefixes (2 active) + leaves with θ_2 > 0 (3 x 2) = 8,
    # against 2 x 9 - (identity steps) = 12 without reuse
    assert cache.applications == 2 + 6


def test_evaluation_order_does_not_change_values():
    bench = make_benchmark(n_inputs=9, levels=3)
    thetas = list(itertools.product(range(3), repeat=2))
    forward = dict(bench.evaluate_many(thetas))
    for theta in reversed(thetas):
        direct = bench.evaluate(theta)
        for key in ("psi", "delta", "rho_negmse", "rho_negmax"):
            assert direct[key] == forward[theta][key]


def test_composing_some_inputs_perturbs_them_as_in_the_full_set():
    """Racing's slices: the inputs `rows` composed alone, with their indices, equal those rows of the full T_θ."""
    bench = make_benchmark(n_inputs=12, levels=3)
    rows = [9, 2, 5]
    for theta in [(1, 2), (2, 0), (0, 1)]:
        full = compose(bench.perturbations, bench.clean, theta, bench.seed)
        np.testing.assert_array_equal(compose(bench.perturbations, bench.clean[rows], theta, bench.seed, rows), full[rows])
    assert not np.array_equal(compose(bench.perturbations, bench.clean[rows], (1, 2), bench.seed),
                              compose(bench.perturbations, bench.clean, (1, 2), bench.seed)[rows])  # without: other draws
