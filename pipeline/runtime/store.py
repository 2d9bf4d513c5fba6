"""The resume store: one SQLite file (WAL mode) of finished units of work, shared by concurrent runs.

Every resumable stage keeps its finished units here, one row per unit: the unit's key (see
`pipeline.runtime.fingerprint.unit_key`: config, code, library versions), its value and a checksum, committed
atomically. A unit is claimed before it is computed, so a second run of the same stage started at the
same time skips what the first has claimed and waits for it, and takes it over when its owner has died.
A row whose checksum does not match (or a store file that is no SQLite database) is reported in one
line and recomputed.

SQLite's WAL mode needs the readers and writers of a file on one host (it does not work over a network
file system): a cluster shard keeps its own store file and the merge step reads the finished files.
"""
from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

_SCHEMA = """
CREATE TABLE IF NOT EXISTS units (key TEXT PRIMARY KEY, value BLOB NOT NULL, checksum TEXT NOT NULL, finished REAL NOT NULL);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, since REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _checksum(value: bytes) -> str:
    return hashlib.sha256(value).hexdigest()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _report(message: str) -> None:
    print(f"resume store: {message}", file=sys.stderr, flush=True)


class ResumeStore:
    """Finished units by key. `claim_ttl` (seconds) is how long a claim from another host is honoured
    (a claim from this host is honoured while its process lives)."""

    def __init__(self, path: str | Path, claim_ttl: float = 6 * 3600.0):
        self.path = Path(path)
        self.claim_ttl = claim_ttl
        self.host = socket.gethostname()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as err:
            corrupt = self.path.with_name(self.path.name + ".corrupt")
            _report(f"{self.path} is not a readable database ({err}); moved to {corrupt.name}, starting afresh")
            self.path.replace(corrupt)
            for suffix in ("-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        return db

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ResumeStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- finished units ---------------------------------------------------------------------------

    def put(self, key: str, value: bytes) -> None:
        """Record a finished unit (and drop its claim) in one transaction."""
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO units VALUES (?, ?, ?, ?)", (key, value, _checksum(value), time.time()))
            self._db.execute("DELETE FROM claims WHERE key = ?", (key,))

    def get(self, key: str) -> bytes | None:
        """The value of a finished unit; None when absent or corrupt (a corrupt row is reported and dropped)."""
        row = self._db.execute("SELECT value, checksum FROM units WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value, checksum = row
        if not isinstance(value, bytes) or _checksum(value) != checksum:
            _report(f"{self.path.name}: unit {key[:16]}… fails its checksum; it will be recomputed")
            with self._transaction():
                self._db.execute("DELETE FROM units WHERE key = ?", (key,))
            return None
        return value

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def keys(self) -> set[str]:
        return {k for (k,) in self._db.execute("SELECT key FROM units")}

    def retain(self, keys: Iterable[str]) -> int:
        """Drop every finished unit not in `keys` (values of older code or config); returns how many."""
        keep = set(keys)
        stale = [k for k in self.keys() if k not in keep]
        with self._transaction():
            self._db.executemany("DELETE FROM units WHERE key = ?", [(k,) for k in stale])
        return len(stale)

    # ---- claims -----------------------------------------------------------------------------------

    def claim(self, key: str) -> bool:
        """Take unit `key` for this process unless it is finished or a live owner holds it."""
        with self._transaction():
            if self._db.execute("SELECT 1 FROM units WHERE key = ?", (key,)).fetchone():
                return False
            row = self._db.execute("SELECT host, pid, since FROM claims WHERE key = ?", (key,)).fetchone()
            if row is not None and not self._orphaned(*row):
                return row[0] == self.host and row[1] == os.getpid()
            self._db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)", (key, self.host, os.getpid(), time.time()))
            return True

    def release(self, keys: Iterable[str]) -> None:
        """Give up this process's claims on `keys` (finished or not)."""
        with self._transaction():
            self._db.executemany("DELETE FROM claims WHERE key = ? AND host = ? AND pid = ?",
                                 [(k, self.host, os.getpid()) for k in keys])

    def _orphaned(self, host: str, pid: int, since: float) -> bool:
        if host == self.host:
            return not _alive(pid)
        return time.time() - since > self.claim_ttl

    # ---- meta -------------------------------------------------------------------------------------

    def set_meta(self, name: str, value: str) -> None:
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))

    def meta(self, name: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def _transaction(self):
        return _Transaction(self._db)

    # ---- shared work ------------------------------------------------------------------------------

    def share_work(self, keys: Sequence[str], run: Callable[[list[str]], Iterable[str]], is_done: Callable[[str], bool],
                   poll_s: float = 0.5) -> None:
        """Bring every unit of `keys` to done. `run(pending)` claims (`claim`) and computes what it can of
        `pending` and returns the keys it claimed; units a live concurrent run holds are waited for, and
        units whose owner died are taken over on the next round."""
        remaining = [k for k in keys if not is_done(k)]
        while remaining:
            claimed = list(run(remaining))
            unfinished = [k for k in claimed if not is_done(k)]
            if unfinished:
                raise RuntimeError(f"{len(unfinished)} claimed units were not recorded, e.g. {unfinished[0][:16]}…")
            remaining = [k for k in remaining if not is_done(k)]
            if remaining and not claimed:
                time.sleep(poll_s)

    def claimed_here(self, keys: Iterable[str]) -> list[str]:
        """Claim every unit of `keys` this process can take now (for a run that claims before it starts)."""
        return [k for k in keys if self.claim(k)]


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT (or ROLLBACK on error): one writer at a time, atomic."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *rest) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def run_cached(store: ResumeStore, keys: Sequence[str], compute: Callable[[list[int]], Iterable[tuple[int, bytes]]],
               poll_s: float = 0.5) -> list[bytes]:
    """The value of every unit of `keys`, computing only what the store lacks: `compute(indices)` yields
    (index, value) for the units at those positions of `keys`, each recorded as it arrives. Units a
    concurrent run has claimed are waited for. Returns the values in the order of `keys`."""
    position = {k: i for i, k in enumerate(keys)}

    def run(pending: list[str]) -> list[str]:
        claimed = store.claimed_here(pending)
        for index, value in compute([position[k] for k in claimed]) if claimed else ():
            store.put(keys[index], value)
        return claimed

    values: list[bytes | None] = [None] * len(keys)
    while any(v is None for v in values):  # a second pass recomputes rows that failed their checksum
        store.share_work(list(dict.fromkeys(keys)), run, store.has, poll_s)
        values = [v if v is not None else store.get(k) for k, v in zip(keys, values)]
    return values  # type: ignore[return-value]
