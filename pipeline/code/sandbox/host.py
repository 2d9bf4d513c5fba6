"""The host side of the sandbox: `run_program` writes the program, starts `launcher.py` under
``python -I -S``, watches its pipes against the wall-clock and output limits, kills the whole run, and
classifies how it ended (see the package docstring)."""
from __future__ import annotations

import json
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from pipeline.code.sandbox import outcome, protocol
from pipeline.code.sandbox.outcome import ExecResult

IS_ROOT = os.geteuid() == 0
DEFAULT_UID = 65534
DEFAULT_GID = 65534
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py")

_STATUS_CAP = 1 << 16
_DRAIN_GRACE_S = 1.0


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


def _run_in(workdir: str, source: str, timeout_s: float, started: float, interpreter: str,
            config: dict, max_output_bytes: int) -> ExecResult:
    program = os.path.join(workdir, protocol.PROGRAM_NAME)
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
            [interpreter, "-I", "-S", "-B", LAUNCHER, json.dumps(config)],
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
        limit_hit = _watch(proc.pid, streams, status_r, started + timeout_s, max_output_bytes)
    finally:  # whatever happened, even an exception in this process: kill everything, then reap
        so_far = protocol.parse(bytes(streams[status_r]))
        try:
            _shutdown(proc.pid, so_far.mode == protocol.MODE_NAMESPACES, so_far.pid_namespace)
        finally:
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
            status_file.close()
    seconds = time.monotonic() - started
    return outcome.classify(limit_hit, bytes(streams[out_fd]), bytes(streams[err_fd]),
                            protocol.parse(bytes(streams[status_r])), seconds=seconds, timeout_s=timeout_s,
                            config=config, max_output_bytes=max_output_bytes)


def _watch(pid: int, streams: dict[int, bytearray], status_fd: int, deadline: float,
           max_output_bytes: int) -> str | None:
    """Read the pipes until the launcher exited and they closed; `outcome.TIMEOUT` or
    `outcome.OUTPUT_LIMIT` if a limit struck first (the caller then kills everything), None otherwise."""
    selector = selectors.DefaultSelector()
    for fd in streams:
        selector.register(fd, selectors.EVENT_READ)
    output = 0
    exited_at = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return outcome.TIMEOUT
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
                    return outcome.OUTPUT_LIMIT
        while not _has_exited(pid):
            if time.monotonic() >= deadline:
                return outcome.TIMEOUT
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
            info = protocol.proc_stat(name)
            if info is not None and info[0] not in protocol.DEAD_STATES:
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
