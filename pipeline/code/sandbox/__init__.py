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

How a run is built (full isolation: running as root on Linux with namespaces available)
---------------------------------------------------------------------------------------
* The source is written to `main.py` in a fresh temporary directory (`tempfile.mkdtemp`, owned by the
  sandbox uid, mode 0700), removed when the run ends.
* The host starts the launcher, `python -I -S launcher.py`, with an *empty* environment, stdin from
  /dev/null, stdout/stderr on pipes, in a new session and process group (`start_new_session=True`), with
  no inherited file descriptors but the status pipe (`protocol.py`). No `preexec_fn` (unsafe in a threaded
  host).
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
from pipeline.code.sandbox.host import DEFAULT_GID, DEFAULT_UID, IS_ROOT, run_program
from pipeline.code.sandbox.outcome import STATUSES, ExecResult

__all__ = ["DEFAULT_GID", "DEFAULT_UID", "IS_ROOT", "STATUSES", "ExecResult", "run_program"]
