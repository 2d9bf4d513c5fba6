"""Where a report comes from: the commit, the DVC lock, the library versions, the pinned numerical
settings (`pipeline.numerics.PINNED`), the machine and the time. Everything but `PINNED` changes from run
to run; the page marks those values `data-run-dependent` (tests drop them before comparing pages)."""
from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from pipeline.numerics import PINNED

PACKAGES = ("numpy", "torch", "pandas", "scikit-learn", "pymoo", "hydra-core", "dvc")


def git_commit(repo: Path) -> str:
    """`git rev-parse HEAD` in `repo`; "unknown" without git or outside a repository."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def file_sha256(path: Path) -> str:
    """The sha256 of `path`'s bytes; "absent" when there is no such file."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"


def versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """The installed version of each distribution (importlib.metadata), "not installed" for a missing one."""
    out = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def collect_provenance(repo: Path) -> dict[str, object]:
    """The provenance of a report built from the repository at `repo` now: commit, dvc.lock sha256,
    versions, machine, time (run-dependent) and the pinned settings (fixed)."""
    return {"run": {"git commit": git_commit(repo), "dvc.lock sha256": file_sha256(repo / "dvc.lock"),
                    **{f"{name} version": v for name, v in versions().items()},
                    "python": platform.python_version(), "machine": platform.platform(),
                    "processor": platform.machine(), "cpu count": str(os.cpu_count()),
                    "built at (UTC)": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")},
            "pinned": dict(PINNED)}
