from pipeline.runtime.fingerprint import ROOT, library_versions, module_closure, source_fingerprint, stage_fingerprint


def _package(tmp_path):
    pkg = tmp_path / "pkgx"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import numpy\nfrom pkgx import b\n\ndef f():\n    from pkgx.c import g\n    return g\n")
    (pkg / "b.py").write_text("X = 1\n")
    (pkg / "c.py").write_text("def g():\n    return 2\n")
    (pkg / "unrelated.py").write_text("Y = 3\n")
    return pkg


def test_closure_follows_imports_including_lazy_ones(tmp_path):
    _package(tmp_path)
    files = {p.name for p in module_closure(["pkgx.a"], (tmp_path,))}
    assert files == {"__init__.py", "a.py", "b.py", "c.py"}


def test_fingerprint_changes_with_imported_source_only(tmp_path):
    pkg = _package(tmp_path)
    before = source_fingerprint(["pkgx.a"], (tmp_path,))
    (pkg / "unrelated.py").write_text("Y = 4\n")
    assert source_fingerprint(["pkgx.a"], (tmp_path,)) == before
    (pkg / "c.py").write_text("def g():\n    return 2 * 0.5\n")
    assert source_fingerprint(["pkgx.a"], (tmp_path,)) != before


def test_ssim_source_is_part_of_the_ground_truth_fingerprint():
    files = set(module_closure(["pipeline.benchmark.build", "pipeline.benchmark.ground_truth"]))
    assert ROOT / "pipeline" / "fidelity" / "ssim.py" in files
    assert ROOT / "pipeline" / "search" / "evolution.py" not in files


def test_stage_fingerprint_names_config_and_libraries():
    a = stage_fingerprint({"levels": 6}, ["pipeline.front.space"])
    assert a == stage_fingerprint({"levels": 6}, ["pipeline.front.space"]) != stage_fingerprint({"levels": 5}, ["pipeline.front.space"])
    assert {"numpy", "torch", "scikit-image"} <= set(library_versions())
