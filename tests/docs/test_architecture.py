"""The house rules of docs/architecture.md: few loose modules at pipeline/'s root, and a map that names every package."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def packages() -> list[str]:
    return sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "pipeline").rglob("__init__.py"))


def test_at_most_four_modules_lie_at_the_root():
    loose = sorted(p.name for p in (ROOT / "pipeline").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 4, loose


def test_the_map_names_every_package():
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = [name for name in packages() if name != "pipeline" and f"`{name}`" not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_the_map_lists_the_layers_of_the_contract():
    """Every layer of pyproject.toml's import-linter contract appears in the map's table of layers."""
    import tomllib

    layers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]["layers"]
    table = (ROOT / "docs" / "architecture.md").read_text().split("## What flows")[0]
    names = [n.strip() for layer in layers for n in layer.replace("|", ":").split(":")]
    missing = [n for n in names if n != "scripts" and f"`{n}`" not in table]
    assert not missing, f"the map's layer table leaves out {missing}"


def test_no_file_points_outside_the_repository():
    """The papers are cited by title and arXiv id; no tracked file names a path beside the repository."""
    import re
    import subprocess

    outside = re.compile(r"\.\./shared|DESIGN\.md|(testnav|paired-evaluations|robustness-index)\.md")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = [f for f in tracked if f.endswith((".py", ".md", ".toml", ".yaml")) and not f.startswith("outputs/")
             and f != "tests/docs/test_architecture.py" and outside.search((ROOT / f).read_text(errors="replace"))]
    assert not found, f"these files point outside the repository: {found}"


def _modules() -> list[Path]:
    return sorted([*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "scripts").glob("*.py"), *(ROOT / "perf").glob("*.py")])


def test_no_module_docstring_runs_past_40_lines():
    """A module docstring says what the module does; history and measurements live in docs/."""
    import ast

    long = {str(p.relative_to(ROOT)): n for p in _modules()
            if (n := len((ast.get_docstring(ast.parse(p.read_text()), clean=False) or "").splitlines())) > 40}
    assert not long, f"module docstrings over 40 lines: {long}"


def test_no_module_imports_another_modules_private_name():
    """`from pipeline.a import _b` reaches into a module's insides; what another module of the library or a stage script
    needs is public. (A speed script of perf/ may time a private kernel: bench_glass_blur compiles `_move_pixels`.)"""
    import ast

    found = []
    for path in _modules():
        if path.parent.name == "perf":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipeline"):
                found += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, f"imports of private names: {found}"
