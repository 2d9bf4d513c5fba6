"""The house drawing of the code (docs/architecture.md): its rooms, floors, arrows and lines.

    python scripts/house.py                      # this tree
    python scripts/house.py --root /path/to/checkout

A room is an entry of `pipeline/` (a sub-package, or a loose module other than `__init__`), or one of the two
folders of scripts (`scripts/`, and `perf/`, named `benchmarks/` before). An arrow is an ordered pair of rooms with
at least one import from the first into the second. The floors are the rooms on the longest chain of arrows (the
graph has no cycle). Lines are every line of the rooms' `.py` files. The imports of `pipeline` and `scripts` are
read by grimp, the library `lint-imports` runs on; the speed scripts are not a package, so their `import` lines
are read from their syntax trees.
"""
from __future__ import annotations

import argparse
import ast
import sys
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PERF_FOLDERS = ("perf", "benchmarks")  # the speed scripts' folder, by its name now and before


def room_of(module: str) -> str | None:
    """The room of a dotted module name: `pipeline.<first part>` or `scripts`; None for anything else."""
    parts = module.split(".")
    if parts[0] == "scripts":
        return "scripts"
    return ".".join(parts[:2]) if parts[0] == "pipeline" and len(parts) > 1 else None


def imported_modules(path: Path) -> set[str]:
    """The absolute module names a file imports (`import a.b`, `from a.b import c`: a.b and a.b.c)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def floors(arrows: set[tuple[str, str]], rooms: list[str]) -> int:
    """The number of rooms on the longest chain of arrows."""
    out: dict[str, set[str]] = {}
    for a, b in arrows:
        out.setdefault(a, set()).add(b)

    @cache
    def depth(room: str) -> int:
        return 1 + max((depth(b) for b in out.get(room, ())), default=0)

    return max((depth(r) for r in rooms), default=0)


def house(root: Path) -> dict[str, Any]:
    """Rooms, loose modules, floors, arrows and lines of the checkout at `root`."""
    import grimp

    sys.path.insert(0, str(root))
    try:
        graph = grimp.build_graph("pipeline", "scripts", cache_dir=None)
    finally:
        sys.path.remove(str(root))
    edges = {(room_of(m), room_of(i)) for m in graph.modules for i in graph.find_modules_directly_imported_by(m)}
    files = [*(root / "pipeline").rglob("*.py"), *(root / "scripts").rglob("*.py")]
    perf = next((root / name for name in PERF_FOLDERS if (root / name).is_dir()), None)
    if perf is not None:
        scripts = sorted(perf.glob("*.py"))
        files += scripts
        edges |= {(perf.name, room_of(m)) for s in scripts for m in imported_modules(s)}
    arrows = {(a, b) for a, b in edges if a and b and a != b}
    rooms = sorted({room_of(m) for m in graph.modules} - {None} | ({perf.name} if perf is not None else set()))
    loose = sorted(p.stem for p in (root / "pipeline").glob("*.py") if p.stem != "__init__")
    return {"rooms": rooms, "loose_modules": loose, "floors": floors(arrows, rooms), "arrows": sorted(arrows),
            "lines": sum(len(p.read_text().splitlines()) for p in files)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="a checkout of this repository (default: this one)")
    args = parser.parse_args(argv)
    if not (args.root / "pipeline").is_dir() or not (args.root / "scripts").is_dir():
        parser.error(f"--root {args.root}: no pipeline/ and scripts/ folders there (a checkout of this repository)")
    drawing = house(args.root.resolve())
    print(f"{len(drawing['rooms'])} rooms ({len(drawing['loose_modules'])} loose modules in pipeline/), "
          f"{drawing['floors']} floors, {len(drawing['arrows'])} arrows, {drawing['lines']:,} lines")


if __name__ == "__main__":
    main()
