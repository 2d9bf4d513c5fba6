"""dvc.yaml is the stage table's output: deps derived from imports, outs from the scripts' path functions."""
from pathlib import Path

import yaml

from pipeline.stages import table as stages

ROOT = Path(__file__).resolve().parents[2]


def test_committed_dvc_yaml_is_generated_from_the_stage_table():
    assert (ROOT / "dvc.yaml").read_text() == stages.dvc_yaml(), "dvc.yaml drifted from pipeline/stages/table.py: run `make dvc.yaml`"


def test_a_new_import_becomes_a_dependency():
    """A stage's code dependency is the listing of its script's import closure (`pipeline.stages.stage_code`), so a
    module the script comes to import is listed, and its edits rerun the stage; no source file is a dep itself."""
    from pipeline.stages.stage_code import stage_code_listings

    assert "pipeline/benchmark/preparation.py" in [str(p.relative_to(ROOT)) for p in stages.Stage("x", "prepare", ()).sources()]
    listed = {name: [line.split("  ", 1)[1] for line in text.splitlines()] for name, text in stage_code_listings().items()}
    assert "pipeline/benchmark/preparation.py" in listed["prepare"] and "pipeline/fidelity/ssim.py" not in listed["prepare"]
    assert "pipeline/front/pareto.py" in listed["fuzz_geometric"]
    assert "pipeline/fuzz/report.py" in listed["figures_fuzz_geometric"]
    assert "pipeline/search/ground_truth.py" in listed["figures_search"]
    assert all("__pycache__" not in f for files in listed.values() for f in files)
    committed = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert committed.pop("stage_code")["deps"] == ["conf", "pipeline", "scripts"]
    for name, s in committed.items():
        deps = s.get("do", s)["deps"]
        assert deps[0] == f"${{paths.outputs}}/stage_code/{name.removesuffix('_suite')}.txt", name
        assert not [d for d in deps if d.startswith(("pipeline/", "scripts/"))], name


def test_each_benchmark_of_the_suite_gets_its_own_stages():
    committed = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    suite = {name: s for name, s in committed.items() if s.get("foreach") == "${suite}"}
    assert sorted(suite) == ["figures_groundtruth_suite", "groundtruth_suite", "perturb_suite", "prepare_suite", "search_suite"]
    for name, s in suite.items():
        assert s["foreach"] == "${suite}" and "--params benchmark=${item}" in s["do"]["cmd"]
        assert "conf/benchmark/${item}.yaml" in s["do"]["deps"]
        assert not [p for p in s["do"].get("params", []) if p.split(".")[0] in ("benchmark", "model", "fidelity")]
    assert suite["groundtruth_suite"]["do"]["outs"][0] == "${paths.outputs}/groundtruth/${item}.parquet"
    assert "${paths.outputs}/groundtruth" in committed["search_summary"]["deps"]  # every benchmark's table


def test_outs_are_the_paths_the_scripts_write():
    committed = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert committed["groundtruth"]["outs"][0] == "${paths.outputs}/groundtruth/${benchmark.name}.parquet"
    assert "${paths.data}/${fuzz.adapters.severity.data_dir}" in committed["fuzz_severity"]["deps"]
    assert not [o for s in committed.values() for o in s.get("do", s).get("outs", []) if "timings" in str(o)], "timings are no DVC output"


def test_each_paired_source_of_the_paired_suite_gets_its_own_stages():
    committed = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    paired = {name: s for name, s in committed.items() if s.get("foreach") == "${paired_suite}"}
    assert sorted(paired) == ["bounds_suite", "figures_paired_suite", "policies_suite", "records_suite"]
    for s in paired.values():
        assert s["do"]["cmd"].endswith("--params paired=${item}") and "conf/paired/${item}.yaml" in s["do"]["deps"]
        assert "params" not in s["do"]                                 # every paired.* key comes from conf/paired/<item>.yaml
    assert paired["records_suite"]["do"]["outs"][0] == "${paths.outputs}/records/${item}.parquet"
    assert "${paths.outputs}/records/${item}.parquet" in paired["bounds_suite"]["do"]["deps"]


def test_every_registered_search_method_keys_the_search_and_tuning_stages():
    """The catalog names methods by import path, so no import statement reaches their modules: the search
    resume keys (`pipeline.search.tables.CODE`) and the code listings of the search and tune stages must hold them all."""
    from pipeline.plugins.catalog import SEARCH_METHODS
    from pipeline.runtime.fingerprint import module_closure
    from pipeline.search.tables import CODE
    from pipeline.stages.stage_code import stage_code_listings

    files = {str(p.relative_to(ROOT)) for p in module_closure(CODE)}
    listings = stage_code_listings()
    for module in SEARCH_METHODS.modules():
        path = module.replace(".", "/") + ".py"
        assert path in files, f"{path} is not in the search resume key"
        for stage in ("search", "tune"):
            assert f"  {path}\n" in listings[stage], f"{path} is not in the code listing of stage {stage}"
    assert "pipeline/search/methods/pnd.py" in files and "pipeline/search/methods/evolution.py" in files


def test_committed_realsize_dvc_yaml_is_generated_and_runs_from_the_root():
    from pipeline.stages.realsize import FOLDER, REALSIZE, realsize_yaml

    assert (FOLDER / "dvc.yaml").read_text() == realsize_yaml(), "realsize/dvc.yaml drifted: run `make dvc.yaml`"
    committed = yaml.safe_load(realsize_yaml())["stages"]
    assert sorted(committed) == sorted(f"{s}_{b}" for b in REALSIZE for s in ("prepare", "groundtruth", "cost"))
    for name, s in committed.items():
        assert s["wdir"] == ".." and all((ROOT / d).exists() for d in s["deps"] if not d.startswith(("data/mnist", "data/tweets", "outputs/realsize"))), name
    for bench in REALSIZE:  # each reads what the stage before it writes
        outs = lambda stage: [o if isinstance(o, str) else next(iter(o)) for o in committed[f"{stage}_{bench}"]["outs"]]  # noqa: E731
        assert f"data/{bench}" in outs("prepare") and f"data/{bench}" in committed[f"groundtruth_{bench}"]["deps"]
        assert set(outs("groundtruth")) >= set(committed[f"cost_{bench}"]["deps"][-2:])
