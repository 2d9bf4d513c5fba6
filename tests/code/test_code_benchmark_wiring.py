"""The code benchmark wired end to end through the benchmark abstraction: `benchmark=humaneval` in the schema,
ψ = RP5@1 as the registered task metric `robust_pass`, the code fidelity metrics, and prepare + ground truth
of a tiny code configuration through the real stage scripts (in this process: `run_stage` with the script's argv)."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.benchmark.problem import get_task_metric
from pipeline.config import ConfigError
from pipeline.fidelity.code import variant_rows
from pipeline.stages.runner import compose_job, load_params
from tests.in_process import run_or_fail

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ["butterfingers", "char_case", "whitespace", "newline"]


def test_schema_accepts_the_humaneval_benchmark_with_its_model_metric_and_fidelity():
    cfg = compose_job(["benchmark=humaneval"])
    assert cfg.benchmark.modality == "code" and cfg.benchmark.task_metric == "robust_pass"
    assert cfg.model.kind == "code_retrieval" and list(cfg.fidelity) == ["chrf_code", "bert_f1_code"]
    assert list(cfg.benchmark.perturbations) == FAMILIES and cfg.benchmark.dataset.variants == 5
    assert compose_job(["modality=code"]).benchmark.name == "humaneval"
    assert load_params(["benchmark=humaneval"]).model.name == "code_retrieval"  # how the suite stage runs it


@pytest.mark.parametrize("load", [compose_job, load_params], ids=["hydra", "params"])
def test_a_vision_model_on_the_code_benchmark_is_one_line_naming_the_code_models(load):
    with pytest.raises(ConfigError) as err:
        load(["benchmark=humaneval", "model=digits_cnn"])
    assert str(err.value) == "model.kind: 'digits_cnn' — a model kind of modality 'code': code_retrieval, code_llm"


@pytest.mark.parametrize("override, expected", [
    ("benchmark.dataset.problems=0", r"^benchmark\.dataset\.problems: 0 — null \(all 164 from benchmark\.dataset\.first\) or an integer in 1\.\.164$"),
    ("benchmark.dataset.fidelity_variants=6", r"^benchmark\.dataset\.fidelity_variants: 6 — null \(all\) or an integer in 1\.\.5"),
    ("benchmark.task_metric=accuracy", r"^benchmark\.task_metric: 'accuracy' — one of robust_pass"),
    ("fidelity=[chrf]", r"^fidelity\[0\]: 'chrf' — one of chrf_code, bert_f1_code \('chrf' is 'text'\)$"),
    ("model.threshold=1.5", r"^model\.threshold: 1\.5 — a number in \[0, 1\]"),
])
def test_bad_code_settings_are_one_line(override, expected):
    with pytest.raises(ConfigError, match=expected):
        compose_job(["benchmark=humaneval", override])


def test_rp5_at_1_counts_a_problem_with_four_of_five_variants_passing_as_failed():
    psi = get_task_metric("robust_pass")
    labels = np.repeat([0, 1, 2], 5)  # D: three problems, five variants each
    passed = np.array([1, 1, 1, 1, 1,   # problem 0: all five variants pass -> passes
                       1, 1, 0, 1, 1,   # problem 1: 4 of 5 -> fails
                       0, 0, 0, 0, 0],  # problem 2: none -> fails
                      dtype=bool)
    assert psi(passed, labels) == pytest.approx(1 / 3)
    assert psi(np.ones(15, dtype=bool), labels) == 1.0
    assert get_task_metric("accuracy")(passed, labels) != psi(passed, labels)


def test_fidelity_rows_are_the_first_variants_of_each_problem():
    assert variant_rows(15, 5, 1) == [0, 5, 10]
    assert variant_rows(15, 5, 2) == [0, 1, 5, 6, 10, 11]
    assert variant_rows(15, 5, None) is None and variant_rows(15, 5, 5) is None
    with pytest.raises(ValueError):
        variant_rows(14, 5, 1)


def test_code_bert_f1_reuses_encodings_and_equals_plain_bert_f1():
    from pipeline.code.robust_pass import replicate
    from pipeline.data.humaneval import load_humaneval
    from pipeline.fidelity.code import CodeBERTScoreFidelity
    from pipeline.fidelity.text import BERTScoreFidelity
    from pipeline.perturb.compose import compose
    from pipeline.perturb.registry import get_perturbation

    clean, _ = replicate([p.prompt for p in load_humaneval(limit=2)], 2)
    rows = variant_rows(len(clean), 2, 1)
    fast, plain = CodeBERTScoreFidelity(clean, rows=rows), BERTScoreFidelity(clean, rows=rows)
    perts = [get_perturbation(n) for n in FAMILIES]
    for theta in [(1, 2, 0, 0), (1, 2, 0, 3), (1, 0, 0, 3), (0, 4, 2, 0), (0, 4, 2, 5)]:
        perturbed = compose(perts, clean, theta, 0)
        np.testing.assert_array_equal(fast.scores(perturbed), plain.scores(perturbed))
    assert fast.reused >= 2 * 2  # (1,2,0,3) and (1,0,0,3) reuse (1,2,0,0)'s token ids; (0,4,2,5) reuses (0,4,2,0)'s


def test_prepare_and_ground_truth_of_a_tiny_code_benchmark(tmp_path, monkeypatch, capsys):
    from pipeline.code.assets import load_code_set
    from pipeline.perturb.compose import compose
    from pipeline.perturb.registry import get_perturbation

    common = ("benchmark=humaneval", "benchmark.levels=2", "benchmark.dataset.problems=3", "workers=1",
              f"paths.data={tmp_path}/data", f"paths.outputs={tmp_path}/outputs")
    run_or_fail("prepare", common, monkeypatch, capsys)
    prepared = json.loads((tmp_path / "outputs/prepare/humaneval.json").read_text())
    assert prepared["n_problems"] == 3 and prepared["n_inputs"] == 15 and prepared["model_clean_pass_at_1"] == 1.0
    run_or_fail("groundtruth", common, monkeypatch, capsys)

    table = pd.read_parquet(tmp_path / "outputs/groundtruth/humaneval.parquet")
    assert table.shape[0] == 2**4 and list(table.columns[:4]) == FAMILIES
    assert {"robust_pass", "delta", "rho_chrf_code", "rho_bert_f1_code", "pareto_chrf_code", "pareto_bert_f1_code"} <= set(table.columns)
    assert set(np.round(table["robust_pass"] * 3, 9)) <= {0, 1, 2, 3}  # RP5@1 of three problems
    clean = table[(table[FAMILIES] == 0).all(axis=1)].iloc[0]
    assert clean["robust_pass"] == 1.0 and clean["delta"] == 0.0 and clean["rho_chrf_code"] == pytest.approx(100.0)
    summary = json.loads((tmp_path / "outputs/groundtruth/humaneval.summary.json").read_text())
    assert summary["clean_robust_pass"] == 1.0 and summary["space_size"] == 16

    inputs, labels, problems, settings = load_code_set(tmp_path / "data/humaneval")
    assert len(inputs) == 15 and labels.tolist() == [i for i in range(3) for _ in range(5)] and settings["variants"] == 5
    perts = [get_perturbation(n) for n in FAMILIES]
    for theta in table[FAMILIES].itertuples(index=False):
        perturbed = compose(perts, inputs, tuple(theta), 0)
        for i, prompt in enumerate(perturbed):
            ast.parse(prompt)
            ast.parse(prompt + problems[labels[i]].canonical_solution)
        if sum(theta[:3]):  # a docstring family is on: the five variants of a problem differ
            assert len(set(perturbed[:5])) > 1
    with np.load(tmp_path / "outputs/groundtruth/humaneval.gallery.npz") as gallery:
        assert gallery["images"].dtype.kind == "U" and len(gallery["images"]) == len(gallery["thetas"])
        for prompt in gallery["images"]:
            ast.parse(str(prompt))
