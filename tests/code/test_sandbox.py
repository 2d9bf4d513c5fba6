"""Hostile-completion suite for `pipeline.code.sandbox.run_program` (`host.run_program`), plus the status-line
protocol (`protocol`) and the launcher's standard-library-only imports (`launcher`).

Every hostile program must end as a failed `ExecResult` with the right status and reason, and the host must
come out unharmed, checked concretely: a canary file survives, a listener gets no connection, a sentinel
process lives, no process of the run is left in /proc, the temporary directory is gone.
"""
import ast
import json
import math
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from pipeline.code import sandbox
from pipeline.code.sandbox import host, protocol
from pipeline.code.sandbox.host import DEFAULT_UID, IS_ROOT, run_program
from pipeline.code.sandbox.outcome import STATUSES, ExecResult

ROOT = Path(__file__).resolve().parents[2]
BOMB_UIDS = (61789, 61790)  # uids nobody else uses, one per fork-bomb case (xdist may run both at once)
needs_root = pytest.mark.skipif(not IS_ROOT, reason="full isolation (uid drop, namespaces) needs root")


def _world_reachable(path: str) -> bool:
    """Whether an unprivileged uid can execute `path` (every ancestor searchable by others)."""
    path = os.path.realpath(path)
    parts = Path(path).parents
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in parts) and bool(os.stat(path).st_mode & stat.S_IXOTH)


def _subreaper_python() -> str | None:
    """An interpreter the sandbox uid can run without the namespaces' bind mount (for the fallback mode)."""
    for candidate in (sys.executable, shutil.which("python3") or "", "/usr/bin/python3"):
        if candidate and os.path.exists(candidate) and _world_reachable(candidate):
            return os.path.realpath(candidate)
    return None


def _live_pids(predicate) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
            if state not in (b"Z", b"X") and predicate(name):
                pids.append(int(name))
        except (OSError, IndexError):
            continue
    return pids


def _uid_of(pid: str) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return -1


def _cmdline_has(token: str):
    def check(pid: str) -> bool:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return token.encode() in handle.read()

    return check


def _assert_failed(result: ExecResult, *statuses: str) -> None:
    assert isinstance(result, ExecResult)
    assert not result.passed, result
    assert result.status in statuses, result
    assert result.status in STATUSES and result.isolation in protocol.MODES
    assert result.reason and "\n" not in result.reason


# ---------------------------------------------------------------------------------------------- positives


def test_correct_program_passes():
    source = (
        "import os, tempfile\n"
        "with open('data.txt', 'w') as f:\n"
        "    f.write('hello')\n"
        "with tempfile.TemporaryFile() as f:\n"
        "    f.write(b'scratch')\n"
        "print(sum(range(10)), open('data.txt').read())\n"
    )
    result = run_program(source, 3)
    assert result.passed and result.status == "passed", result
    assert result.returncode == 0
    assert result.stdout == "45 hello\n"
    assert result.stderr == ""
    assert result.reason == "exited with status 0"
    assert 0 < result.seconds < 3
    assert result.leftover_processes == 0
    if IS_ROOT:
        assert result.isolation == "namespaces" and result.network_isolated, result.isolation_note


def test_assertion_error_fails():
    result = run_program("def add(a, b):\n    return a - b\n\nassert add(1, 2) == 3, 'add is wrong'\n", 3)
    _assert_failed(result, "failed")
    assert result.returncode == 1
    assert "AssertionError: add is wrong" in result.reason
    assert "AssertionError" in result.stderr


def test_syntax_error_fails():
    result = run_program("def f(:\n    return 1\n", 3)
    _assert_failed(result, "failed")
    assert "SyntaxError" in result.reason


def test_exit_status_is_reported():
    result = run_program("import sys\nprint('partial')\nsys.exit(3)\n", 3)
    _assert_failed(result, "failed")
    assert result.returncode == 3
    assert result.stdout == "partial\n"
    assert result.reason.startswith("exit status 3")


def test_only_the_standard_library_is_importable():
    result = run_program("import numpy\n", 3)
    _assert_failed(result, "failed")
    assert "ModuleNotFoundError" in result.reason


@pytest.mark.parametrize("timeout_s, error", [
    (0, ValueError), (-1, ValueError), (-0.5, ValueError), (math.nan, ValueError), (math.inf, ValueError),
    (True, TypeError), ("1", TypeError),
])
def test_bad_timeout_raises(timeout_s, error):
    with pytest.raises(error) as info:
        run_program("print(1)", timeout_s)
    assert "timeout_s" in str(info.value) and repr(timeout_s) in str(info.value)


@pytest.mark.parametrize("kwargs", [
    {"memory_mb": 0}, {"memory_mb": 8}, {"max_output_bytes": 0}, {"nproc": -1}, {"file_size_mb": 0},
    {"nofile": 4}, {"disk_mb": 0}, {"uid": 0}, {"gid": 0}, {"namespaces": "yes"},
])
def test_bad_limits_raise(kwargs):
    (name, value), = kwargs.items()
    with pytest.raises(ValueError) as info:
        run_program("print(1)", 1, **kwargs)
    assert name in str(info.value) and repr(value) in str(info.value)


def test_source_must_be_text():
    with pytest.raises(TypeError, match="source"):
        run_program(b"print(1)", 1)


def test_temporary_directory_is_removed_and_owned_by_the_sandbox_uid():
    source = (
        "import os\n"
        "os.makedirs('locked/inner')\n"
        "open('locked/inner/f', 'w').write('x')\n"
        "os.chmod('locked/inner', 0)\n"
        "os.chmod('locked', 0)\n"
        "st = os.stat('.')\n"
        "print(os.getcwd(), st.st_uid, oct(st.st_mode & 0o777))\n"
    )
    result = run_program(source, 3)
    assert result.passed, result
    cwd, owner, mode = result.stdout.split()
    assert Path(cwd).name.startswith("pipeline-sandbox-")
    assert mode == "0o700"
    if IS_ROOT:
        assert int(owner) == DEFAULT_UID
    assert not os.path.exists(cwd)


def test_file_size_limit():
    result = run_program("open('big', 'wb').write(b'x' * (3 << 20))\n", 3, file_size_mb=1)
    _assert_failed(result, "failed")
    assert "File too large" in result.reason


# ---------------------------------------------------------------------------------------- hostile programs


@pytest.mark.parametrize("bomb, uid", [
    ("import os\nwhile True:\n    os.fork()\n", BOMB_UIDS[0]),
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", BOMB_UIDS[1]),
])
def test_fork_bomb(bomb, uid):
    """Every process of the run's dedicated uid is gone afterwards (a leftover would be the bomb's)."""
    result = run_program(bomb, 1.5, nproc=16, uid=uid, gid=uid)
    _assert_failed(result, "failed", "timeout")
    if result.status == "failed":  # the forks' tracebacks interleave, so look in the whole of stderr
        assert "BlockingIOError" in result.stderr or "Resource temporarily unavailable" in result.stderr
    assert result.seconds < 5
    if IS_ROOT:
        assert _live_pids(lambda pid: _uid_of(pid) == uid) == []
    host = subprocess.run([sys.executable, "-c", "print('host ok')"], capture_output=True, text=True,
                          timeout=30, check=True)
    assert host.stdout == "host ok\n"


def test_infinite_loop_times_out():
    result = run_program("while True:\n    pass\n", 1)
    _assert_failed(result, "timeout")
    assert result.returncode is None
    assert "timeout after 1 s" in result.reason
    assert 1 <= result.seconds < 3


def test_sigterm_ignored_still_times_out():
    source = (
        "import signal, time\n"
        "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "print('ignoring', flush=True)\n"
        "while True:\n"
        "    time.sleep(0.01)\n"
    )
    result = run_program(source, 1)
    _assert_failed(result, "timeout")
    assert result.stdout == "ignoring\n"
    assert result.seconds < 3


def test_memory_bomb():
    rss_before = _rss_kib()
    source = "chunks = []\nwhile True:\n    chunks.append(bytearray(8 << 20))\n"
    result = run_program(source, 3, memory_mb=128)
    _assert_failed(result, "memory")
    assert "MemoryError" in result.reason and "128 MiB" in result.reason
    assert _rss_kib() - rss_before < 64 << 10  # the host did not grow by the bomb's size


def test_huge_single_allocation():
    result = run_program("x = bytearray(64 << 30)\n", 3)
    _assert_failed(result, "memory")


def _rss_kib() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.fixture(params=["tmp", "visible"])
def canary(request):
    """A file in a root-only host directory (0700, the file 0600) with known content: in the host's temp
    directory (which the namespaces hide behind a private /tmp) and in a directory the program can see
    (the repository's git-ignored .pytest_cache)."""
    base = tempfile.gettempdir() if request.param == "tmp" else ROOT / ".pytest_cache"
    os.makedirs(base, exist_ok=True)
    directory = tempfile.mkdtemp(prefix="sandbox-canary-", dir=base)
    path = os.path.join(directory, "canary.txt")
    with open(path, "w") as handle:
        handle.write("alive")
    os.chmod(path, 0o600)
    yield path
    shutil.rmtree(directory, ignore_errors=True)


@needs_root
@pytest.mark.parametrize("attack", [
    "os.remove(CANARY)",
    "open(CANARY, 'w').write('pwned')",
    "shutil.rmtree(os.path.dirname(CANARY))",
    "os.rename(CANARY, '/tmp/stolen')",
    "open(os.path.join(REPO, 'sandbox-escape-' + TOKEN), 'w').write('pwned')",
])
def test_files_outside_the_directory_are_untouchable(canary, attack):
    token = uuid.uuid4().hex
    escape = f"/tmp/sandbox-escape-{token}"
    source = (
        f"import os, shutil\nCANARY = {canary!r}\nREPO = {str(ROOT)!r}\nTOKEN = {token!r}\n"
        f"open({escape!r}, 'w').write('written to /tmp')\n"  # lands in the sandbox's private /tmp
        f"print(open({escape!r}).read())\n"
        f"{attack}\n"
    )
    result = run_program(source, 3)
    _assert_failed(result, "failed")
    target = str(ROOT) if "REPO" in attack else canary  # a clone may itself live under /tmp (CI's may)
    hidden = result.isolation == "namespaces" and target.startswith(tempfile.gettempdir() + os.sep)
    if hidden:
        assert "FileNotFoundError" in result.reason  # the host's /tmp is not even visible
    else:
        assert "PermissionError" in result.reason
    assert result.stdout == "written to /tmp\n"
    with open(canary) as handle:
        assert handle.read() == "alive"
    if result.isolation == "namespaces":
        assert not os.path.exists(escape)  # the host's /tmp was not touched
    else:
        os.remove(escape)  # without namespaces /tmp is shared: writable, but the canary is safe
    assert not os.path.exists(ROOT / f"sandbox-escape-{token}")
    assert not os.path.exists("/tmp/stolen")


def test_host_environment_is_invisible(monkeypatch):
    secret = uuid.uuid4().hex
    monkeypatch.setenv("SANDBOX_TEST_SECRET", secret)
    source = (
        "import json, os\n"
        "found = []\n"
        "for pid in os.listdir('/proc'):\n"
        "    try:\n"
        "        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
        "    except OSError:\n"
        "        continue\n"
        "    found += [item.decode() for item in data.split(b'\\0') if b'SANDBOX_TEST_SECRET' in item]\n"
        "print(json.dumps({'keys': sorted(os.environ), 'found': found}))\n"
        "print(os.environ['SANDBOX_TEST_SECRET'])\n"
    )
    result = run_program(source, 3)
    _assert_failed(result, "failed")
    assert "KeyError" in result.reason
    report = json.loads(result.stdout.splitlines()[0])
    assert set(report["keys"]) <= {"LC_CTYPE"}  # only what the interpreter sets itself
    if IS_ROOT:
        assert report["found"] == []
        assert secret not in result.stdout + result.stderr


@needs_root
def test_network_is_cut():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        source = (
            "import socket\n"
            f"s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "s.sendall(b'stolen data')\n"
        )
        result = run_program(source, 3)
        _assert_failed(result, "failed")
        assert "Network is unreachable" in result.reason
        assert result.network_isolated
        listener.settimeout(0.2)
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


@pytest.fixture
def sentinel():
    """A host process the program will try to kill."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


@needs_root  # as the calling user (no uid drop) the program may signal the host's processes
@pytest.mark.parametrize("target", ["os.getppid()", "HOST_PID", "SENTINEL_PID", "-1"])
def test_killing_the_parent_or_the_host_fails(sentinel, target):
    source = (
        f"import os, signal\nHOST_PID = {os.getpid()}\nSENTINEL_PID = {sentinel.pid}\n"
        f"os.kill({target}, signal.SIGKILL)\n"
        "print('still here')\n"
    )
    result = run_program(source, 3)
    _assert_failed(result, "failed")
    assert "PermissionError" in result.reason or "ProcessLookupError" in result.reason
    assert sentinel.poll() is None  # the sentinel lives; so does this process


def test_killing_its_own_group_ends_as_killed():
    result = run_program("import os, signal\nos.killpg(0, signal.SIGKILL)\n", 3)
    _assert_failed(result, "killed")
    assert result.returncode == -signal.SIGKILL
    assert "SIGKILL" in result.reason


def _detached_source(token: str, parent: str) -> str:
    return (
        "import os, sys, time\n"
        "r, w = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.execv(sys.executable, [sys.executable, '-c',\n"
        "                 'import time\\nwhile True: time.sleep(0.02)', " + repr(token) + "])\n"
        "    os._exit(0)\n"
        "os.close(w)\n"
        "os.read(r, 1)  # EOF once the grandchild has exec'd (the pipe is close-on-exec)\n"
        "print('detached', flush=True)\n"
        "time.sleep(0.4)\n"
        + ("while True:\n    time.sleep(0.05)\n" if parent == "hang" else "")
    )


def _detached_modes():
    modes = [pytest.param({}, id="namespaces", marks=needs_root)]
    python = _subreaper_python()
    modes.append(pytest.param({"namespaces": False, "python": python or sys.executable}, id="subreaper",
                              marks=pytest.mark.skipif(python is None and IS_ROOT,
                                                       reason="no interpreter executable by the sandbox uid")))
    return modes


@pytest.mark.parametrize("kwargs", _detached_modes())
@pytest.mark.parametrize("parent, status", [("exit", "detached"), ("hang", "timeout")])
def test_detached_child_does_not_outlive_the_run(kwargs, parent, status):
    token = f"sandbox-detached-{uuid.uuid4().hex}"
    seen: set[int] = set()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.update(_live_pids(_cmdline_has(token)))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = run_program(_detached_source(token, parent), 1.5, **kwargs)
    finally:
        stop.set()
        watcher.join()
    _assert_failed(result, status)
    assert result.stdout == "detached\n"
    assert seen, "the detached grandchild never showed up in /proc"
    assert _live_pids(_cmdline_has(token)) == []  # gone the moment run_program returned
    if status == "detached":
        assert result.leftover_processes >= 1
        assert result.returncode == 0
        assert "left 1 process(es) running" in result.reason


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_flood(stream):
    source = f"import sys\nwhile True:\n    sys.{stream}.write('x' * 65536)\n"
    result = run_program(source, 3, max_output_bytes=50_000)
    _assert_failed(result, "output_limit")
    assert len(result.stdout) + len(result.stderr) <= 50_000
    assert len(getattr(result, stream)) == 50_000
    assert result.seconds < 3
    assert "50000 bytes" in result.reason


def test_namespaces_can_be_required():
    result = run_program("print('ok')", 3, namespaces=True)
    if IS_ROOT:
        assert result.passed and result.isolation == "namespaces"
    else:
        _assert_failed(result, "error")
        assert "namespaces required" in result.reason


# ------------------------------------------------------------------------------- package, protocol, launcher


def test_the_package_re_exports_the_host_and_outcome_names():
    assert sandbox.run_program is run_program and sandbox.ExecResult is ExecResult
    assert sandbox.STATUSES is STATUSES and sandbox.IS_ROOT is IS_ROOT and sandbox.DEFAULT_UID == DEFAULT_UID


@pytest.mark.parametrize("key, value", [
    (protocol.ERROR, "set-up failed: OSError(1, 'mount /tmp: Operation not permitted')"),
    (protocol.ERROR, " size=64m,mode=1777 =x= trailing "),  # spaces (leading, inner, trailing) and '='
    (protocol.PIDNS, "pid:[4026532001]"),
    (protocol.TERMINATED, ""),
])
def test_protocol_round_trip(key, value):
    line = protocol.encode(key, value)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert protocol.decode(line) == [(key, value)]
    every_key = b"".join(protocol.encode(other, value) for other in protocol.KEYS)
    assert protocol.decode(every_key) == [(other, value) for other in protocol.KEYS]


def test_protocol_parse_of_a_whole_report():
    status = b"".join([
        protocol.encode_mode(protocol.MODE_UID, "unshare: Operation not permitted"),
        protocol.encode_mode(protocol.MODE_NAMESPACES, ""),  # only the first mode line counts
        protocol.encode(protocol.PIDNS, "pid:[4026532001]"),
        protocol.encode(protocol.ERROR, "could not exec /usr/bin/python3 as uid 65534: x=1"),
        protocol.encode(protocol.ERROR, "second"),
        protocol.encode_end(0, 0),
        protocol.encode_end(signal.SIGKILL, 2),  # os.waitpid's status of a SIGKILLed child is the signal
        protocol.encode(protocol.TERMINATED),
    ])
    report = protocol.parse(status)
    assert (report.mode, report.note) == (protocol.MODE_UID, "unshare: Operation not permitted")
    assert report.pid_namespace == "pid:[4026532001]"
    assert report.errors == ["could not exec /usr/bin/python3 as uid 65534: x=1", "second"]
    assert report.end == (-signal.SIGKILL, 2) and report.terminated
    assert protocol.encode_end(3 << 8, 1) == b"exit 3 1\n"  # exit status 3, one leftover
    assert protocol.encode_mode(protocol.MODE_NAMESPACES, "") == b"mode namespaces\n"


@pytest.mark.parametrize("status", [b"", b"exit\n", b"exit 1\n", b"signal x 0\n", b"\xff\xfe garbage\n",
                                    b"mode"])
def test_protocol_parse_of_partial_or_malformed_status_never_raises(status):
    report = protocol.parse(status)
    assert report.end is None and report.errors == [] and not report.terminated


def _imported_modules(path: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(Path(path).read_text(), path)):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import of {node.module!r}"
            names.add(node.module.partition(".")[0])
    return names


def test_launcher_and_protocol_import_only_the_standard_library():
    protocol_path = os.path.join(os.path.dirname(host.LAUNCHER), "protocol.py")
    assert protocol.__file__ == protocol_path
    for path in (host.LAUNCHER, protocol_path):
        imported = _imported_modules(path)
        assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, (path, imported)
    # What loading the launcher under -I -S really imports (as a module, so that it does not run).
    probe = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('sandbox_launcher', {host.LAUNCHER!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", probe], capture_output=True, text=True,
                          env={}, timeout=30, check=True)
    loaded = {name.partition(".")[0] for name in json.loads(done.stdout)}
    assert "pipeline" not in loaded
    assert loaded - set(sys.stdlib_module_names) - set(sys.builtin_module_names) <= {"__main__"}, loaded
