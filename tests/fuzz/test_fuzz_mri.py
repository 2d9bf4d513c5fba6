import numpy as np
import pytest

from pipeline.fuzz import Evaluator, batch_from_single, compute_mri, directional_mri, empirical_cvar, mri_value
from pipeline.fuzz.mri import summarise_omegas
from tests.fuzz.fuzz_models import Quadratic


def test_chapter_worked_example_statistics_give_1_44():
    # §9.2.3: mean 0.8, P75 1.4, P95 3.1 with weights (0.5, 0.3, 0.2).
    assert mri_value(0.8, 1.4, 3.1) == pytest.approx(1.44, abs=1e-12)
    # The same statistics realised by a sample: 21 deviations with ω_(15) = 1.4, ω_(19) = 3.1, mean 0.8.
    omegas = np.array([4.0 / 15] * 15 + [1.4, 1.5, 1.6, 1.7, 3.1, 3.5])
    r = summarise_omegas(1.7, 1.7 + omegas)
    assert (r.mean_omega, r.p75_omega, r.p95_omega) == pytest.approx((0.8, 1.4, 3.1), abs=1e-12)
    assert r.mri == pytest.approx(1.44, abs=1e-12)
    assert r.worst_case_mae == pytest.approx(1.7 + 3.5)


def chapter_loop(params, evaluate_fn, n, scale, weights, rng):
    """§9.2.1–9.2.2 transcribed: the oracle for compute_mri."""
    base, _ = evaluate_fn(params)
    omegas = []
    for _ in range(n):
        noise = rng.normal(0.0, scale, size=params.shape)
        pert = np.clip(params * np.exp(noise), 0.001, 1e6)
        e, _ = evaluate_fn(pert)
        omegas.append(abs(e - base))
    w = np.array(omegas)
    return weights[0] * w.mean() + weights[1] * np.percentile(w, 75) + weights[2] * np.percentile(w, 95)


def test_compute_mri_matches_the_chapter_loop_and_defaults_to_seed_42():
    q = Quadratic(np.diag([1.0, 4.0, 0.5]), [1.0, 3.0, 1e5])  # θ* near the clamp: clipping matters
    params = np.array([1.0, 3.0, 1e5])
    expected = chapter_loop(params, q.single, 300, 0.5, (0.5, 0.3, 0.2), np.random.default_rng(42))
    assert compute_mri(params, q.single).mri == pytest.approx(expected, rel=1e-12)
    got = compute_mri(params, q.single, 50, 0.8, (0.2, 0.3, 0.5), np.random.default_rng(7))
    assert got.mri == pytest.approx(chapter_loop(params, q.single, 50, 0.8, (0.2, 0.3, 0.5), np.random.default_rng(7)), rel=1e-12)
    assert got.n_perturbations == 50 and len(got.perturbation_errors) == 50


def test_batched_and_single_callbacks_give_identical_results():
    q = Quadratic(np.array([[2.0, 0.5], [0.5, 1.0]]), [2.0, 0.3])
    params = np.array([2.0, 0.3])
    a = compute_mri(params, q.single, 120, rng=np.random.default_rng(3))
    b = compute_mri(params, q.single, 120, rng=np.random.default_rng(3), evaluate_batch_fn=q.batch)
    assert a.perturbation_errors == pytest.approx(b.perturbation_errors, rel=1e-12)
    assert a.mri == pytest.approx(b.mri, rel=1e-12)
    # Bit-for-bit when the batched callback is the single one looped.
    c = compute_mri(params, q.single, 120, rng=np.random.default_rng(3), evaluate_batch_fn=batch_from_single(q.single))
    assert c == a


def rockafellar_uryasev(omegas, alpha):
    # CVaR_α = min_c c + E[(ω − c)+]/α; the minimum of this convex piecewise-linear function is at a sample.
    return min(c + np.maximum(omegas - c, 0).mean() / alpha for c in omegas)


@pytest.mark.parametrize("n", [1, 7, 20, 99, 300])
def test_empirical_cvar_matches_the_variational_formula(n):
    rng = np.random.default_rng(n)
    omegas = rng.lognormal(0, 1.5, size=n)
    for alpha in (0.05, 0.1, 0.5, 1.0):
        assert empirical_cvar(omegas, alpha) == pytest.approx(rockafellar_uryasev(omegas, alpha), rel=1e-10)
    assert empirical_cvar(np.arange(1.0, 21.0), 0.05) == 20.0  # αN = 1: the single worst
    assert empirical_cvar(np.arange(1.0, 21.0), 0.1) == 19.5


def test_cvar_is_reported_and_bounds_p95():
    q = Quadratic(np.diag([3.0, 1.0]), [1.0, 1.0])
    r = compute_mri(np.ones(2), q.single, 400)
    assert r.cvar_alpha == 0.05
    assert r.cvar_omega == pytest.approx(empirical_cvar(r.omegas, 0.05))
    assert r.p95_omega <= r.cvar_omega <= r.omegas.max()


def test_directional_mri_of_a_dimension_without_influence_is_zero_and_means_add_up():
    # Exercise 9.1. For a quadratic at its minimum E[ω] = σ²/2 tr(H) = Σ_i σ²/2 H_ii: the mean part of
    # the MRI is additive over dimensions even with off-diagonal curvature; the tail parts are not.
    h = np.array([[2.0, 0.8, 0.0], [0.8, 1.0, 0.0], [0.0, 0.0, 0.0]])
    q = Quadratic(h, [1.0, 1.0, 1.0])
    r = directional_mri(np.ones(3), ["a", "b", "c"], q.single, 4000, 0.2, evaluate_batch_fn=q.batch)
    assert r.per_dim[2].mri == 0.0
    means = [p.mean_omega for p in r.per_dim]
    for got, hii in zip(means, np.diag(h)):
        assert got == pytest.approx(0.2**2 / 2 * hii, rel=0.08)
    assert sum(means) == pytest.approx(r.global_mri.mean_omega, rel=0.08)
    assert r.sum_directional == pytest.approx(sum(p.mri for p in r.per_dim))
    assert r.interaction == pytest.approx(r.global_mri.mri - r.sum_directional)
    assert r.shares["c"] == 0.0


def test_evaluator_counts_and_memoizes():
    calls = []

    def f(p):
        calls.append(p.copy())
        return float(p.sum()), {"s": float(p.sum())}

    ev = Evaluator(f, memoize=True)
    rows = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    errors, per = ev.many(rows)
    assert errors.tolist() == [3.0, 7.0, 3.0] and per["s"].tolist() == [3.0, 7.0, 3.0]
    assert ev.n_evaluations == 2 and len(calls) == 2
    assert ev.one(np.array([3.0, 4.0]))[0] == 7.0 and ev.n_evaluations == 2


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_perturbations": 0}, "n_perturbations"), ({"scale": 0.0}, "scale"), ({"weights": (0.5, 0.5)}, "weights"),
     ({"weights": (0.5, -0.1, 0.6)}, "weights")],
)
def test_bad_arguments_are_named(kwargs, match):
    q = Quadratic(np.eye(2), [1.0, 1.0])
    with pytest.raises(ValueError, match=match):
        compute_mri(np.ones(2), q.single, **kwargs)


def test_bad_cvar_level_and_params_are_named():
    with pytest.raises(ValueError, match="alpha"):
        empirical_cvar([1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="params"):
        compute_mri(np.ones((2, 2)), lambda p: (0.0, {}))
