"""The sandbox's launcher: ``python -I -S -B launcher.py CONFIG``, started by `host.py` with an empty
environment. Trusted code in a fresh single-threaded interpreter: it sets up the namespaces (or the
subreaper fallback), forks the program's process, limits and unprivileges it, execs the program, and
reports on the status pipe (see the package docstring for what each step guards against).

It imports only the standard library (site-packages and the project are not importable under ``-I -S``)
plus the sibling `protocol.py`, which it loads by path: see `protocol` for why. It is run, not imported.
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import stat
import sys
import time

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38


def _load_protocol():
    """`protocol.py` from this file's directory, loaded by its path (that file only: `sys.path` is left
    as ``-I -S`` made it)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protocol.py")
    spec = importlib.util.spec_from_file_location("sandbox_protocol", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


protocol = _load_protocol()


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


def _report(fd: int, line: bytes) -> None:
    os.write(fd, line)


def _launcher_main(config: dict) -> None:
    status_fd = config["status_fd"]
    os.set_inheritable(status_fd, False)
    os.umask(0o022)
    try:
        import ctypes  # noqa: F401  (imported while the interpreter's files are readable)
        import resource  # noqa: F401

        _libc()
        with open(os.path.join(config["workdir"], protocol.PROGRAM_NAME), "rb") as handle:
            source = handle.read()
        mode = protocol.MODE_UID if config["root"] else protocol.MODE_USER
        note = "" if config["root"] else "not running as root"
        if config["namespaces"] is False:
            note = "namespaces disabled by the caller"
        elif config["root"]:
            try:
                _check(_libc().unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC), "unshare")
                mode = protocol.MODE_NAMESPACES
            except OSError as exc:
                note = str(exc)
        if mode != protocol.MODE_NAMESPACES and config["namespaces"] is True:
            message = f"namespaces required but unavailable ({note})"
            _report(status_fd, protocol.encode(protocol.ERROR, message))
            os._exit(1)
        if mode == protocol.MODE_NAMESPACES:
            _setup_mounts(config, source)
        elif not config["root"]:
            config["nproc"] += _count_processes_of(os.getuid())
        _report(status_fd, protocol.encode_mode(mode, note))
    except Exception as exc:  # noqa: BLE001  (any set-up failure is a sandbox error: never run half-isolated)
        _report(status_fd, protocol.encode(protocol.ERROR, f"set-up failed: {exc!r}"))
        os._exit(1)
    if mode == protocol.MODE_NAMESPACES:
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
    program = os.path.join(workdir, protocol.PROGRAM_NAME)
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
            _report(status_fd, protocol.encode_end(wait_status, leftovers))
        except BaseException as exc:  # noqa: BLE001  (the init must report, then exit, whatever happened)
            _report(status_fd, protocol.encode(protocol.ERROR, f"namespace init failed: {exc!r}"))
        os._exit(0)  # the kernel now SIGKILLs whatever is left in the namespace
    try:
        _report(status_fd, protocol.encode(protocol.PIDNS, os.readlink(f"/proc/{init}/ns/pid")))
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
        _report(status_fd, protocol.encode_end(wait_status, leftovers))
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _kill_descendants()
        _report(status_fd, protocol.encode(protocol.TERMINATED))
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
        os.execve(python, [python, "-I", "-S", "-B", "-X", "utf8", protocol.PROGRAM_NAME], {})
    except BaseException as exc:  # noqa: BLE001  (a forked child must never return into the launcher)
        try:
            who = f" as uid {config['uid']}" if config["root"] else ""
            message = f"could not exec {config['python']}{who}: {exc!r}"
            _report(status_fd, protocol.encode(protocol.ERROR, message))
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


def _reap_zombies() -> None:
    while True:
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if reaped == 0:
            return


def _count_namespace_leftovers() -> int:
    """Live processes in this PID namespace besides its init (/proc is the namespace's own)."""
    for attempt in range(3):
        alive = [pid for pid in os.listdir("/proc") if pid.isdigit() and pid != "1"
                 and (info := protocol.proc_stat(pid)) is not None and info[0] not in protocol.DEAD_STATES]
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
            info = protocol.proc_stat(name)
            if info is not None and info[0] not in protocol.DEAD_STATES:
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
