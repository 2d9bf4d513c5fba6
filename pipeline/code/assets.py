"""The prepared assets of a code benchmark and what the builders make of them (TestNav §4.1, benchmark (iii)).

`prepare` writes two files into the benchmark's data folder:

* `test.json`, the clean set D: the chosen problems (prompt, entry point, tests, reference body), the number
  of variants s, the sandbox time limit, and D itself as ReCode's RP_s@1 needs it, `inputs` (each
  problem's prompt s times in a row: input i·s + k is variant k of problem i) with `labels` (the problem
  index i of each input). `pipeline.benchmark.Benchmark` composes perturbations on that list unchanged:
  step j on input m is seeded by (seed, m, θ_1..θ_j), so the s copies of a prompt become s different
  perturbed variants at every θ, the same ones whatever the evaluation order, shard or worker.
* `bank.json`, the retrieval model's solution bank: every HumanEval problem with its canonical solution
  (all 164, whatever subset D is, so that a perturbed prompt can be mistaken for any problem).

The model factory (`code_predictor`) returns predict(inputs) -> passed per input: the retrieval model's
completion of each (perturbed) prompt, run against the tests of the input's problem in the sandbox
(`pipeline.code.sandbox.run_program`) through one `ExecutionCache` per process (keyed by (problem,
completion): a program is never run twice). The task metric `robust_pass` (ψ = RP_s@1,
`pipeline.code.robust_pass.robust_pass_at_1`) compares these with the labels: a problem counts only if
all s of its rows passed.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.code.robust_pass import ExecutionCache, RobustPassPredictor, replicate
from pipeline.data.humaneval import CodeProblem
from pipeline.io import write_text

TEST_FILE = "test.json"
BANK_FILE = "bank.json"


def write_code_assets(problems: Sequence[CodeProblem], bank: Sequence[CodeProblem], variants: int, timeout_s: float,
                      data_dir: str | Path) -> None:
    """Write D (`test.json`) and the solution bank (`bank.json`) into `data_dir`."""
    inputs, labels = replicate([p.prompt for p in problems], variants)
    test = {"variants": int(variants), "timeout_s": float(timeout_s), "problems": [dataclasses.asdict(p) for p in problems],
            "inputs": inputs, "labels": labels.tolist()}
    write_text(json.dumps(test, indent=0), Path(data_dir) / TEST_FILE)
    write_text(json.dumps([dataclasses.asdict(p) for p in bank], indent=0), Path(data_dir) / BANK_FILE)


def _read(path: Path) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"no {path.name} in {path.parent}: run the prepare stage of this benchmark first")
    return json.loads(path.read_text(encoding="utf-8"))


def load_code_set(data_dir: str | Path) -> tuple[list[str], np.ndarray, list[CodeProblem], dict[str, Any]]:
    """(inputs, labels, problems, settings) of the prepared D; settings holds `variants` and `timeout_s`."""
    test = _read(Path(data_dir) / TEST_FILE)
    problems = [CodeProblem(**p) for p in test["problems"]]
    inputs, labels = list(test["inputs"]), np.asarray(test["labels"], dtype=np.int64)
    expected, expected_labels = replicate([p.prompt for p in problems], int(test["variants"]))
    if inputs != expected or not np.array_equal(labels, expected_labels):
        raise ValueError(f"{Path(data_dir) / TEST_FILE}: inputs and labels are not the problems' prompts × {test['variants']} variants")
    return inputs, labels, problems, {"variants": int(test["variants"]), "timeout_s": float(test["timeout_s"])}


def load_bank(data_dir: str | Path) -> list[CodeProblem]:
    return [CodeProblem(**p) for p in _read(Path(data_dir) / BANK_FILE)]


def retrieval_model(spec: dict[str, Any], bank: Sequence[CodeProblem]):
    """The `code_retrieval` model of `spec` (threshold, ngrams) over `bank`."""
    from pipeline.models.code_retrieval import RetrievalCodeModel

    low, high = (int(n) for n in spec["ngrams"])
    return RetrievalCodeModel(bank, threshold=float(spec["threshold"]), ngrams=(low, high))


def code_predictor(spec: dict[str, Any], data_dir: str | Path, cache: ExecutionCache | None = None) -> RobustPassPredictor:
    """predict(inputs of D, perturbed or not) -> passed per input, for the model spec `spec`."""
    _, labels, problems, settings = load_code_set(data_dir)
    model = retrieval_model(spec, load_bank(data_dir))
    return RobustPassPredictor(problems, labels, model, cache or ExecutionCache(timeout_s=settings["timeout_s"]))
