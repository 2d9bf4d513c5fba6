"""Slow tier: the real code LLM of conf/model/qwen_coder_gguf.yaml (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF,
`make llm`) on HumanEval: three problems completed, executed in the sandbox and answered again from the
generation cache, then prepare + ground truth of a tiny `benchmark=humaneval model=qwen_coder_gguf` through the
real stage scripts. Skipped, with the reason, where the weights or the configured runtime are not installed."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.code.assets import code_predictor, generation_cache_path, write_code_assets
from pipeline.data.humaneval import load_humaneval
from pipeline.models.generation_cache import GenerationCache
from pipeline.stages.runner import compose_job

ROOT = Path(__file__).resolve().parents[2]
GGUF = Path(os.environ.get("CODE_LLM_GGUF") or ROOT / ".venv/llm/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
RUNTIME_MODULES = {"transformers": ("gguf", "accelerate"), "llama_cpp": ("llama_cpp",)}
FAMILIES = ["butterfingers", "char_case", "whitespace", "newline"]


def _model_spec() -> dict:
    cfg = compose_job(["benchmark=humaneval", "model=qwen_coder_gguf", f"model.path={GGUF}"])
    return {**OmegaConf.to_container(cfg.model, resolve=True), "device": "cpu"}


def _skip_reason() -> str | None:
    if not GGUF.is_file():
        return f"no GGUF at {GGUF}: run `make llm` or set CODE_LLM_GGUF"
    runtime = _model_spec()["runtime"]
    missing = [m for m in RUNTIME_MODULES[runtime] if importlib.util.find_spec(m) is None]
    return f"runtime {runtime} needs {', '.join(missing)}: run `make llm`" if missing else None


def _run(script: str, *overrides: str) -> None:
    done = subprocess.run([sys.executable, f"scripts/{script}.py", *overrides], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
def test_qwen_gguf_solves_humaneval_problems_the_same_on_a_rerun_and_runs_a_tiny_ground_truth(tmp_path: Path):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    spec = _model_spec()
    problems = load_humaneval(limit=3)
    data = tmp_path / "first" / "humaneval"
    write_code_assets(problems, problems, variants=1, timeout_s=10.0, data_dir=data)
    prompts = [p.prompt for p in problems]

    predict = code_predictor(spec, data)
    passed = predict(prompts)
    # measured with both runtimes (llama.cpp and transformers agree on these three completions): /1 fails its tests
    assert predict.complete.generated == 3 and passed.tolist() == [True, False, True]
    rerun = code_predictor(spec, data)  # a new model over the same cache file, as a second run would build it
    np.testing.assert_array_equal(rerun(prompts), passed)
    assert rerun.complete.generated == 0 and rerun.complete.complete(prompts) == predict.complete.complete(prompts)
    assert len(GenerationCache(generation_cache_path(data))) == 3

    common = ("benchmark=humaneval", "model=qwen_coder_gguf", f"model.path={GGUF}", "benchmark.levels=2",
              "benchmark.dataset.problems=2", "benchmark.dataset.variants=1", "benchmark.dataset.fidelity_variants=1",
              "workers=1", f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs")
    _run("prepare", *common)
    prepared = json.loads((tmp_path / "outputs/prepare/humaneval.json").read_text())
    assert prepared["n_problems"] == 2 and prepared["model_clean_pass_at_1"] == passed[:2].mean()
    _run("groundtruth", *common)
    table = pd.read_parquet(tmp_path / "outputs/groundtruth/humaneval.parquet")
    assert table.shape[0] == 2**4 and list(table.columns[:4]) == FAMILIES
    assert set(np.round(table["robust_pass"] * 2, 9)) <= {0, 1, 2}
    clean = table[(table[FAMILIES] == 0).all(axis=1)].iloc[0]
    assert clean["robust_pass"] == passed[:2].mean() and clean["delta"] == 0.0  # the other process generated the same
    generations = len(GenerationCache(tmp_path / "data/cache/generations.sqlite"))
    assert 2 <= generations <= 2 * 2**4  # at most one generation per distinct prompt (2 problems × 16 θ)
