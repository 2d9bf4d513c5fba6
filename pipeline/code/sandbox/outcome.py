"""How a sandboxed run ended: the statuses, `ExecResult`, and `classify`, which turns what the host saw
(a limit it enforced, the captured output, the launcher's status lines) into one `ExecResult`."""
from __future__ import annotations

import dataclasses
import signal

from pipeline.code.sandbox import protocol

STATUSES = ("passed", "failed", "memory", "timeout", "output_limit", "killed", "detached", "error")
PASSED, FAILED, MEMORY, TIMEOUT, OUTPUT_LIMIT, KILLED, DETACHED, ERROR = STATUSES


@dataclasses.dataclass(frozen=True)
class ExecResult:
    """How one sandboxed run ended.

    passed: True exactly when the program exited with status 0 within its limits (status ``passed``).
    status: one of `STATUSES` (see the package docstring).
    returncode: the program's exit status, minus the signal number if a signal ended it, None when the
        sandbox killed it (timeout, output limit) or never started it.
    stdout, stderr: the captured output, decoded as UTF-8 with replacement; together at most
        ``max_output_bytes`` bytes.
    reason: one human-readable line.
    seconds: wall-clock duration of the run, set-up and clean-up included.
    isolation: ``"namespaces"``, ``"uid"`` or ``"user"`` (`protocol.MODES`; see the package docstring).
    network_isolated: whether the program ran in its own, disconnected network namespace.
    isolation_note: why a run fell back from namespaces ("" when it did not).
    leftover_processes: processes found alive after the program exited (all of them killed).
    """

    passed: bool
    status: str
    returncode: int | None
    stdout: str
    stderr: str
    reason: str
    seconds: float
    isolation: str
    network_isolated: bool
    isolation_note: str = ""
    leftover_processes: int = 0


def classify(limit_hit: str | None, out: bytes, err: bytes, report: protocol.StatusReport, *,
             seconds: float, timeout_s: float, config: dict, max_output_bytes: int) -> ExecResult:
    """The `ExecResult` of a run: `limit_hit` is `TIMEOUT` or `OUTPUT_LIMIT` when the host killed the run
    for that limit (None otherwise), `report` the launcher's status lines, `config` the launcher's
    settings (``root``, ``memory_mb``, ``cpu_s`` are read)."""
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    mode, note = report.mode, report.note
    if not mode:
        mode = protocol.MODE_UID if config["root"] else protocol.MODE_USER
    returncode, leftovers = report.end if report.end is not None else (None, 0)
    last = _last_line(stderr)

    def result(status: str, reason: str) -> ExecResult:
        return ExecResult(passed=status == PASSED, status=status, returncode=returncode, stdout=stdout,
                          stderr=stderr, reason=reason, seconds=seconds, isolation=mode,
                          network_isolated=mode == protocol.MODE_NAMESPACES, isolation_note=note,
                          leftover_processes=leftovers)

    if limit_hit == TIMEOUT:
        returncode = None
        return result(TIMEOUT, f"wall-clock timeout after {timeout_s:g} s; the process tree was killed")
    if limit_hit == OUTPUT_LIMIT:
        returncode = None
        return result(OUTPUT_LIMIT, f"output exceeded {max_output_bytes} bytes; the process tree was killed")
    if report.errors:
        return result(ERROR, f"sandbox error: {report.errors[0]}")
    if returncode is None:
        if report.terminated:
            return result(KILLED, "the sandbox launcher was sent SIGTERM; the process tree was killed")
        return result(KILLED, "the sandbox launcher ended without reporting (killed from outside?)")
    extra = f"; {leftovers} leftover process(es) killed" if leftovers else ""
    if returncode == 0:
        if leftovers:
            return result(DETACHED, f"exited with status 0 but left {leftovers} process(es) running; killed")
        return result(PASSED, "exited with status 0")
    if returncode > 0:
        if last.startswith("MemoryError"):
            return result(MEMORY, f"memory limit ({config['memory_mb']} MiB address space): {last}{extra}")
        return result(FAILED, f"exit status {returncode}: {last or '(no stderr)'}{extra}")
    signum = -returncode
    if signum == signal.SIGXCPU:
        return result(TIMEOUT, f"CPU time limit ({config['cpu_s']} s) exceeded (SIGXCPU){extra}")
    return result(KILLED, f"terminated by {_signal_name(signum)}{extra}")


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:300]
    return ""


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
