"""A stage script run in the test's process as `python scripts/<name>.py <args>` runs it (its `run_stage(main)` with
that argv): a process of its own costs seconds of imports, where the process is not what a test checks."""
from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def forgetting(package: str) -> Callable[[], None]:
    """A function that drops `package` (a user's, from a temporary folder) from this process's imports, so that the
    next run imports its source afresh, as a new process would."""
    def forget() -> None:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]

    return forget


def stage_here(script: str, args: Sequence[str], monkeypatch, capture, forget: Callable[[], None] = lambda: None
               ) -> subprocess.CompletedProcess:
    """scripts/<script>.py with `args`, in this process: its exit status and what it printed (`capture`: pytest's
    capsys, or capfd to catch the output of the workers it spawns), as a finished process reports them. `forget`
    runs before and after (e.g. `forgetting("my_pkg")`)."""
    module = importlib.import_module(f"scripts.{script}")
    argv = [str(ROOT / "scripts" / f"{script}.py"), *args]
    monkeypatch.setattr(sys, "argv", argv)
    capture.readouterr()
    forget()
    code = 0
    try:
        importlib.import_module("pipeline.stages.runner").run_stage(module.main)
    except SystemExit as exit_:
        code = exit_.code
    finally:
        forget()
    out = capture.readouterr()
    return subprocess.CompletedProcess(argv, code, out.out, out.err)


def run_or_fail(script: str, args: Sequence[str], monkeypatch, capsys) -> None:
    """scripts/<script>.py with `args`, in this process; fails with its error line if it exits (what it printed
    stays in `capsys` for the test to read)."""
    module = importlib.import_module(f"scripts.{script}")
    monkeypatch.setattr(sys, "argv", [str(ROOT / "scripts" / f"{script}.py"), *args])
    try:
        importlib.import_module("pipeline.stages.runner").run_stage(module.main)
    except SystemExit as exit_:
        raise AssertionError(f"{script} exited {exit_.code}: {capsys.readouterr().err[-3000:]}") from None
