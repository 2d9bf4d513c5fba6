"""What the sandbox's two programs share: the status-line protocol from the launcher to the host, the name
of the program file, and how both read a process's state from /proc. Standard library only.

The two programs
----------------
`host.py` (in the calling process) starts `launcher.py` as ``python -I -S -B launcher.py CONFIG``. CONFIG
is one JSON object: the run's settings (working directory, interpreter, uid/gid, limits) and
``status_fd``, the write end of a pipe the launcher inherits. The launcher, the namespace init it forks
and the program's process until its exec report on that pipe, one `os.write` per line (pipe writes of
up to PIPE_BUF bytes are atomic, so the short lines of different processes do not interleave); the
program itself never holds the pipe (the launcher marks it close-on-exec).

Line format
-----------
``KEY`` or ``KEY VALUE``, UTF-8, ending in "\\n": KEY is one word of `KEYS`, VALUE the rest of the line
after the first space, spaces and "=" included. A value must not contain a line break (none of those the
launcher writes does: messages are `repr`s of exceptions, `OSError` texts, paths and numbers).

==========================  ===========================================================================
``mode MODE[ NOTE]``        the isolation the launcher reached (MODE one of `MODES`) and, in NOTE, why it
                            fell back from namespaces; the first such line counts
``pidns NAMESPACE``         the run's PID namespace as ``/proc/PID/ns/pid`` names it (namespaces only)
``error MESSAGE``           the sandbox could not run the program; the first message is the reason
``exit CODE LEFTOVERS``     the program exited with status CODE; LEFTOVERS processes were still alive
                            after it and have been killed; the last end line (exit or signal) counts
``signal SIGNUM LEFTOVERS`` a signal ended the program
``terminated``              the fallback launcher was sent SIGTERM by the host and killed the tree
==========================  ===========================================================================

How the launcher reaches this module
------------------------------------
The launcher runs under ``-I -S``: neither site-packages nor the project are importable, and ``-I``
leaves the script's own directory off `sys.path`. It loads this one file by its path
(`importlib.util.spec_from_file_location`, next to ``launcher.py``), without adding any directory to
`sys.path`, so nothing else beside it becomes importable and no standard-library module can be
shadowed. Hence this module must import only the standard library, and nothing lazily (the program's
process encodes an error line after it has dropped privileges).
"""
from __future__ import annotations

import os

PROGRAM_NAME = "main.py"

MODE = "mode"
PIDNS = "pidns"
ERROR = "error"
EXIT = "exit"
SIGNAL = "signal"
TERMINATED = "terminated"
KEYS = (MODE, PIDNS, ERROR, EXIT, SIGNAL, TERMINATED)

MODE_NAMESPACES = "namespaces"
MODE_UID = "uid"
MODE_USER = "user"
MODES = (MODE_NAMESPACES, MODE_UID, MODE_USER)

DEAD_STATES = "ZX"  # /proc states of processes that have exited (zombie, dead)


def encode(key: str, value: str = "") -> bytes:
    """One status line: `key`, then a space and `value` unless `value` is empty."""
    return ((f"{key} {value}" if value else key) + "\n").encode("utf-8", "replace")


def encode_mode(mode: str, note: str) -> bytes:
    """The ``mode`` line (`note` "" when the run did not fall back)."""
    return encode(MODE, f"{mode} {note}".rstrip())


def encode_end(wait_status: int, leftovers: int) -> bytes:
    """The end line of a program that ended with `wait_status` (from `os.waitpid`)."""
    if os.WIFSIGNALED(wait_status):
        return encode(SIGNAL, f"{os.WTERMSIG(wait_status)} {leftovers}")
    return encode(EXIT, f"{os.waitstatus_to_exitcode(wait_status)} {leftovers}")


def decode(status: bytes) -> list[tuple[str, str]]:
    """(key, value) of every line of `status`, in order (value "" for a bare key)."""
    lines = status.decode("utf-8", "replace").splitlines()
    return [(key, value) for key, _, value in (line.partition(" ") for line in lines)]


class StatusReport:
    """What the status lines of one run say.

    mode, note: from the first ``mode`` line ("" if none); pid_namespace: the first ``pidns`` value;
    errors: every ``error`` message; end: (returncode, leftovers) from the last well-formed end line, the
    returncode negative (minus the signal number) for a ``signal`` line, None without one; terminated:
    whether a ``terminated`` line came."""

    __slots__ = ("end", "errors", "mode", "note", "pid_namespace", "terminated")

    def __init__(self, mode: str, note: str, pid_namespace: str, errors: list[str],
                 end: tuple[int, int] | None, terminated: bool) -> None:
        self.mode, self.note, self.pid_namespace = mode, note, pid_namespace
        self.errors, self.end, self.terminated = errors, end, terminated


def parse(status: bytes) -> StatusReport:
    """The `StatusReport` of the bytes read from the status pipe so far (never raises)."""
    lines = decode(status)

    def first(wanted: str) -> str:
        return next((value for key, value in lines if key == wanted), "")

    mode, _, note = first(MODE).partition(" ")
    ends = [end for key, value in lines if (end := _end(key, value)) is not None]
    return StatusReport(mode=mode, note=note, pid_namespace=first(PIDNS),
                        errors=[value for key, value in lines if key == ERROR],
                        end=ends[-1] if ends else None,
                        terminated=any(key == TERMINATED for key, _ in lines))


def _end(key: str, value: str) -> tuple[int, int] | None:
    if key not in (EXIT, SIGNAL):
        return None
    fields = value.split()
    try:
        code, leftovers = int(fields[0]), int(fields[1])
    except (IndexError, ValueError):
        return None
    return (code if key == EXIT else -code), leftovers


def proc_stat(pid: str) -> tuple[str, int] | None:
    """(state, ppid) of a process from /proc, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data[data.rfind(")") + 2:].split()
    return fields[0], int(fields[1])
