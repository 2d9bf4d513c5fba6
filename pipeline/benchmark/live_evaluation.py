"""Live search's evaluator: the benchmark's values of each round's configurations, evaluated in
parallel and kept in a resume store.

A round of a batch search (`pipeline.search.ledger`) hands its q new configurations to `LiveEvaluator`
at once. The evaluator answers from its resume store what an earlier, killed run already evaluated, and
splits the rest into chunks, one per worker, each evaluated by `evaluate_configurations` (which builds the
benchmark once per worker process):

* `serial`: in this process;
* `processes`: worker processes on this machine (spawned once, they live across rounds, so each builds the
  benchmark once; `close` ends them). A pool of our own rather than joblib's: loky restarts a worker whose
  memory grew by more than 300 MB since its first task, which a benchmark that loads its model on first use
  can do (seen on digits: a rebuilt benchmark and "A worker stopped while some jobs were given to the executor");
* `submitit_local`, `submitit_slurm`: one job per chunk through submitit, the library under Hydra's
  submitit launcher (`hydra/launcher=submitit_slurm` takes the same parameters: partition, timeout_min,
  gpus_per_node…); `submitit_local` runs the jobs as local processes, the path a SLURM array takes minus
  sbatch. Each job builds the benchmark, so a cluster round pays one model load per chunk.

A search is deterministic given the values it sees, so a restarted run proposes the same configurations
again and finds the finished ones in the store: it resumes where it was killed.

Racing (`pipeline.search.racing.live_racing`) asks for slices instead: (θ, the input rows, whether to compute
fidelity), `LiveEvaluator.slices`, each the model's answers on those rows only (`Benchmark.evaluate_rows`), in
parallel over the same workers and kept in the same store under their own keys, so a restarted race finds every
slice it had and evaluates no input twice.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from pipeline.benchmark.problem import Benchmark
from pipeline.config.errors import ConfigError
from pipeline.runtime.fingerprint import digest, unit_key
from pipeline.runtime.numerics import configure_torch
from pipeline.runtime.store import ResumeStore, run_cached
from pipeline.runtime.worker_state import cached

EXECUTORS = ("serial", "processes", "submitit_local", "submitit_slurm")
BenchmarkFactory = Callable[[], Benchmark]  # builds the benchmark (picklable: it travels to every worker)

def spec_factory(spec: Mapping[str, Any], data_dir: str | Path) -> tuple[str, BenchmarkFactory]:
    """(key, factory) of the benchmark of a config spec over its prepared folder (`pipeline.benchmark.build`)."""
    from pipeline.benchmark.build import build_benchmark  # model and metric libraries load only where a benchmark runs

    return digest({"spec": dict(spec), "data_dir": str(data_dir)}), partial(build_benchmark, dict(spec), Path(data_dir))


def evaluate_configurations(key: str, factory: BenchmarkFactory, thetas: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    """`Benchmark.evaluate` of each configuration, in order: a worker's chunk of one round (values as plain
    floats, per-input values as lists of them)."""
    bench = cached(key, factory)  # built once per worker process
    return [{k: v if isinstance(v, list) else float(v) for k, v in bench.evaluate(tuple(int(x) for x in theta)).items()}
            for theta in thetas]


Slice = tuple[tuple[int, ...], list[int], bool]  # (θ, input rows, with fidelity): one unit of racing's work


def evaluate_slices(key: str, factory: BenchmarkFactory, asks: Sequence[Slice]) -> list[dict[str, Any]]:
    """`Benchmark.evaluate_rows` of each (θ, rows, fidelity), in order: a worker's chunk of one slice of a race."""
    bench = cached(key, factory)
    return [{k: v if isinstance(v, list) else float(v) for k, v in bench.evaluate_rows(theta, rows, fidelity).items()}
            for theta, rows, fidelity in asks]


Work = Callable[[str, BenchmarkFactory, Sequence[Any]], list[dict[str, Any]]]  # evaluate_configurations or evaluate_slices


def _evaluate_pickled(payload: bytes) -> list[dict[str, Any]]:
    """The work (`evaluate_configurations`, `evaluate_slices`) of a (work, key, factory, chunk) sent with cloudpickle,
    which carries a user's objects (a model class defined in a notebook) where the standard pickle cannot."""
    import cloudpickle

    work, *arguments = cloudpickle.loads(payload)
    return work(*arguments)


class LiveEvaluator:
    """`evaluator([θ, …]) -> [values, …]`: the benchmark's `evaluate` dict of every configuration, from the
    store where a run already evaluated it, else computed on `workers` workers of `executor` (module
    docstring) and recorded as each chunk finishes. `factory` builds the benchmark in each worker (`key`
    names it there); `fingerprint` names everything the values depend on
    (`pipeline.benchmark.ground_truth.table_fingerprint`)."""

    def __init__(self, factory: BenchmarkFactory, key: str, store: ResumeStore, fingerprint: str,
                 executor: str = "processes", workers: int = 1, submitit: Mapping[str, Any] | None = None,
                 folder: str | Path | None = None) -> None:
        if executor not in EXECUTORS:
            raise ConfigError("search.live.executor", executor, f"one of {', '.join(EXECUTORS)}")
        if int(workers) < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if executor.startswith("submitit") and folder is None:
            raise ValueError(f"executor {executor!r} needs a folder for submitit's job files")
        self.factory, self.key, self.store, self.fingerprint = factory, key, store, fingerprint
        self.executor, self.workers, self.submitit, self.folder = executor, int(workers), dict(submitit or {}), folder
        self.evaluated = 0  # configurations computed (not served from the store) by this evaluator
        self.inputs_evaluated = 0  # model evaluations computed in slices (racing) by this evaluator
        self.seconds: dict[str, float] = {}  # summed seconds_* of the configurations computed (perturb, infer, fidelity)
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> LiveEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the worker processes (the `processes` executor keeps them, and their benchmarks, across rounds)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __call__(self, thetas: Sequence[Sequence[int]]) -> list[dict[str, float]]:
        thetas = [tuple(int(x) for x in t) for t in thetas]
        keys = [unit_key(self.fingerprint, list(t)) for t in thetas]
        values = run_cached(self.store, keys, lambda indices: self._compute(evaluate_configurations, thetas, indices))
        return [json.loads(v) for v in values]

    def slices(self, asks: Sequence[Slice]) -> list[dict[str, Any]]:
        """`Benchmark.evaluate_rows` of each (θ, rows, fidelity), from the store where a run already computed it."""
        asks = [(tuple(int(x) for x in t), [int(r) for r in rows], bool(f)) for t, rows, f in asks]
        keys = [unit_key(self.fingerprint, {"theta": list(t), "rows": rows, "fidelity": f}) for t, rows, f in asks]
        values = run_cached(self.store, keys, lambda indices: self._compute(evaluate_slices, asks, indices))
        return [json.loads(v) for v in values]

    def _compute(self, work: Work, units: Sequence[Any], indices: list[int]) -> Iterator[tuple[int, bytes]]:
        n = min(self.workers, len(indices))
        chunks = [indices[k::n] for k in range(n)]
        for chunk, answers in zip(chunks, self._run(work, [[units[i] for i in c] for c in chunks])):
            if work is evaluate_configurations:
                self.evaluated += len(chunk)
            else:
                self.inputs_evaluated += sum(len(a["prediction"]) for a in answers)
            for a in answers:
                for k, v in a.items():
                    if k.startswith("seconds_"):
                        self.seconds[k] = self.seconds.get(k, 0.0) + v
            yield from ((i, json.dumps(a, sort_keys=True).encode()) for i, a in zip(chunk, answers))

    def _run(self, work: Work, chunks: list[list[Any]]) -> Iterator[list[dict[str, Any]]]:
        """Each chunk's answers (`work` on it), in chunk order, as the executor delivers them."""
        if self.executor == "serial" or len(chunks) == 1 and self.executor == "processes":
            yield from (work(self.key, self.factory, c) for c in chunks)
        elif self.executor == "processes":
            import cloudpickle

            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"), initializer=configure_torch)
            futures = [self._pool.submit(_evaluate_pickled, cloudpickle.dumps((work, self.key, self.factory, c))) for c in chunks]
            yield from (f.result() for f in futures)
        else:
            import submitit

            executor = submitit.AutoExecutor(folder=str(self.folder), cluster=self.executor.removeprefix("submitit_"))
            executor.update_parameters(**self.submitit)
            jobs = executor.map_array(work, [self.key] * len(chunks), [self.factory] * len(chunks), chunks)
            yield from (job.result() for job in jobs)
