"""Set-up needs no root and no system package: what `make` would run for the README's two commands (and the
environment they create) names no apt-get, sudo or dpkg."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_two_commands_run_nothing_as_root() -> None:
    dry = subprocess.run(["make", "-n", "-B", "env", "repro", "test"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert dry.returncode == 0, dry.stderr
    assert "pip install" in dry.stdout and "scripts/repro.py" in dry.stdout and "pytest" in dry.stdout
    assert not re.search(r"\b(apt-get|apt|sudo|dpkg|su)\b", dry.stdout), dry.stdout
