"""The live evaluator's worker processes: values equal a direct evaluation, the pool lives across rounds and ends
with `close`, a worker's rejected input reaches the caller as the same one-line error; submitit jobs (one per
chunk) give the same values."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from pipeline.config.errors import ConfigError
from pipeline.benchmark.live_evaluation import LiveEvaluator
from pipeline.runtime.store import ResumeStore
from tests.synthetic import make_benchmark

THETAS = [(0, 0), (1, 2), (3, 1), (2, 2)]


def refuse() -> None:
    raise ConfigError("benchmark.dataset.path", "/nowhere.csv", "an existing CSV file")


def test_worker_processes_give_the_direct_values_and_live_across_rounds(tmp_path):
    factory = functools.partial(make_benchmark, 30, 4)
    direct = make_benchmark(30, 4)
    with ResumeStore(tmp_path / "store.sqlite") as store, \
            LiveEvaluator(factory, "synthetic", store, "fp", executor="processes", workers=2) as evaluate:
        values = evaluate(THETAS[:2])
        pool = evaluate._pool
        values += evaluate(THETAS[2:])
        assert evaluate._pool is pool and pool is not None  # one pool for every round
        assert evaluate.evaluated == 4 and evaluate(THETAS) == values  # the second time from the store
    assert evaluate._pool is None
    for theta, got in zip(THETAS, values):
        want = direct.evaluate(theta)
        assert {k: got[k] for k in ("psi", "delta", "rho_negmse")} == {k: want[k] for k in ("psi", "delta", "rho_negmse")}


def test_a_workers_error_arrives_whole(tmp_path):
    with ResumeStore(tmp_path / "store.sqlite") as store, \
            LiveEvaluator(refuse, "refuse", store, "fp", executor="processes", workers=2) as evaluate:
        with pytest.raises(ConfigError, match=r"^benchmark.dataset.path: '/nowhere.csv' — an existing CSV file$"):
            evaluate(THETAS)


def test_submitit_jobs_give_the_direct_values(tmp_path):
    """`submitit_local`: one submitit job per chunk of a round, each a process of its own (`python -m
    submitit.local._local`, the path a SLURM array takes minus sbatch); the values equal a direct evaluation and
    are kept in the store. The live search stage through it, killed and resumed as a user runs it:
    tests/scripts/test_submitit.py (slow tier)."""
    factory = functools.partial(make_benchmark, 30, 4)
    direct = make_benchmark(30, 4)
    with ResumeStore(tmp_path / "store.sqlite") as store, \
            LiveEvaluator(factory, "synthetic", store, "fp", executor="submitit_local", workers=2, submitit={"timeout_min": 5},
                          folder=tmp_path / "jobs") as evaluate:
        values = evaluate(THETAS)
        assert evaluate.evaluated == 4 and evaluate(THETAS) == values  # the second time from the store: no new job
    assert len(list((tmp_path / "jobs").glob("*_result.pkl"))) == 2  # one job per chunk of the round
    for theta, got in zip(THETAS, values):
        want = direct.evaluate(theta)
        assert {k: got[k] for k in ("psi", "delta", "rho_negmse")} == {k: want[k] for k in ("psi", "delta", "rho_negmse")}


def test_racing_slices_run_in_the_workers_and_resume_from_the_store(tmp_path):
    """Racing's units (θ, rows, fidelity): in worker processes, each the model's answers on those rows of the
    composed T_θ (a full evaluation's at the same rows) and, at a first slice, every ρ on all n inputs; asked again,
    from the store: no input is evaluated twice."""
    factory = functools.partial(make_benchmark, 30, 4)
    direct = make_benchmark(30, 4)
    asks = [((1, 2), [3, 0, 7], True), ((1, 2), [10, 11], False), ((3, 1), list(range(30)), True)]
    with ResumeStore(tmp_path / "store.sqlite") as store, \
            LiveEvaluator(factory, "synthetic", store, "fp", executor="processes", workers=2) as evaluate:
        got = evaluate.slices(asks)
        assert evaluate.inputs_evaluated == 35
        assert evaluate.slices(asks) == got and evaluate.inputs_evaluated == 35
    from pipeline.perturb.compose import compose

    for (theta, rows, fidelity), answer in zip(asks, got):
        perturbed = compose(direct.perturbations, direct.clean, theta, direct.seed)
        assert answer["prediction"] == direct.predict(perturbed)[rows].tolist()
        assert ("rho_negmse" in answer) == fidelity
        if fidelity:
            assert answer["rho_negmse"] == direct.evaluate(theta)["rho_negmse"]
    full = direct.evaluate((3, 1))
    assert sum(np.asarray(got[2]["prediction"]) == direct.labels) / 30 == full["psi"]
