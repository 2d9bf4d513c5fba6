"""The prepared assets of a code benchmark and what the builders make of them (TestNav §4.1, benchmark (iii)).

`prepare` writes two files into the benchmark's data folder:

* `test.json`, the clean set D: the chosen problems (prompt, entry point, tests, reference body), the number
  of variants s, the sandbox time limit, and D itself as ReCode's RP_s@1 needs it, `inputs` (each
  problem's prompt s times in a row: input i·s + k is variant k of problem i) with `labels` (the problem
  index i of each input). `pipeline.benchmark.problem.Benchmark` composes perturbations on that list unchanged:
  step j on input m is seeded by (seed, m, θ_1..θ_j), so the s copies of a prompt become s different
  perturbed variants at every θ, the same ones whatever the evaluation order, shard or worker.
* `bank.json`, the retrieval model's solution bank: every HumanEval problem with its canonical solution
  (all 164, whatever subset D is, so that a perturbed prompt can be mistaken for any problem).

The model factory (`code_predictor`) returns predict(inputs) -> passed per input: the completion of each
(perturbed) prompt by the retrieval model (`code_retrieval`) or a causal LM (`code_llm`,
`pipeline.models.code_llm`, with its persistent generation cache), run against the tests of the input's
problem in the sandbox (`pipeline.code.sandbox.run_program`) through one `ExecutionCache` per process
(keyed by (problem, completion): a program is never run twice). The task metric `robust_pass` (ψ = RP_s@1,
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
from pipeline.runtime.io import write_text

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


def generation_cache_path(data_dir: str | Path) -> Path:
    """The code LLM's persistent generation cache for the benchmark prepared in `data_dir` (= <paths.data>/<name>):
    <paths.data>/cache/generations.sqlite, beside the resume store and outside the prepared folder, which is a
    DVC output (a cache filling up inside it would mark `prepare` as changed) and whose files name the assets
    (`asset_digest`). One file for every benchmark: a key names the model and the exact prompt."""
    return Path(data_dir).parent / "cache" / "generations.sqlite"


def llm_model(spec: dict[str, Any], data_dir: str | Path):
    """The `code_llm` model of `spec` (path, runtime, max_new_tokens, stop, device) with its generation cache."""
    from pipeline.models.code_llm import CodeLLM

    device = spec.get("device", "cpu")
    if spec["runtime"] == "transformers":
        from pipeline.runtime.device import resolve_device

        device = resolve_device(device, "model.device")
    return CodeLLM(spec["path"], runtime=spec["runtime"], max_new_tokens=int(spec["max_new_tokens"]), stop=list(spec["stop"]),
                   device=device, cache=generation_cache_path(data_dir))


def code_predictor(spec: dict[str, Any], data_dir: str | Path, cache: ExecutionCache | None = None) -> RobustPassPredictor:
    """predict(inputs of D, perturbed or not) -> passed per input, for the model spec `spec` (kind code_retrieval
    or code_llm): each completion executed against its problem's tests in the sandbox."""
    _, labels, problems, settings = load_code_set(data_dir)
    if spec["kind"] == "code_llm":
        model = llm_model(spec, data_dir)
    elif spec["kind"] == "code_retrieval":
        model = retrieval_model(spec, load_bank(data_dir))
    else:
        raise ValueError(f"model.kind: {spec['kind']!r} — a code model kind: code_retrieval, code_llm")
    return RobustPassPredictor(problems, labels, model, cache or ExecutionCache(timeout_s=settings["timeout_s"]))


class RetrievalCode:
    """The `code_retrieval` model under test as a plug-in (`conf/model/code_retrieval.yaml`):
    `predict(prompts)` -> passed per row."""

    def __init__(self, data_dir: Path, threshold: float, ngrams: Sequence[int]) -> None:
        self.predictor = code_predictor({"kind": "code_retrieval", "threshold": threshold, "ngrams": list(ngrams)}, data_dir)

    def predict(self, prompts: Sequence[str]) -> np.ndarray:
        return self.predictor(prompts)


class LLMCode:
    """The `code_llm` model under test as a plug-in (`conf/model/qwen_coder_gguf.yaml`, `codegen_2b_mono.yaml`):
    `predict(prompts)` -> passed per row."""

    def __init__(self, data_dir: Path, path: str, runtime: str, max_new_tokens: int, stop: Sequence[str], device: str = "cpu") -> None:
        spec = {"kind": "code_llm", "path": path, "runtime": runtime, "max_new_tokens": max_new_tokens, "stop": list(stop), "device": device}
        self.predictor = code_predictor(spec, data_dir)

    def predict(self, prompts: Sequence[str]) -> np.ndarray:
        return self.predictor(prompts)


class CodeTestSet:
    """D of a code benchmark as the prepare stage wrote it: each problem's prompt `variants` times in a row
    (input i·s + k = variant k of problem i, so composition seeds the s copies differently); the label of a
    row is its problem's index."""

    def __init__(self, data_dir: Path, problems: int | None, variants: int, fidelity_variants: int | None, timeout_s: float,
                 first: int = 0) -> None:
        self.data_dir = Path(data_dir)

    def test_set(self) -> tuple[list[str], np.ndarray]:
        return load_code_set(self.data_dir)[:2]
