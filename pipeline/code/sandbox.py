"""Run an untrusted Python program in a throw-away, resource-limited sandbox: `run_program(source, timeout_s)`.

Threat model
------------
The program is generated code and is treated as hostile: it may loop forever, allocate without bound, fork
without bound, flood its output, ignore SIGTERM, detach children that outlive it (double fork, `setsid`),
try to kill its parent or other host processes, read the host's environment, delete or write files outside
its directory, or open network connections. The host (the Python process calling `run_program`, its files,
its memory and its other processes) must come out unharmed, and every such program must end as a failed
`ExecResult` with a status that names what happened.

How a run is built (full isolation: running as root on Linux with namespaces available)
---------------------------------------------------------------------------------------
* The source is written to `main.py` in a fresh temporary directory (`tempfile.mkdtemp`, owned by the
  sandbox uid, mode 0700), removed when the run ends.
* The host starts a launcher, `python -I -S this_file.py`, with an *empty* environment, stdin from
  /dev/null, stdout/stderr on pipes, in a new session and process group (`start_new_session=True`), with
  no inherited file descriptors but a status pipe. No `preexec_fn` (it is unsafe in a threaded host).
* The launcher (trusted code, still root) calls `unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
  CLONE_NEWIPC)` through ctypes (`libc.unshare`; Python 3.11 has no `os.unshare`):
  - network: the new network namespace holds only a loopback interface that is *down*, so every
    connection, to 127.0.0.1 as to the outside, fails (ENETUNREACH); abstract Unix sockets are per
    namespace too. The program, unprivileged, cannot bring an interface up or leave the namespace;
  - mounts (all private to the namespace, nothing propagates to the host): a fresh size-limited tmpfs on
    /tmp, also bound on /var/tmp and /dev/shm; a small empty tmpfs on /run (hides path-based sockets
    there); the working directory becomes its own size-limited tmpfs at the same path (the launcher copies
    `main.py` into it); a fresh /proc of the new PID namespace (host processes, their command lines and
    environments are invisible). If a directory on the interpreter's path is not searchable by the
    sandbox uid (e.g. a pyenv Python under /root, mode 0700), that directory is covered by an empty
    tmpfs and the interpreter's prefix is bind-mounted back, read-only, at its own path;
  - IPC: System V IPC and POSIX message queues are private.
* The launcher forks the namespace's init (PID 1, trusted, root, stays in the launcher's process group).
  The init forks the program's process, which calls `setsid`, sets the resource limits (RLIMIT_CPU,
  RLIMIT_AS, RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE=0), drops privileges
  (`setgroups([])`, `setresgid`, `setresuid` to the sandbox uid/gid, 65534 nobody/nogroup by default;
  this also drops every capability), sets `PR_SET_NO_NEW_PRIVS` (set-uid binaries cannot regain
  privileges), and execs `python -I -S -B -X utf8 main.py` (the real path of `sys.executable`) with an
  empty environment. Only the standard library is importable.
* Detached children: when the init of a PID namespace exits or is killed, the kernel SIGKILLs every other
  process in the namespace, whatever its session or process group. The init waits for the program, counts
  the processes still alive in the namespace (a program that exits 0 but leaves processes behind gets the
  status `detached`), reports, and exits. On a timeout or an output flood the host SIGKILLs the launcher's
  process group, which holds the launcher and the init (the program, which may have called `setsid`, does
  not need to be in it): the namespace dies with its init. Either way the host then polls its own /proc
  until no live process belongs to the run's PID namespace (`/proc/PID/ns/pid`, the namespace named by
  the launcher), so nothing of the run is alive when `run_program` returns. The program cannot signal
  the init or the launcher (they are root, it is not) and cannot see host processes at all; the init and
  the program also carry PR_SET_PDEATHSIG=SIGKILL.

Statuses (`ExecResult.status`)
------------------------------
``passed``        exit status 0 within every limit, no process left behind (the only status with
                  ``passed=True``).
``failed``        non-zero exit status: an uncaught exception (AssertionError, SyntaxError, PermissionError,
                  OSError from a blocked connection, ...), `sys.exit(n)`, a failed import; the reason is
                  the last line of stderr.
``memory``        the program died of the address-space limit (its last stderr line is a MemoryError).
``timeout``       the wall-clock limit was reached (the whole process tree is killed), or the CPU-time
                  limit (SIGXCPU).
``output_limit``  stdout + stderr exceeded ``max_output_bytes`` (the process tree is killed at once).
``killed``        the program was terminated by a signal it did not get from the sandbox for a limit
                  (SIGSEGV, SIGABRT, a SIGKILL it sent itself, the kernel's OOM killer, ...).
``detached``      the program exited 0 but left processes running; they were killed.
``error``         the sandbox itself could not run the program (namespace or mount setup failed with
                  ``namespaces=True``, the interpreter could not be executed as the sandbox uid, ...).

Degraded modes (`ExecResult.isolation`)
---------------------------------------
``"namespaces"``  everything above (root, `unshare` allowed).
``"uid"``         root, but `unshare` failed (e.g. a container without CAP_SYS_ADMIN) or
                  ``namespaces=False``: privileges are dropped, limits apply, and detached children are
                  still killed: the launcher is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so orphans,
                  double-forked or not, are re-parented to it; when the program ends (or the host sends
                  it SIGTERM on a timeout) it SIGSTOPs every descendant it finds in /proc until a scan
                  finds them all stopped, then SIGKILLs them, and repeats until it has no child left (a
                  stopped process cannot fork, so a fork bomb cannot outrun it). The program cannot kill
                  the root launcher. NOT covered: the network is reachable; the program can write where
                  the sandbox uid may (world-writable /tmp, /var/tmp, /dev/shm), see host processes in
                  /proc (not their environments, which belong to other uids) and signal other processes
                  of the same uid (use a dedicated ``uid``); the interpreter must be executable by the
                  sandbox uid (otherwise status ``error``).
``"user"``        not root: the program runs as the calling user, with the limits (RLIMIT_NPROC is then
                  counted over all of the user's processes, so the limit is raised by their current
                  number) and the subreaper. NOT covered, besides everything ``"uid"`` lacks: the program
                  can read, write and delete whatever the user can, read the environments of the user's
                  other processes in /proc (including the host's), and signal or kill the launcher (the
                  program itself then dies of PR_SET_PDEATHSIG, but its detached descendants escape).
``ExecResult.network_isolated`` is True only in ``"namespaces"`` mode; ``ExecResult.isolation_note`` says
why a run fell back. ``namespaces=True`` refuses to fall back (status ``error``).

Not covered in any mode
-----------------------
* Reading world-readable host files (the project tree, /etc, /usr, ...): there is no chroot; only /tmp,
  /var/tmp, /dev/shm, /run and non-searchable directories on the interpreter's path are hidden.
* Kernel vulnerabilities (there is no seccomp filter), CPU cache or timing side channels, CPU
  contention (a fork bomb burns up to ``nproc`` cores until the timeout).
* RLIMIT_NPROC counts every process of the sandbox uid in the user namespace, so concurrent sandboxes
  (or other processes) under the same uid share the budget; pass distinct ``uid`` values to separate them.
* RLIMIT_AS limits address space, not resident memory: allocator arenas of many threads can hit it early.
* Path-based Unix sockets outside the hidden directories, if their permissions let the sandbox uid in.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

STATUSES = ("passed", "failed", "memory", "timeout", "output_limit", "killed", "detached", "error")
IS_ROOT = os.geteuid() == 0
DEFAULT_UID = 65534
DEFAULT_GID = 65534

_SCRIPT = os.path.abspath(__file__)
_PROGRAM_NAME = "main.py"
_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_STATUS_CAP = 1 << 16
_DRAIN_GRACE_S = 1.0


@dataclasses.dataclass(frozen=True)
class ExecResult:
    """How one sandboxed run ended.

    passed: True exactly when the program exited with status 0 within its limits (status ``passed``).
    status: one of `STATUSES` (see the module docstring).
    returncode: the program's exit status, minus the signal number if a signal ended it, None when the
        sandbox killed it (timeout, output limit) or never started it.
    stdout, stderr: the captured output, decoded as UTF-8 with replacement; together at most
        ``max_output_bytes`` bytes.
    reason: one human-readable line.
    seconds: wall-clock duration of the run, set-up and clean-up included.
    isolation: ``"namespaces"``, ``"uid"`` or ``"user"`` (see the module docstring).
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


def run_program(
    source: str,
    timeout_s: float,
    *,
    memory_mb: int = 512,
    max_output_bytes: int = 1_000_000,
    nproc: int = 32,
    file_size_mb: int = 16,
    nofile: int = 64,
    disk_mb: int = 64,
    namespaces: bool | None = None,
    uid: int = DEFAULT_UID,
    gid: int = DEFAULT_GID,
    python: str | None = None,
) -> ExecResult:
    """Run the Python program `source` in the sandbox and report how it ended (never raises for what the
    program does).

    timeout_s: wall-clock limit in seconds (> 0), enforced by this process; the CPU-time limit is
        ceil(timeout_s) + 1 s. memory_mb: RLIMIT_AS in MiB. max_output_bytes: cap on stdout + stderr
        together. nproc: RLIMIT_NPROC (processes and threads of the sandbox uid). file_size_mb:
        RLIMIT_FSIZE. nofile: RLIMIT_NOFILE. disk_mb: size of the private tmpfs of the working directory
        and of the one shared by /tmp, /var/tmp and /dev/shm (namespaces mode).
    namespaces: None uses Linux namespaces when possible and falls back otherwise (see
        `ExecResult.isolation`), True demands them (status ``error`` if unavailable), False does not try.
    uid, gid: the unprivileged identity the program runs as when this process is root (ignored
        otherwise); 0 is refused.
    python: the interpreter (default: the real path of `sys.executable`), run as ``python -I -S``.

    Raises ValueError naming the value for a non-positive or non-finite limit, or a uid/gid of 0 (or
    negative); TypeError when `source` is not a str or `timeout_s` not a number. RuntimeError only if
    processes of the run survive SIGKILL for seconds (a kernel-level problem, not something a program
    can cause).
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, got {type(source).__name__}")
    _check_timeout(timeout_s)
    for name, value in (("memory_mb", memory_mb), ("max_output_bytes", max_output_bytes), ("nproc", nproc),
                        ("file_size_mb", file_size_mb), ("nofile", nofile), ("disk_mb", disk_mb)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if memory_mb < 32:
        raise ValueError(f"memory_mb must be at least 32 (the interpreter needs it), got {memory_mb!r}")
    if nofile < 16:
        raise ValueError(f"nofile must be at least 16 (the interpreter needs it), got {nofile!r}")
    for name, value in (("uid", uid), ("gid", gid)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int (never root), got {value!r}")
    if namespaces not in (None, True, False):
        raise ValueError(f"namespaces must be None, True or False, got {namespaces!r}")
    interpreter = os.path.realpath(python if python is not None else sys.executable)
    if not os.path.isfile(interpreter):
        raise ValueError(f"python must be an interpreter file, got {python!r}")

    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="pipeline-sandbox-")
    try:
        return _run_in(workdir, source, timeout_s, started, interpreter, {
            "workdir": workdir, "python": interpreter, "root": IS_ROOT, "namespaces": namespaces,
            "uid": uid, "gid": gid, "disk_mb": disk_mb, "nproc": nproc, "memory_mb": memory_mb,
            "cpu_s": math.ceil(timeout_s) + 1, "file_size_mb": file_size_mb, "nofile": nofile,
        }, max_output_bytes)
    finally:
        _remove_tree(workdir)


def _check_timeout(timeout_s: float) -> None:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
        raise TypeError(f"timeout_s must be a positive finite number, got {timeout_s!r}")
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise ValueError(f"timeout_s must be a positive finite number, got {timeout_s!r}")


# ----------------------------------------------------------------------------------------------- host side


def _run_in(workdir: str, source: str, timeout_s: float, started: float, interpreter: str,
            config: dict, max_output_bytes: int) -> ExecResult:
    program = os.path.join(workdir, _PROGRAM_NAME)
    with open(program, "w", encoding="utf-8") as handle:
        handle.write(source)
    os.chmod(program, 0o600)
    os.chmod(workdir, 0o700)
    if IS_ROOT:
        os.chown(workdir, config["uid"], config["gid"])
        os.chown(program, config["uid"], config["gid"])
    status_r, status_w = os.pipe()
    config["status_fd"] = status_w
    try:
        proc = subprocess.Popen(
            [interpreter, "-I", "-S", "-B", _SCRIPT, json.dumps(config)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=workdir, env={},
            start_new_session=True, close_fds=True, pass_fds=(status_w,),
        )
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    status_file = os.fdopen(status_r, "rb", buffering=0)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    streams = {out_fd: bytearray(), err_fd: bytearray(), status_r: bytearray()}
    try:
        outcome = _watch(proc.pid, streams, status_r, started + timeout_s, max_output_bytes)
    finally:  # whatever happened, even an exception in this process: kill everything, then reap
        status = bytes(streams[status_r])
        try:
            _shutdown(proc.pid, _mode_line(status)[0] == "namespaces", _status_value(status, "pidns"))
        finally:
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
            status_file.close()
    seconds = time.monotonic() - started
    return _classify(outcome, bytes(streams[out_fd]), bytes(streams[err_fd]), bytes(streams[status_r]),
                     seconds, timeout_s, config, max_output_bytes)


def _watch(pid: int, streams: dict[int, bytearray], status_fd: int, deadline: float,
           max_output_bytes: int) -> str | None:
    """Read the pipes until the launcher exited and they closed; "timeout" or "output_limit" if a limit
    struck first (the caller then kills everything), None otherwise."""
    selector = selectors.DefaultSelector()
    for fd in streams:
        selector.register(fd, selectors.EVENT_READ)
    output = 0
    exited_at = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if exited_at is None and _has_exited(pid):
                exited_at = now
            if exited_at is not None and now - exited_at > _DRAIN_GRACE_S:
                return None  # something outside our reach holds a pipe open: stop reading, kill
            for key, _ in selector.select(timeout=min(deadline - now, 0.05)):
                fd = key.fd
                data = os.read(fd, 65536)
                if not data:
                    selector.unregister(fd)
                    continue
                if fd == status_fd:
                    streams[fd] += data[: max(0, _STATUS_CAP - len(streams[fd]))]
                    continue
                room = max_output_bytes - output
                streams[fd] += data[:room]
                output += len(data)
                if output > max_output_bytes:
                    return "output_limit"
        while not _has_exited(pid):
            if time.monotonic() >= deadline:
                return "timeout"
            time.sleep(0.005)
        return None
    finally:
        selector.close()


def _has_exited(pid: int) -> bool:
    """Whether our child `pid` has exited, without reaping it (its pid and process group stay reserved)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _shutdown(pid: int, namespaced: bool, pid_namespace: str) -> None:
    """Kill everything the run started, before reaping the launcher (so its pid cannot be reused meanwhile).

    Namespaces: SIGKILL to the launcher's process group kills the namespace's init (if the launcher
    already forked it; otherwise nothing ran yet), and the kernel then kills every process of the
    namespace; with `pid_namespace` (e.g. "pid:[4026532001]", reported by the launcher) wait until /proc
    shows none of them (any straggler is SIGKILLed through a pidfd).
    Fallback modes: SIGTERM asks the launcher (a child subreaper) to kill its descendants; then the group
    is SIGKILLed anyway."""
    if not namespaced and not _has_exited(pid):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        give_up = time.monotonic() + 2.0
        while not _has_exited(pid) and time.monotonic() < give_up:
            time.sleep(0.005)
    _kill_group(pid)
    if pid_namespace:
        _empty_namespace(pid_namespace)


def _namespace_members(pid_namespace: str) -> list[int]:
    """Live (non-zombie) processes of the PID namespace, from the host's /proc."""
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/ns/pid") != pid_namespace:
                    continue
            except OSError:
                continue
            info = _proc_stat(name)
            if info is not None and info[0] not in "ZX":
                members.append(int(name))
    return members


def _empty_namespace(pid_namespace: str, patience_s: float = 5.0) -> None:
    """Wait until no process of the PID namespace is left; SIGKILL stragglers after a short while."""
    started = time.monotonic()
    while members := _namespace_members(pid_namespace):
        waited = time.monotonic() - started
        if waited > patience_s:
            raise RuntimeError(f"sandbox processes {members} of {pid_namespace} survived SIGKILL")
        if waited > 0.5:
            for pid in members:
                _kill_in_namespace(pid, pid_namespace)
        time.sleep(0.005)


def _kill_in_namespace(pid: int, pid_namespace: str) -> None:
    """SIGKILL `pid` if it still belongs to `pid_namespace` (through a pidfd: no pid-reuse race)."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if os.readlink(f"/proc/{pid}/ns/pid") == pid_namespace:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(pidfd)


def _status_value(status: bytes, key: str) -> str:
    """The rest of the launcher's first status line starting with `key` ("" if none)."""
    for line in status.decode("utf-8", "replace").splitlines():
        if line.startswith(key + " "):
            return line[len(key) + 1:]
    return ""


def _mode_line(status: bytes) -> tuple[str, str]:
    mode, _, note = _status_value(status, "mode").partition(" ")
    return mode, note


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:300]
    return ""


def _classify(outcome: str | None, out: bytes, err: bytes, status: bytes, seconds: float, timeout_s: float,
              config: dict, max_output_bytes: int) -> ExecResult:
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    mode, note = _mode_line(status)
    if not mode:
        mode = "uid" if config["root"] else "user"
    lines = status.decode("utf-8", "replace").splitlines()
    errors = [line[6:] for line in lines if line.startswith("error ")]
    final = next((line.split() for line in reversed(lines) if line.startswith(("exit ", "signal "))), None)
    returncode = None
    leftovers = 0
    if final is not None:
        returncode = int(final[1]) if final[0] == "exit" else -int(final[1])
        leftovers = int(final[2])
    last = _last_line(stderr)

    def result(status_name: str, reason: str) -> ExecResult:
        return ExecResult(passed=status_name == "passed", status=status_name, returncode=returncode,
                          stdout=stdout, stderr=stderr, reason=reason, seconds=seconds, isolation=mode,
                          network_isolated=mode == "namespaces", isolation_note=note,
                          leftover_processes=leftovers)

    if outcome == "timeout":
        returncode = None
        return result("timeout", f"wall-clock timeout after {timeout_s:g} s; the process tree was killed")
    if outcome == "output_limit":
        returncode = None
        return result("output_limit", f"output exceeded {max_output_bytes} bytes; the process tree was killed")
    if errors:
        return result("error", f"sandbox error: {errors[0]}")
    if final is None:
        if "terminated" in lines:
            return result("killed", "the sandbox launcher was sent SIGTERM; the process tree was killed")
        return result("killed", "the sandbox launcher ended without reporting (killed from outside?)")
    extra = f"; {leftovers} leftover process(es) killed" if leftovers else ""
    if returncode == 0:
        if leftovers:
            return result("detached", f"exited with status 0 but left {leftovers} process(es) running; killed")
        return result("passed", "exited with status 0")
    if returncode > 0:
        if last.startswith("MemoryError"):
            return result("memory", f"memory limit ({config['memory_mb']} MiB address space): {last}{extra}")
        return result("failed", f"exit status {returncode}: {last or '(no stderr)'}{extra}")
    signum = -returncode
    if signum == signal.SIGXCPU:
        return result("timeout", f"CPU time limit ({config['cpu_s']} s) exceeded (SIGXCPU){extra}")
    return result("killed", f"terminated by {_signal_name(signum)}{extra}")


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _remove_tree(path: str) -> None:
    def make_writable(function, failed_path, _exc_info):
        try:
            os.chmod(os.path.dirname(failed_path), 0o700)
            if os.path.isdir(failed_path) and not os.path.islink(failed_path):
                os.chmod(failed_path, 0o700)
            function(failed_path)
        except OSError:
            pass

    shutil.rmtree(path, onerror=make_writable)
    if os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)


# ------------------------------------------------------------------------------ launcher (child processes)
# Everything below runs in the launcher, `python -I -S sandbox.py CONFIG`: a fresh single-threaded
# interpreter, trusted code, started by `_run_in` with an empty environment.


class _Terminated(Exception):
    pass


_LIBC = []


def _libc():
    """libc through ctypes, loaded once (before privileges are dropped: the interpreter's files may then be
    unreadable)."""
    if not _LIBC:
        import ctypes

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = (lambda s: None if s is None else s.encode())
    _check(_libc().mount(encode(source), encode(target), encode(fstype), flags, encode(data)),
           f"mount {target}")


def _prctl(option: int, value: int) -> None:
    _check(_libc().prctl(option, value, 0, 0, 0), f"prctl({option})")


def _report(fd: int, line: str) -> None:
    os.write(fd, (line + "\n").encode("utf-8", "replace"))


def _launcher_main(config: dict) -> None:
    status_fd = config["status_fd"]
    os.set_inheritable(status_fd, False)
    os.umask(0o022)
    try:
        import ctypes  # noqa: F401  (imported while the interpreter's files are readable)
        import resource  # noqa: F401

        _libc()
        with open(os.path.join(config["workdir"], _PROGRAM_NAME), "rb") as handle:
            source = handle.read()
        mode = "uid" if config["root"] else "user"
        note = "" if config["root"] else "not running as root"
        if config["namespaces"] is False:
            note = "namespaces disabled by the caller"
        elif config["root"]:
            try:
                _check(_libc().unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC), "unshare")
                mode = "namespaces"
            except OSError as exc:
                note = str(exc)
        if mode != "namespaces" and config["namespaces"] is True:
            _report(status_fd, f"error namespaces required but unavailable ({note})")
            os._exit(1)
        if mode == "namespaces":
            _setup_mounts(config, source)
        elif not config["root"]:
            config["nproc"] += _count_processes_of(os.getuid())
        _report(status_fd, f"mode {mode} {note}".rstrip())
    except Exception as exc:  # noqa: BLE001  (any set-up failure is a sandbox error: never run half-isolated)
        _report(status_fd, f"error set-up failed: {exc!r}")
        os._exit(1)
    if mode == "namespaces":
        _launch_namespaced(config, status_fd)
    else:
        _launch_subreaper(config, status_fd)


def _setup_mounts(config: dict, source: bytes) -> None:
    """In the new mount namespace: private propagation, private /tmp, /var/tmp, /dev/shm and /run, the
    interpreter reachable by the sandbox uid, the working directory as a private tmpfs holding main.py."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    roots = sorted({os.path.realpath(sys.base_prefix), os.path.dirname(config["python"])})
    held = [(root, os.open(root, os.O_PATH | os.O_DIRECTORY), os.stat(root)) for root in roots]
    plain = _MS_NOSUID | _MS_NODEV
    _mount("tmpfs", "/tmp", "tmpfs", plain, f"size={config['disk_mb']}m,mode=1777")
    for shared in ("/var/tmp", "/dev/shm"):
        if os.path.isdir(shared) and not os.path.islink(shared):
            _mount("/tmp", shared, None, _MS_BIND)
    if os.path.isdir("/run") and not os.path.islink("/run"):
        _mount("tmpfs", "/run", "tmpfs", plain | _MS_NOEXEC, "size=1m,mode=0755")
    for root, fd, before in held:
        _make_reachable(root, fd, before)
    workdir = config["workdir"]
    os.makedirs(workdir, mode=0o755, exist_ok=True)
    owner = f"uid={config['uid']},gid={config['gid']}"
    _mount("tmpfs", workdir, "tmpfs", plain, f"size={config['disk_mb']}m,mode=0700,{owner}")
    program = os.path.join(workdir, _PROGRAM_NAME)
    with open(program, "wb") as handle:
        handle.write(source)
    os.chown(program, config["uid"], config["gid"])
    os.chmod(program, 0o600)


def _make_reachable(path: str, fd: int, before: os.stat_result) -> None:
    """Cover the first ancestor of `path` that others cannot search with an empty tmpfs (mode 0755), then
    bind the original directory (held open as `fd`) back at `path`, read-only."""
    current = "/"
    for component in path.strip("/").split("/"):
        try:
            mode = os.stat(current).st_mode
        except FileNotFoundError:
            break
        if not mode & stat.S_IXOTH:
            _mount("tmpfs", current, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
            break
        current = os.path.join(current, component)
    os.makedirs(path, mode=0o755, exist_ok=True)
    now = os.stat(path)
    if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
        _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _launch_namespaced(config: dict, status_fd: int) -> None:
    init = os.fork()
    if init == 0:  # PID 1 of the new PID namespace
        try:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            # A mount namespace of its own, so that the launcher keeps seeing the host's /proc.
            _check(_libc().unshare(_CLONE_NEWNS), "unshare")
            _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
            program = os.fork()
            if program == 0:
                _exec_program(config, status_fd)
            wait_status = _wait_for(program)
            _reap_zombies()
            leftovers = _count_namespace_leftovers()
            _report(status_fd, f"{_describe(wait_status)} {leftovers}")
        except BaseException as exc:  # noqa: BLE001  (the init must report, then exit, whatever happened)
            _report(status_fd, f"error namespace init failed: {exc!r}")
        os._exit(0)  # the kernel now SIGKILLs whatever is left in the namespace
    try:
        _report(status_fd, f"pidns {os.readlink(f'/proc/{init}/ns/pid')}")
    except OSError:
        pass  # the host then kills the process group without waiting for the namespace to empty
    _wait_for(init)
    os._exit(0)


def _launch_subreaper(config: dict, status_fd: int) -> None:
    """Fallback without namespaces: orphaned descendants are re-parented to this launcher, which kills them."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)

    def on_term(_signum, _frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise _Terminated

    signal.signal(signal.SIGTERM, on_term)
    program = os.fork()
    if program == 0:
        _exec_program(config, status_fd)
    try:
        wait_status = _wait_for(program)
        leftovers = _kill_descendants()
        _report(status_fd, f"{_describe(wait_status)} {leftovers}")
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _kill_descendants()
        _report(status_fd, "terminated")
    os._exit(0)


def _exec_program(config: dict, status_fd: int) -> None:
    """In the forked child: new session, limits, unprivileged identity, exec the program. Never returns."""
    try:
        import resource

        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for signum in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        os.setsid()
        os.chdir(config["workdir"])
        os.closerange(3, status_fd)
        os.closerange(status_fd + 1, 1 << 16)
        mib = 1 << 20
        for limit, value in (
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_CPU, (config["cpu_s"], config["cpu_s"] + 1)),
            (resource.RLIMIT_AS, config["memory_mb"] * mib),
            (resource.RLIMIT_FSIZE, config["file_size_mb"] * mib),
            (resource.RLIMIT_NOFILE, config["nofile"]),
            (resource.RLIMIT_NPROC, config["nproc"]),
        ):
            soft, hard = value if isinstance(value, tuple) else (value, value)
            resource.setrlimit(limit, (soft, hard))
        if config["root"]:
            os.setgroups([])
            os.setresgid(config["gid"], config["gid"], config["gid"])
            os.setresuid(config["uid"], config["uid"], config["uid"])
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # after setresuid, which clears it
        os.umask(0o077)
        python = config["python"]
        os.execve(python, [python, "-I", "-S", "-B", "-X", "utf8", _PROGRAM_NAME], {})
    except BaseException as exc:  # noqa: BLE001  (a forked child must never return into the launcher)
        try:
            who = f" as uid {config['uid']}" if config["root"] else ""
            _report(status_fd, f"error could not exec {config['python']}{who}: {exc!r}")
        finally:
            os._exit(127)


def _wait_for(pid: int) -> int:
    """Wait for child `pid`, reaping any other child (re-parented orphans) on the way; its wait status."""
    while True:
        try:
            reaped, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if reaped == pid:
            return wait_status


def _describe(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        return f"signal {os.WTERMSIG(wait_status)}"
    return f"exit {os.waitstatus_to_exitcode(wait_status)}"


def _reap_zombies() -> None:
    while True:
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if reaped == 0:
            return


def _proc_stat(pid: str) -> tuple[str, int] | None:
    """(state, ppid) of a process from /proc, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data[data.rfind(")") + 2:].split()
    return fields[0], int(fields[1])


def _count_namespace_leftovers() -> int:
    """Live processes in this PID namespace besides its init (/proc is the namespace's own)."""
    for attempt in range(3):
        alive = [pid for pid in os.listdir("/proc") if pid.isdigit() and pid != "1"
                 and (info := _proc_stat(pid)) is not None and info[0] not in "ZX"]
        if not alive or attempt == 2:
            return len(alive)
        time.sleep(0.02)  # something killed just before the program exited may still be dying
        _reap_zombies()
    return 0


def _kill_descendants() -> int:
    """Kill every descendant of this (subreaper) process; how many there were.

    Each round SIGSTOPs every descendant found in /proc and SIGKILLs them only once a scan finds all of
    them stopped: a stopped process cannot fork, so a fork bomb cannot outrun the clean-up. Descendants
    whose parent dies are re-parented to this process (the subreaper), so a detached grandchild stays in
    the tree."""
    me = os.getpid()
    seen: set[int] = set()
    for _ in range(2000):
        _reap_zombies()
        tree = _descendants_of(me)
        if not tree:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.002)  # a child still exiting: look again
            except ChildProcessError:
                break  # no child left at all, not even a zombie
            continue
        all_stopped = all(state in "Tt" for state in tree.values())
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL if all_stopped else signal.SIGSTOP)
            except ProcessLookupError:
                pass
        seen.update(tree)
        if all_stopped:
            time.sleep(0.002)
    return len(seen)


def _descendants_of(ancestor: int) -> dict[int, str]:
    """{pid: state} of the live (non-zombie) descendants of `ancestor`, from one scan of /proc."""
    children: dict[int, list[tuple[int, str]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _proc_stat(name)
            if info is not None and info[0] not in "ZX":
                children.setdefault(info[1], []).append((int(name), info[0]))
    found: dict[int, str] = {}
    frontier = [ancestor]
    while frontier:
        for pid, state in children.get(frontier.pop(), ()):
            if pid not in found:
                found[pid] = state
                frontier.append(pid)
    return found


def _count_processes_of(uid: int) -> int:
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


if __name__ == "__main__":
    _launcher_main(json.loads(sys.argv[1]))
