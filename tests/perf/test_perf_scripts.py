"""Every `perf/bench_*.py` runs to the end in its quick setting (`--quick`) and prints the lines it is
meant to print: its ratios against the reference measured in the same run, and what it checks on the way
(bit-identical outputs, identical rows). Speeds are printed, never asserted: the patterns only require
numbers where the script prints them. A new script is run automatically; until it has its own patterns in
EXPECTED it must print at least one ratio (`1.23x`, `x4.5`, `×`, `ratio`).

The quick runs of SLOW_QUICK (5-55 s each on 2 cores) are in the slow tier (`make test-slow`); in `make test` every
script is imported, and the library code each of them times has its own fast tests."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "perf").glob("bench_*.py"))
# the quick runs over 5 s on the 2-core machine (docs/timings.md); bench_ngram_hashing and bench_search_lattice run in make test
SLOW_QUICK = {"bench_numerics", "bench_search", "bench_throughput", "bench_code_ground_truth", "bench_recapture_tiers",
              "bench_search_cost", "bench_ground_truth", "bench_perturb_store", "bench_text_prefetch", "bench_fuzz",
              "bench_search_heldout", "bench_paired", "bench_glass_blur", "bench_search_limit"}
NUM = r"\d+(?:\.\d+)?"  # a finite number as the scripts format it (not nan, not inf)
RATIO = rf"{NUM} ?[x×]\b|\bx{NUM}|\bratio\b"

EXPECTED: dict[str, list[str]] = {
    "bench_code_ground_truth": [rf"^36 configurations of tasks \[.*\]: {NUM} s/config$",
                               rf"^per configuration: perturb {NUM} s \({NUM}%\), model .*, fidelity bert_f1_code",
                               rf"^execution cache: \d+ sandbox runs, \d+ hits, hit rate {NUM}",
                               rf"^projected full ground truth \(1296 configurations, \d+ processes\): {NUM} min"],
    "bench_fuzz": [rf"^geometric  MRI \(N=50\): .* \| ratio +{NUM} \| identical results: True$",
                   rf"^weights +cached chain +MRI +{NUM} eval/s \| last-layer threshold scan +{NUM} eval/s$",
                   rf"^severity +\(20 images\) +MRI +{NUM} eval/s",
                   *(rf"^two-phase  {a} .* saved +-?\d+ .* same thresholds: (True|False)$" for a in ("geometric", "weights", "severity"))],
    "bench_glass_blur": [rf"^numba .* kernel compile time {NUM} s",
                         rf"^ +32\^2 +all +{NUM} +{NUM} +{NUM}x  \(bit-identical on 3 images x 5 severities\)$",
                         rf"^ +224\^2 +all +{NUM} +{NUM} +{NUM}x  \(bit-identical on 1 images x 5 severities\)$"],
    "bench_ground_truth": [rf"^transform applications per input: prefix reuse \d+, naive 5184 \({NUM}x fewer\)",
                          (rf"^36 configurations of tasks .* on 40 test images: {NUM} s/config with reuse, "
                           rf"{NUM} s/config without \({NUM}x\)$"),
                          rf"^time per configuration: perturb {NUM} s \({NUM}%\), infer .*, fidelity {NUM} s"],
    "bench_numerics": [rf"^ +train: pinned +{NUM} s, default +{NUM} s, pinned/default = {NUM}$",
                       rf"^ +groundtruth: pinned +{NUM} s, default +{NUM} s, pinned/default = {NUM}$",
                       r"^same bits: (True|False) \(pinned [0-9a-f]{16}, default [0-9a-f]{16}\)$",
                       rf"^gemm 640x1536x384: MKL AVX2 +{NUM}, MKL COMPATIBLE +{NUM}, OpenBLAS Haswell +{NUM} GFLOP/s; OpenBLAS/COMPATIBLE = {NUM}$",
                       rf"^text encoder: OpenBLAS {NUM} texts/s, MKL COMPATIBLE {NUM} texts/s; OpenBLAS/COMPATIBLE = {NUM}$"],
    "bench_ngram_hashing": [rf"^\d+ perturbed prompts \(\d+ n-grams\) in \d+ calls: scikit-learn {NUM} s, vectorised {NUM} s -> {NUM}x faster$",
                            r"^count matrices identical: True; retrieval similarities identical: True$"],
    "bench_paired": [rf"^   reference \(per-class loops \+ bisection\), \d+ cells: .*; speed-up x{NUM}; max \|difference\|",
                     rf"^   reference \(enumerate every bijection per class\), \d+ cells: .*; speed-up x{NUM}; max \|difference\|",
                     rf"^   H at I5 on \d+ cells: .*; speed-up x{NUM}; max \|difference\|"],
    "bench_perturb_store": [rf"^second-model ground truth: cold {NUM} s/config, warm {NUM} s/config \({NUM}x\); rows identical$",
                            rf"^perturbation part: cold {NUM} s/config, warm \(store read\) {NUM} s/config \({NUM}x\)$",
                            rf"^store: {NUM} MB for 36 configurations"],
    "bench_recapture_tiers": [r"^10 development images; clean accuracy logreg ",
                              r"^tier counts: mild \d+, severe \d+, extreme \d+$",
                              rf"^training {NUM} s; recapture {NUM} s \({NUM} ms per image and condition\)$"],
    "bench_search": [*(rf"^  mu= ?{mu}: +{NUM} ms vs +{NUM} ms per generation -> +{NUM}x faster$" for mu in (20, 110)),
                     rf"^  testnav +{NUM} us/proposal \(\d+ proposals per run\)$",
                     r"^  640 runs \(one benchmark-metric pair\): \d+ s on \d+ idle cores",
                     rf"^\(4\) Optuna NSGA-II, 1500 proposals: counting sampler {NUM} s vs Optuna's own {NUM} s -> {NUM}x "
                     r"faster; traces equal: True$",
                     rf"^\(5\) GP-PND, 162 proposals: {NUM} s vs the reference {NUM} s -> {NUM}x faster; traces equal: True$",
                     (rf"^\(6\) the \d+ GP fits of that GP-PND run: .* -> {NUM}x faster; "
                      r"hyperparameters and likelihoods equal: True$")],
    "bench_search_cost": [rf"^\| smooth \| pnd_race \| 1 \| 1 \| {NUM} \| {NUM} \|",
                          rf"^\| bandit \| \d+ \| -?{NUM} \| -?{NUM} \| -?{NUM} \| {NUM} \| ",
                          rf"^Median table: {NUM} of the exhaustive cost; groups within 0.1: \d of 5\. Stopping rule: core recall "
                          r"≥ 0.95 in \d+ of \d+ runs"],
    "bench_search_lattice": [r"^--quick: GP-PND \(pnd\) left out",
                             *(rf"^\| fixture \| {m} \| Random Search \| 1/1 \| .* \| {NUM}× \| {NUM}× \|$" for m in ("ssim", "kid"))],
    "bench_search_limit": [*(rf"^\| {f} \| {f}-0 \| \d+ \| \d+ \| \d+ \| \d+ \| {NUM} \| \d+ \| \d+ \| \d+ \| \d+ \| {NUM} \|$"
                             for f in ("smooth", "long_front")),
                           rf"^\| all tables \| {NUM} \| {NUM} \|$"],
    "bench_text_prefetch": [rf"^3 sets of 12 leads: one call per set {NUM} s, one call for all {NUM} s -> {NUM}x; "
                            r"prefetched encodings equal set by set: True$"],
    "bench_throughput": [rf"^  batch +32: +{NUM} configs/s, +{NUM} images/s \({NUM}x batch 512\)",
                         rf"^  batch  1024: +{NUM} images/s \({NUM}x\)$",
                         (r"^all-MiniLM-L6-v2 \(BertModel, random weights\) on \S+, 32 sequences of 64 tokens; "
                          r"ratios against batch 16$"),
                         rf"^  batch    16: +{NUM} sequences/s, +{NUM} tokens/s \(1\.00x\)",
                         (r"^vit_b_16 ground truth and inference, and RoBERTa-base, left out: --quick on a CPU"
                          r"|^vit_b_16 \(224×224\) inference on cuda")],
}


def test_every_script_is_found() -> None:
    """The glob sees the scripts (a moved perf/ folder would otherwise run nothing)."""
    assert {p.stem for p in SCRIPTS} >= set(EXPECTED) | SLOW_QUICK


@pytest.fixture(scope="session")
def quick_digits():
    """The digits benchmark as perf/_spec.py's `digits_data` prepares it for --quick (data/digits/ where the
    prepare stage made it), once for every script that reads it (through $BENCH_DIGITS_DATA)."""
    helper = load_script("_spec")
    with contextlib.ExitStack() as stack:
        yield helper.digits_data(stack, quick=True)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_script_imports(script: Path, monkeypatch) -> None:
    """Each script's imports resolve (a moved or renamed module breaks none unseen) and it offers `--quick`; imported
    as `python perf/<script>.py` runs it: its folder first on the path, the module registered by its name."""
    monkeypatch.syspath_prepend(str(script.parent))
    load_script(script.stem)
    assert '"--quick"' in script.read_text()


@pytest.mark.parametrize("script", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW_QUICK else p for p in SCRIPTS],
                         ids=lambda p: p.stem)
def test_quick_run_prints_its_ratios(script: Path, request) -> None:
    """`script --quick` exits with 0 and prints every line EXPECTED names for it."""
    env = dict(os.environ)
    if "digits_data(" in script.read_text():
        env["BENCH_DIGITS_DATA"] = str(request.getfixturevalue("quick_digits"))
    result = subprocess.run([sys.executable, str(script), "--quick"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600, check=False)
    output = f"--- stdout\n{result.stdout}\n--- stderr (last 3000 characters)\n{result.stderr[-3000:]}"
    assert result.returncode == 0, f"{script.name} --quick exited with {result.returncode}\n{output}"
    for pattern in EXPECTED.get(script.stem, [RATIO]):
        assert re.search(pattern, result.stdout, re.MULTILINE), f"{script.name} --quick printed no line matching {pattern!r}\n{output}"


def load_script(stem: str):
    """perf/<stem>.py as a module (the folder is no package), registered under its name as running it does (a
    dataclass of the script looks its module up there)."""
    module = importlib.util.spec_from_file_location(stem, ROOT / "perf" / f"{stem}.py")
    script = importlib.util.module_from_spec(module)
    sys.modules[stem] = script
    module.loader.exec_module(script)
    return script


def test_spec_helper_builds_what_the_stages_build() -> None:
    """perf/_spec.py builds every benchmark's spec exactly as the stages do (`pipeline.stages.runner`), and
    refuses what they refuse (the real-world benchmarks without their local copies)."""
    from pipeline.config import ConfigError
    from pipeline.stages.runner import benchmark_spec, compose_job

    helper = load_script("_spec")
    for path in sorted((ROOT / "conf" / "benchmark").glob("*.yaml")):
        overrides = [f"benchmark={path.stem}", "device=cuda:1"]
        try:
            stage = benchmark_spec(compose_job(overrides))
        except ConfigError as err:
            with pytest.raises(ConfigError, match=re.escape(str(err))):
                helper.benchmark_spec(overrides)
            continue
        assert helper.benchmark_spec(overrides) == stage, path.stem


HELDOUT_CAPPED = [sys.executable, "perf/bench_search_heldout.py", "--quick", "--budget", "12", "--out"]


@pytest.fixture(scope="module")
def capped_heldout(tmp_path_factory) -> Path:
    """One quick held-out run at a budget of 12 proposals, shared by the tests that read it."""
    folder = tmp_path_factory.mktemp("heldout_capped")
    result = subprocess.run([*HELDOUT_CAPPED, str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return folder


def test_heldout_at_a_capped_budget_compares_the_members_still_missed(capped_heldout: Path) -> None:
    """`--budget B` stops every run after B proposals; the report then compares |P*| · (1 − recall), the members
    of P* each run has not evaluated, and leaves out the censored-u comparison (no run recovers P*)."""
    import pandas as pd

    tmp_path = capped_heldout
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert (runs["unique"] <= 12).all() and runs["u_full"].isna().all()
    found = runs["pareto_size"] * runs["final_recall"]
    assert ((found - found.round()).abs() < 1e-9).all()  # a recall is a count of P* members over |P*|
    report = (tmp_path / "report.md").read_text()
    assert "Censored u" not in report and "Members of P* still missed after the budget (b ≤ 12 proposals)" in report
    line = next(row for row in report.splitlines() if row.startswith("| random | 1 |"))
    missed = (runs["pareto_size"] - found)[runs["method"] == "random"].mean()
    assert float(line.split("|")[6]) == pytest.approx(missed, abs=0.005)


def test_heldout_keep_others_replaces_only_the_methods_rerun(capped_heldout: Path, tmp_path: Path) -> None:
    """`--keep-others` keeps the earlier rows of the methods not run now (here a planted `testnav`), replaces the rows
    of those run now, and reports on the union; without an earlier runs.csv it is refused before any run."""
    import pandas as pd

    command = [*HELDOUT_CAPPED, str(tmp_path)]
    refused = subprocess.run([*command, "--keep-others"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "--keep-others needs an --out folder with a runs.csv" in refused.stderr
    assert not (tmp_path / "runs.csv").exists()
    first = pd.read_csv(capped_heldout / "runs.csv")  # the same command's earlier run
    planted = first[first["method"] == "random"].assign(method="testnav", final_recall=0.0)
    pd.concat([planted, first[first["method"] == "pnd"]], ignore_index=True).to_csv(tmp_path / "runs.csv", index=False)
    result = subprocess.run([*command, "--keep-others"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    merged = pd.read_csv(tmp_path / "runs.csv")
    planted_first = pd.concat([planted, first[first["method"] == "pnd"], first[first["method"] == "random"]], ignore_index=True)
    pd.testing.assert_frame_equal(merged, planted_first)  # the rerun's rows where the earlier ones were, same values
    assert "| testnav | 1 |" in (tmp_path / "report.md").read_text()


def test_limit_ideal_and_method_multiples() -> None:
    """bench_search_limit's ideal search evaluates GP-PND's 32-configuration initial design on 6^4 and then only the
    members of P* outside its lattice part; each method's median u (a run that never reaches recall 1 counting as
    |Θ| + 1) is divided by it."""
    import numpy as np
    import pandas as pd

    from pipeline.search.methods.pnd import lattice_design
    from pipeline.front.space import Space

    limit = load_script("bench_search_limit")
    space = Space(("a", "b", "c", "d"), 6)
    pareto = np.zeros(space.size, dtype=bool)
    pareto[lattice_design(space)[:3]] = True  # the identity, the corner and an axis point: all in the design
    assert limit.ideal_u(space, pareto) == 32
    pareto[[500, 501, 900]] = True
    assert limit.ideal_u(space, pareto) == 35
    runs = pd.DataFrame({"table": "t", "method": ["pnd"] * 3 + ["random"] * 2, "q": 1, "space_size": 1296,
                         "u_full": [70.0, 140.0, np.nan, 350.0, 350.0]})
    row = limit.with_methods(pd.DataFrame({"table": ["t"], "ideal_u": [35]}), runs).iloc[0]
    assert row["u_pnd"] == 140.0 and row["x_pnd"] == pytest.approx(4.0) and row["x_random"] == pytest.approx(10.0)


def test_heldout_quick_writes_the_core_columns(tmp_path: Path) -> None:
    """`--quick --out` adds |core|, u to the whole core and the core's recall where est_recall reaches 0.95 to runs.csv
    (the core recomputed here from `synthetic_confidence`), and, for GP-PND, which reads the per-input layer, u and the
    core's recall where its est_core reaches 0.95; the report reads them as it reads P*: the recovery of the core, the
    paired comparison on it with ties where the interval covers 0, and both calibration tables on the core."""
    import pandas as pd

    from pipeline.search.scoring.comparison import censored_u
    from pipeline.search.studies.synthetic import METRIC, synthetic_confidence

    heldout = load_script("bench_search_heldout")
    result = subprocess.run([sys.executable, "perf/bench_search_heldout.py", "--quick", "--out", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert list(runs.columns[-5:]) == ["core_size", "u_core", "recall_core_confident", "u_core_estimate",
                                       "recall_core_at_core_estimate"]
    assert runs.loc[runs["method"] == "pnd", "u_core_estimate"].notna().all()  # GP-PND read the per-input layer
    assert runs.loc[runs["method"] == "random", "u_core_estimate"].isna().all()  # Random estimates nothing
    for name, rows in runs.groupby("table"):
        family, seed = name.rsplit("-", 1)
        table = synthetic_confidence(family, int(seed), heldout.QUICK_SPACE)
        core, pareto = (table[f"set_{METRIC}"] == "core").to_numpy(), table["pareto"].to_numpy()
        assert (rows["core_size"] == core.sum()).all() and core.sum() >= 1
        assert rows["u_core"].notna().all()  # at 5·|Θ| proposals on 4^3 every run evaluates all of the core
        assert (rows["u_core"] >= core.sum()).all() and (rows["u_core"] <= rows["unique"]).all()
        if not (core & ~pareto).any():  # the core within P*: all of it is in before all of P*
            assert (rows["u_core"] <= rows["u_full"]).all()
    report = (tmp_path / "report.md").read_text()
    section = report.split("## Recovery of the core (q = 1)")[1].split("\n## ")[0]
    for group, u in runs[runs["method"] == "random"].set_index("group")["u_core"].items():
        line = next(row for row in section.splitlines() if row.startswith(f"| {group} | random |"))
        assert float(line.split("|")[6]) == u  # one run per group: its median is its u to the core
    runs = runs.assign(u_cens=censored_u(runs["u_core"].to_numpy(), runs["space_size"].to_numpy()))
    diff = runs.pivot(index="table", columns="method", values="u_cens").eval("random - pnd").mean()
    section = report.split("## Censored u to the core of each method minus pnd's at q = 1")[1]
    line = next(row for row in section.splitlines() if row.startswith("| all tables | all | random | pnd |"))
    cells = [c.strip() for c in line.split("|")]
    lo, hi = float(cells[6]), float(cells[7])
    assert float(cells[5]) == pytest.approx(diff, abs=0.05) and lo <= diff <= hi
    assert cells[9] == ("tie" if lo <= 0 <= hi else "worse" if lo > 0 else "better")
    calib = runs.dropna(subset=["recall_confident"])
    cells = next(row for row in report.split("## Calibration")[1].splitlines() if row.startswith("| pnd | 1 |")).split("|")
    assert float(cells[8]) == pytest.approx(calib["recall_core_confident"].mean(), abs=5e-4)
    assert float(cells[9]) == pytest.approx((calib["recall_core_confident"] >= 0.95).mean(), abs=5e-4)
    on_core = runs.dropna(subset=["u_core_estimate"])
    section = report.split("## Calibration on the core")[1]
    cells = next(row for row in section.splitlines() if row.startswith("| pnd | 1 | all |")).split("|")
    assert int(cells[4]) == len(on_core) and float(cells[5]) == pytest.approx(on_core["u_core_estimate"].median(), abs=5e-4)
    assert float(cells[9]) == pytest.approx((on_core["recall_core_at_core_estimate"] >= 0.95).mean(), abs=5e-4)


def test_heldout_report_names_the_tables_without_a_core() -> None:
    """A table without a core (no set_<metric> column: NaN core_size) is named, and left out of the core's recovery
    table, while the recovery of P* still counts it."""
    import numpy as np
    import pandas as pd

    heldout = load_script("bench_search_heldout")
    rows = [{"group": "g", "table": t, "method": m, "q": 1, "seed": 0, "space_size": 9, "pareto_size": 3, "u_full": u,
             "final_recall": 1.0, "unique": 9.0, "rounds_full": u, "u_confident": np.nan, "recall_confident": np.nan,
             "core_size": size, "u_core": u - 1 if size else np.nan, "recall_core_confident": np.nan}
            for t, size in (("t1", 2), ("t2", 2), ("t3", np.nan)) for m, u in (("pnd", 5.0), ("random", 8.0))]
    text = heldout.report(pd.DataFrame(rows), "pnd", np.random.default_rng(0), np.random.default_rng(1))
    assert "No core (no set_<metric> column, or an empty core), so no core columns: t3" in text
    recovery = text.split("## Recovery (q = 1)")[1].split("\n## ")[0]
    core = text.split("## Recovery of the core (q = 1)")[1].split("\n## ")[0]
    assert "| g | random | 3 | 3 | 8.0 |" in recovery and "| g | random | 2 | 2 | 7.0 |" in core


def test_limit_measures_the_leave_one_out_order_against_the_core(monkeypatch) -> None:
    """On a hand-made order (p falls with the index, so the order is 0, 1, 2, …) the order's u to a target is its
    largest member's index + 1: 1,296 for P* (it holds the corner), 901 for a core {0, 500, 900}; the core's ideal is
    the 32-configuration design plus its 2 members outside the lattice part; and a method's median u to the core is
    divided by that ideal."""
    import numpy as np
    import pandas as pd

    from pipeline.search.methods.pnd import lattice_design
    from pipeline.front.space import Space

    limit = load_script("bench_search_limit")
    space = Space(("a", "b", "c", "d"), 6)
    p = 1.0 - np.arange(space.size) / space.size
    monkeypatch.setattr(limit, "membership_probability", lambda objectives, space: p)
    pareto, core = np.zeros(space.size, dtype=bool), np.zeros(space.size, dtype=bool)
    pareto[lattice_design(space)[:3]] = True  # 0, the corner 1295, 216
    pareto[[500, 900]] = True
    core[[0, 500, 900]] = True
    row = limit.one_table("g", "t", np.zeros((space.size, 2)), space, pareto, core)
    assert (row["loo_u"], row["ideal_u"], row["members_below_0_05"]) == (1296, 34, 1)
    assert (row["core_size"], row["ideal_u_core"], row["loo_u_core"], row["core_below_0_05"]) == (3, 34, 901, 0)
    assert row["x_loo_core"] == pytest.approx(901 / 34)
    assert "core_size" not in limit.one_table("g", "t", np.zeros((space.size, 2)), space, pareto, None)
    runs = pd.DataFrame({"table": "t", "method": "pnd", "q": 1, "space_size": 1296, "u_full": [200.0, 300.0, np.nan],
                         "core_size": 3, "u_core": [68.0, 102.0, np.nan]})
    out = limit.with_methods(pd.DataFrame([row]), runs).iloc[0]
    assert out["u_core_pnd"] == 102.0 and out["x_core_pnd"] == pytest.approx(3.0) and out["x_pnd"] == pytest.approx(300 / 34)


def test_heldout_report_compares_per_group_only_where_a_group_has_two_tables() -> None:
    """The real split has one table per group (a benchmark–metric pair) and several seeds: the paired comparison is over
    all tables only (a cluster bootstrap needs two clusters), not per group."""
    import numpy as np
    import pandas as pd

    heldout = load_script("bench_search_heldout")
    rows = [{"group": t, "table": t, "method": m, "q": 1, "seed": seed, "space_size": 16, "pareto_size": 3, "u_full": u + seed,
             "final_recall": 1.0, "unique": 9.0, "rounds_full": u, "u_confident": np.nan, "recall_confident": np.nan}
            for t in ("a·x", "b·y") for m, u in (("pnd", 4.0), ("random", 8.0)) for seed in range(3)]
    text = heldout.report(pd.DataFrame(rows), "pnd", np.random.default_rng(0), np.random.default_rng(1))
    section = text.split("## Censored u of each method minus pnd's at q = 1")[1]
    assert "| all tables | all | random | pnd | 4.0 |" in section and "per group" not in section


COST_QUICK = [sys.executable, "perf/bench_search_cost.py", "--quick", "--workers", "1", "--out"]


def test_cost_capped_anchor_added_a_table_at_a_time(tmp_path: Path) -> None:
    """bench_search_cost: `--budget B` stops a search after B proposals, a run that has not completed the core by then
    counting as the exhaustive cost (share 1); `--keep-others` adds a slow anchor a table at a time: each invocation
    replaces only its own (table, method, seed) rows, keeps the other tables' rows of the same method, and the reference's."""
    import pandas as pd

    first = subprocess.run([*COST_QUICK, str(tmp_path), "--methods", "pnd_race", "--families", "smooth,crowded"], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    reference = pd.read_csv(tmp_path / "runs.csv")
    assert (reference["budget"] == reference["space_size"]).all() and reference["evals_core"].notna().all()
    for family, budget in (("smooth", 3), ("crowded", 64)):
        run = subprocess.run([*COST_QUICK, str(tmp_path), "--methods", "random", "--families", family, "--budget", str(budget),
                              "--keep-others"], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
    merged = pd.read_csv(tmp_path / "runs.csv")
    pd.testing.assert_frame_equal(merged[merged["method"] == "pnd_race"].reset_index(drop=True), reference)
    anchor = merged[merged["method"] == "random"].set_index("group")
    assert list(anchor.index) == ["smooth", "crowded"] and list(anchor["budget"]) == [3, 64]
    assert anchor.loc["smooth", "configurations"] == 3 and anchor.loc["smooth", "evals_total"] == 3 * anchor.loc["smooth", "n"]
    assert anchor.loc["smooth", "core_size"] > 3 and pd.isna(anchor.loc["smooth", "evals_core"])  # 3 proposals cannot complete it
    assert anchor.loc["crowded", "evals_core"] <= anchor.loc["crowded", "exhaustive"]  # all of the 4^3 lattice: found
    report = (tmp_path / "report.md").read_text()
    assert "| random | 2 |" in report  # both tables paired with the reference in the comparison
    lower = report[report.index("a lower bound on its cost (1 such runs"):]  # smooth's 3 proposals missed the core
    ref = reference.set_index("group")
    upper_diff = (1.0 + anchor.loc["crowded", "evals_core"] / anchor.loc["crowded", "exhaustive"]
                  - (ref["evals_core"] / ref["exhaustive"])[["smooth", "crowded"]].sum()) / 2
    lower_diff = upper_diff - (1.0 - 3 / 64) / 2  # smooth's censored share 1 replaced by the 3 of 64 proposals it spent
    assert f"| random | 2 | {lower_diff:.3f} |" in lower and f"| random | 2 | {upper_diff:.3f} |" in report
    again = subprocess.run([sys.executable, "perf/bench_search_cost.py", "--report-only", "--out", str(tmp_path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)  # the report again from runs.csv, running nothing
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "report.md").read_text() == report
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "runs.csv"), merged)


def test_cost_calibration_carries_its_interval() -> None:
    """The stopping rule's calibration is a share of runs, so the report gives its exact (Clopper-Pearson) 95% interval:
    the beta quantiles Beta(0.025; k, n − k + 1) and Beta(0.975; k + 1, n − k)."""
    import pandas as pd
    from scipy.stats import beta

    cost = load_script("bench_search_cost")
    k, n = 14, 16
    low, high = beta.ppf(0.025, k, n - k + 1), beta.ppf(0.975, k + 1, n - k)
    assert cost.calibrated_runs(pd.Series([1.0] * k + [0.8, 0.94])) == f"{k} of {n} runs (88%, 95% interval [{low:.0%}, {high:.0%}])"
    assert cost.calibrated_runs(pd.Series([0.95, 1.0])).startswith("2 of 2 runs (100%, 95% interval [16%, 100%])")


def test_a_users_run_pays_each_evaluation_once_the_singletons_first() -> None:
    """bench_search_cost's `assess` (issue 46: what scripts/assess.py pays): the single-perturbation configurations are
    the trace's first rows, each completed on all n inputs; its running cost is the number of distinct (configuration,
    input) pairs the racing oracle evaluated (an independent count), so a singleton proposed again costs nothing."""
    import numpy as np

    cost = load_script("bench_search_cost")
    heldout = load_script("bench_search_heldout")
    from pipeline.assess.live import singletons
    from pipeline.search import RacingOracle

    _, _, objectives, space, _, _, units = heldout.problems("dev", 1, heldout.QUICK_SPACE)[0]
    oracle = RacingOracle(objectives, space, units, seed=0)
    trace = cost.user_run(oracle, space, space.size, seed=0)
    first = singletons(space)
    n = len(units.clean)
    assert np.array_equal(trace[list(space.names)].to_numpy()[:len(first)], first) and (trace["inputs"][:len(first)] == n).all()
    assert trace["evaluations"].iloc[-1] == len(oracle.spent_pairs()) <= space.size * n
    later = np.isin(space.indices(trace[list(space.names)].to_numpy()[len(first):]), space.indices(first))
    assert later.any() and (trace["inputs"].to_numpy()[len(first):][later] == 0).all()
