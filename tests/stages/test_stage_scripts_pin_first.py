"""Every stage script re-executes itself under the pinned numerics (`pipeline.runtime.numerics`) before its heavy imports:
`import pipeline.runtime.pin` comes first, so the process that is replaced has loaded neither numpy nor torch."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.runtime.numerics import PINNED

ROOT = Path(__file__).resolve().parents[2]
STAGE_SCRIPTS = sorted(p for p in (ROOT / "scripts").glob("*.py") if "run_stage(" in p.read_text())


@pytest.mark.parametrize("script", STAGE_SCRIPTS, ids=lambda p: p.name)
def test_the_first_import_of_every_stage_script_is_pipeline_pin(script: Path) -> None:
    imports = [node for node in ast.parse(script.read_text()).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    first = next(node for node in imports if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"))
    assert isinstance(first, ast.Import) and [a.name for a in first.names] == ["pipeline.runtime.pin"], script.name


def test_an_unpinned_start_re_executes_before_numpy_or_torch_load() -> None:
    """`-X importtime` prints each process's imports; the replaced process's list ends where the second interpreter's
    begins (its `encodings` line). The second one then refuses the bad key: one line, exit 2."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED and k != "ROBUSTNESS_PINNED"}
    result = subprocess.run([sys.executable, "-X", "importtime", "scripts/plot_screening.py", "--params", "no_such_key=1"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    starts = [i for i, line in enumerate(result.stderr.splitlines()) if line.endswith("| encodings")]
    assert len(starts) == 2, result.stderr[-2000:]
    first_process = result.stderr.splitlines()[: starts[1]]
    replaced = {line.rsplit("|", 1)[-1].strip() for line in first_process if line.startswith("import time:")}
    assert "pipeline.runtime.numerics" in replaced and not {"numpy", "torch", "pandas"} & replaced
    assert result.returncode == 2 and "no_such_key" in result.stderr
