"""Run an untrusted Python program in a throw-away, resource-limited sandbox: `run_program(source, timeout_s)`.

Layout
------
* `host.py`: `run_program`, in the calling process: writes the program, starts the launcher, watches its
  pipes against the wall-clock and output limits, kills the run and waits until nothing of it is left.
* `launcher.py`: the launcher, a separate program run as ``python -I -S launcher.py`` (standard library
  only): namespaces, mounts, limits, privilege drop, exec of the program, clean-up of what it left.
* `protocol.py`: the status lines the launcher writes to the host (format, keys, mode names,
  `encode`/`parse`), standard library only, loaded by the launcher by its path.
* `outcome.py`: the statuses, `ExecResult`, and the classification of a run into one of them.

Threat model
------------
The program is generated code and is treated as hostile: it may loop forever, allocate without bound, fork
without bound, flood its output, ignore SIGTERM, detach children that outlive it (double fork, `setsid`),
try to kill its parent or other host processes, read the host's environment, delete or write files outside
its directory, or open network connections. The host (the Python process calling `run_program`, its files,
its memory and its other processes) must come out unharmed, and every such program must end as a failed
`ExecResult` with a status that names what happened.

How a run is built in each isolation mode, the statuses, and what no mode covers: docs/sandbox.md.
"""
from pipeline.code.sandbox.host import DEFAULT_GID, DEFAULT_UID, IS_ROOT, run_program
from pipeline.code.sandbox.outcome import STATUSES, ExecResult

__all__ = ["DEFAULT_GID", "DEFAULT_UID", "IS_ROOT", "STATUSES", "ExecResult", "run_program"]
