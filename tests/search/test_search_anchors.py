"""The anchor methods of issue 20 (Optuna NSGA-II / TPE / GP, BoTorch qLogNEHVI, ε-PAL) on small tables, the
trace checked against the table itself, and ε-PAL's classification rule on hand-made regions."""
from __future__ import annotations

import functools
import math
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.plugins import catalog
from pipeline.search import METHODS, TableOracle, pareto_flags, run_metrics, run_search
from pipeline.search.methods.base import Method
from pipeline.search.methods.epal import DISCARDED, PARETO, UNDECIDED, beta, classify, intersect
from pipeline.search.ledger import Ledger
from pipeline.search.traces import validate_trace
from pipeline.front.space import Space
from tests.search.search_fixtures import NAMES4, synthetic_table

ANCHORS = ("optuna_nsga2", "optuna_tpe", "optuna_gp", "botorch_qlognehvi", "epal")
SINGLE_PASS = ("botorch_qlognehvi", "epal")


def slow_botorch(names):
    """`names` with BoTorch's in the slow tier (9 s a test, its fits on a full lattice); its accounting and its batches
    stay in the fast one."""
    return [pytest.param(n, marks=pytest.mark.slow) if n == "botorch_qlognehvi" else n for n in names]


@functools.cache
def small_table() -> tuple[Space, pd.DataFrame, TableOracle]:
    space = Space(NAMES4[:3], 4)
    table = synthetic_table(space)
    return space, table, TableOracle.from_table(table, space, "delta_norm", "rho_ssim_norm")


@pytest.fixture(scope="module")
def problem() -> tuple[Space, pd.DataFrame, TableOracle]:
    return small_table()


@functools.cache
def first_run(name: str) -> pd.DataFrame:
    """`name`'s run of 20 proposals at seed 5 on the small table: checked for its accounting, and run again for
    determinism (GP and BoTorch proposals cost up to a second each: one run serves both tests). Read, never changed."""
    space, _, oracle = small_table()
    return run_search(name, oracle, space, 20, seed=5)


def expected_accounting(trace: pd.DataFrame, space: Space, table: pd.DataFrame) -> None:
    """b = 1..k, is_new at first occurrences, u = distinct configurations so far, (δ, ρ) from the table."""
    keys = [tuple(row) for row in trace[list(space.names)].to_numpy().tolist()]
    assert trace["b"].tolist() == list(range(1, len(trace) + 1))
    first = [k not in keys[:i] for i, k in enumerate(keys)]
    assert trace["is_new"].tolist() == first
    assert trace["u"].tolist() == np.cumsum(first).tolist()
    lookup = table.set_index(list(space.names))[["delta_norm", "rho_ssim_norm"]]
    np.testing.assert_array_equal(trace[["delta", "rho"]].to_numpy(), lookup.loc[keys].to_numpy())


@pytest.mark.parametrize("name", ANCHORS)
def test_trace_accounting(problem, name):
    space, table, _ = problem
    trace = first_run(name)
    assert len(trace) == 20
    expected_accounting(trace, space, table)
    if name in SINGLE_PASS:
        assert trace["is_new"].all()


@pytest.mark.parametrize("name", slow_botorch(ANCHORS))
def test_deterministic_per_seed_and_different_across_seeds(problem, name):
    space, _, oracle = problem
    a, b = first_run(name), run_search(name, oracle, space, 20, seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = run_search(name, oracle, space, 20, seed=6)
    assert not a[list(space.names)].equals(c[list(space.names)])


@pytest.mark.parametrize("name", slow_botorch(SINGLE_PASS))
def test_single_pass_runs_visit_all_of_theta_and_recover_the_front(name):
    space = Space(NAMES4[:3], 3)
    table = synthetic_table(space)
    trace = run_search(name, TableOracle.from_table(table, space), space, 5 * space.size, seed=1)
    assert len(trace) == space.size and trace["is_new"].all()
    assert run_metrics(trace, pareto_flags(table, space, "ssim"), space)["final_recall"] == 1.0


@pytest.mark.parametrize("name", ANCHORS[:3])
def test_optuna_runs_spend_the_whole_budget_after_all_of_theta_is_evaluated(name):
    """As TestNav's: once Θ is exhausted the sampler keeps proposing, each proposal a cache hit that costs B, so
    the trace has B rows (the summary's rule for a method that is not single-pass; benchmark=tiny's 3^2 lattice)."""
    space, budget = Space(("x", "y"), 2), 12
    oracle = TableOracle(np.random.default_rng(0).random((space.size, 2)), space)
    trace = run_search(name, oracle, space, budget, seed=0)
    assert len(trace) == budget and int(trace["u"].eq(space.size).idxmax()) < budget - 1
    validate_trace(trace, space.names, space.levels, budget, name, method=name, single_pass=METHODS[name].single_pass)


class CallLog(Ledger):
    """A ledger that records which `propose` call made each proposal."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[int] = []

    def propose(self, thetas: np.ndarray) -> np.ndarray:
        values = super().propose(thetas)
        self.calls.extend([len(set(self.calls))] * len(values))
        return values


@pytest.mark.parametrize("name", ANCHORS)
def test_batches_of_four(problem, name):
    space, table, oracle = problem
    method: Method = METHODS[name]()
    ledger = CallLog(oracle, space, 26, batch_size=4)
    method._do(ledger, space, np.random.default_rng(0))
    trace = ledger.trace()
    expected_accounting(trace, space, table)
    trace["call"] = ledger.calls
    assert (trace.groupby("round")["is_new"].sum() <= 4).all()
    new = trace[trace["is_new"]]  # a call of cache hits only starts no round (`Ledger`)
    assert (new.groupby("round")["call"].nunique() == 1).all()  # no round spans two calls
    sizes = trace.groupby("call").size()
    initial = 2 * (space.n_dims + 1) if name in SINGLE_PASS else 0  # proposed in one call, before any answer
    adaptive = sizes.iloc[1:] if initial else sizes
    assert (adaptive.iloc[:-1] == 4).all() and adaptive.iloc[-1] <= 4  # q per call after the initial design
    assert not initial or sizes.iloc[0] == initial
    assert trace["round"].iloc[-1] == trace.groupby("round").ngroups


def test_registered_without_hyperparameters():
    labels = {"optuna_nsga2": "Optuna NSGA-II", "optuna_tpe": "Optuna TPE", "optuna_gp": "Optuna GP",
              "botorch_qlognehvi": "BoTorch qLogNEHVI", "epal": "ε-PAL"}
    for name, label in labels.items():
        cls = METHODS[name]
        assert cls.name == name and cls.label == label and cls.hyperparameters() == ()
        assert cls.single_pass == (name in SINGLE_PASS)
        assert catalog.SEARCH_METHODS.facts(name)["population"] is False


def test_global_torch_rng_is_left_alone(problem):
    space, _, oracle = problem
    torch.manual_seed(123)
    run_search("botorch_qlognehvi", oracle, space, 12, seed=0)
    run_search("optuna_gp", oracle, space, 12, seed=0)
    after = torch.rand(3)
    torch.manual_seed(123)
    torch.testing.assert_close(after, torch.rand(3))


def test_botorch_runs_its_python_path_and_compiles_nothing(problem, monkeypatch):
    """BoTorch's fused qLogEHVI kernel (a `-march=native` build at first use) is never compiled or loaded: the anchor
    takes BoTorch's pure-Python path on every host."""
    import torch.utils.cpp_extension
    from botorch.acquisition.multi_objective import logei

    import pipeline.search.methods.botorch_ehvi  # noqa: F401  (the pin is set on import)

    builds = []
    monkeypatch.setattr(torch.utils.cpp_extension, "load", lambda *a, **k: builds.append(k.get("name")))
    space, _, oracle = problem
    run_search("botorch_qlognehvi", oracle, space, 12, seed=0)
    assert builds == [] and logei._C is None and "logei_fused_ext" not in sys.modules


def regions(boxes: list[tuple[float, float, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(δ_low, δ_high, ρ_low, ρ_high) per point -> the (low, high) corner arrays."""
    b = np.array(boxes, dtype=float)
    return b[:, [0, 2]], b[:, [1, 3]]


def test_epal_discards_a_clearly_dominated_point():
    # a: narrow and high; b: narrow and low (a's pessimistic corner beats b's optimistic one); c: wide
    low, high = regions([(0.8, 0.9, 0.8, 0.9), (0.1, 0.2, 0.1, 0.2), (0.0, 1.0, 0.0, 1.0)])
    status = classify(low, high, np.full(3, UNDECIDED), np.zeros(2))
    assert status.tolist() == [UNDECIDED, DISCARDED, UNDECIDED]  # c's optimistic corner may still beat a


def test_epal_pareto_classification_and_the_role_of_epsilon():
    # a's pessimistic corner beats every other optimistic corner; c is a hair short of a on δ but far below on ρ
    low, high = regions([(0.80, 0.82, 0.80, 0.82), (0.81, 0.83, 0.50, 0.60)])
    assert classify(low, high, np.full(2, UNDECIDED), np.zeros(2)).tolist() == [PARETO, UNDECIDED]
    # with ε = 0.02 no optimistic corner beats c's pessimistic one by ε: c is ε-accurate
    assert classify(low, high, np.full(2, UNDECIDED), np.full(2, 0.02)).tolist() == [PARETO, PARETO]
    # d: pessimistically dominated by a, optimistically not quite: discarded only within ε
    low, high = regions([(0.80, 0.82, 0.80, 0.82), (0.70, 0.81, 0.70, 0.81)])
    assert classify(low, high, np.full(2, UNDECIDED), np.zeros(2))[1] == UNDECIDED
    assert classify(low, high, np.full(2, UNDECIDED), np.full(2, 0.02))[1] == DISCARDED


def test_epal_keeps_the_pessimistic_pareto_set_and_final_classes():
    # equal pessimistic corners: both in p_pess(P ∪ U), so neither is discarded however large ε is
    low, high = regions([(0.5, 0.51, 0.5, 0.51), (0.5, 0.52, 0.5, 0.505)])
    assert DISCARDED not in classify(low, high, np.full(2, UNDECIDED), np.full(2, 0.5)).tolist()
    # a discarded point neither returns nor blocks; a Pareto one stays Pareto
    low, high = regions([(0.8, 0.82, 0.8, 0.82), (0.0, 1.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0)])
    status = classify(low, high, np.array([UNDECIDED, DISCARDED, PARETO]), np.zeros(2))
    assert status.tolist() == [UNDECIDED, DISCARDED, PARETO]  # the Pareto point's optimistic corner still beats a
    status = classify(low, high, np.array([UNDECIDED, DISCARDED, DISCARDED]), np.zeros(2))
    assert status.tolist() == [PARETO, DISCARDED, DISCARDED]


def test_epal_regions_and_beta():
    lo, hi = intersect(np.array([[0.0, 0.5]]), np.array([[1.0, 0.6]]), np.array([[0.2, 0.7]]), np.array([[1.5, 0.9]]))
    np.testing.assert_array_equal(lo, [[0.2, 0.7]])  # δ: the intersection; ρ: disjoint, so the new region
    np.testing.assert_array_equal(hi, [[1.0, 0.9]])
    assert beta(1, 1296) == pytest.approx(2 / 9 * math.log(2 * 1296 * math.pi**2 / 0.3))
    assert beta(10, 1296) > beta(1, 1296)


def test_botorch_surrogate_keeps_its_hyperparameters_between_fits():
    from pipeline.search.methods.botorch_ehvi import hyperparameters_of, surrogate

    rng = np.random.default_rng(0)
    X = torch.as_tensor(rng.random((12, 2)), dtype=torch.float64)
    Y = torch.stack([X.sum(dim=1), 1 - X[:, 0] ** 2], dim=1)
    fitted = surrogate(X, Y, None)
    rebuilt = surrogate(X, Y, hyperparameters_of(fitted))  # same data, no fit: the same posterior
    test = torch.as_tensor(rng.random((5, 2)), dtype=torch.float64)
    torch.testing.assert_close(rebuilt.posterior(test).mean, fitted.posterior(test).mean)
    torch.testing.assert_close(rebuilt.posterior(test).variance, fitted.posterior(test).variance)
    more = surrogate(torch.cat([X, test]), torch.cat([Y, Y[:5]]), hyperparameters_of(fitted))  # conditioned on more data
    for a, b in zip(more.models, fitted.models):
        torch.testing.assert_close(a.covar_module.lengthscale, b.covar_module.lengthscale)


@pytest.mark.parametrize("batch", [1, 4])
def test_counting_nsga2_asks_what_optunas_own_sampler_asks(batch: int) -> None:
    """`CountingNSGAIISampler` keeps Optuna's generation bookkeeping as it goes instead of rescanning every trial;
    the oracle is the library's `NSGAIISampler` itself: with the same seed, every trial of a run through many
    generations (population 10, 300 asks in batches of `batch`, each batch told after it is asked, objectives
    that repeat values) has the same parameters and generation."""
    import optuna

    from pipeline.search.methods.optuna_samplers import CountingNSGAIISampler

    def run(sampler: optuna.samplers.BaseSampler) -> list[tuple[tuple[int, ...], int]]:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        space = {f"x{i}": optuna.distributions.IntDistribution(0, 5) for i in range(4)}
        study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler)
        while len(study.trials) < 300:
            trials = [study.ask(space) for _ in range(batch)]
            for trial in trials:
                x = [trial.params[f"x{i}"] for i in range(4)]
                study.tell(trial, [float(x[0] * x[1] % 7 + x[2]), float(10 - x[0] - x[3] + (x[1] > 2))])
        key = f"{type(sampler).__name__}:generation"
        return [(tuple(t.params.values()), t.system_attrs[key]) for t in study.trials]

    ours, theirs = run(CountingNSGAIISampler(population_size=10, seed=3)), run(optuna.samplers.NSGAIISampler(population_size=10, seed=3))
    assert [p for p, _ in ours] == [p for p, _ in theirs]
    assert [g for _, g in ours] == [g for _, g in theirs] and max(g for _, g in ours) >= 20
