"""Where a report comes from: the commit, the DVC lock, the library versions, the pinned numerical
settings (`pipeline.runtime.numerics.PINNED`), the machine and the time. The library versions (fixed by
requirements.lock) and the pinned settings are the same wherever the lock installs; the rest changes from
run to run, so the stage writes it to a script beside the timings (`run_script`), which the page loads: the
page itself is then the same bytes on every machine, as every output DVC records must be."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from pipeline.runtime.numerics import PINNED

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
                    "python": platform.python_version(), "machine": platform.platform(),
                    "processor": platform.machine(), "cpu count": str(os.cpu_count()),
                    "built at (UTC)": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")},
            "versions": {f"{name}": v for name, v in versions().items()},
            "pinned": dict(PINNED)}


def run_script(run: dict[str, str]) -> str:
    """A script that fills the page's run-dependent provenance list (`<dl id="run-provenance">`) with `run`."""
    return ("// The run-dependent provenance of outputs/report/index.html, kept out of the page so that the page is\n"
            "// the same bytes on every machine and run (pipeline/report/provenance.py).\n"
            "(function () {\n"
            f"  var run = {json.dumps(run, indent=2, sort_keys=False)};\n"
            "  var list = document.getElementById('run-provenance');\n"
            "  Object.keys(run).forEach(function (key) {\n"
            "    var term = document.createElement('dt'), value = document.createElement('dd');\n"
            "    term.textContent = key; value.textContent = run[key];\n"
            "    list.appendChild(term); list.appendChild(value);\n"
            "  });\n"
            "})();\n")
