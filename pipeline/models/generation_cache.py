"""The persistent generation cache of the code LLM (TestNav §4.1, benchmark (iii)): one SQLite file (WAL mode)
of greedy completions keyed by everything a completion depends on, so that a rerun, another worker or another
seed that produces the same perturbed prompt never generates twice.

A key is the sha256 of a canonical JSON object: the model's identity (`model_digest` of its weights file or
folder), the runtime that runs it with the versions of the libraries that change its numbers, the device and
thread count, the decoding settings (greedy, max_new_tokens, stop sequences) and the exact prompt. Greedy
decoding makes the completion a function of that tuple (`pipeline.models.code_llm` generates one prompt at a
time, never padded beside others).

Model identity: the sha256 of the weights' bytes (a file; for a folder, of every file's relative name and
contents), not (path, size, mtime). A path names a location, not weights: a re-download or a copy changes the
mtime (a needless miss of hours of generation), and another quantisation or fine-tune written in place can keep
the size, and with `cp -p` or an unpacked archive the mtime too (a wrong hit, silently mixing two models'
answers in one table). Hashing costs 0.4 s for the 491 MB Qwen GGUF, once per process (memoised on path, size,
mtime and inode): the time of a fraction of one generation (about 3 s with llama.cpp on one core).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, completion TEXT NOT NULL,
                                        tokens INTEGER NOT NULL, seconds REAL NOT NULL, settings TEXT NOT NULL);
"""
_DIGESTS: dict[tuple, str] = {}


def _stat_key(path: Path) -> tuple:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns, f.stat().st_ino) for f in files)


def model_digest(path: str | Path) -> str:
    """sha256 of a weights file, or of a checkpoint folder's files (relative name and contents, sorted)."""
    path = Path(path).resolve()
    if not path.exists():
        raise FileNotFoundError(f"no model weights at {str(path)!r}")
    stat = _stat_key(path)
    if stat in _DIGESTS:
        return _DIGESTS[stat]
    digest = hashlib.sha256()
    for name, *_ in stat:
        with open(name, "rb") as fh:
            file_hash = hashlib.file_digest(fh, "sha256").digest()
        digest.update((str(Path(name).relative_to(path)) if path.is_dir() else "").encode() + b"\0" + file_hash)
    _DIGESTS[stat] = digest.hexdigest()
    return _DIGESTS[stat]


def generation_key(settings: dict[str, Any], prompt: str) -> str:
    """The cache key of `prompt` under `settings` (model identity, runtime, decoding): sha256 of canonical JSON."""
    text = json.dumps({"settings": settings, "prompt": prompt}, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class GenerationCache:
    """Completions by key in a SQLite file shared by concurrent processes (first writer wins: greedy decoding
    gives every writer of a key the same completion). `hits` and `misses` count this object's look-ups."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> str | None:
        """The stored completion of `key`, or None."""
        row = self._db.execute("SELECT completion FROM generations WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return str(row[0])

    def put(self, key: str, prompt: str, completion: str, tokens: int, seconds: float, settings: dict[str, Any]) -> None:
        """Store one generation (kept as it is when another process stored the key first)."""
        self._db.execute("INSERT OR IGNORE INTO generations VALUES (?, ?, ?, ?, ?, ?)",
                         (key, prompt, completion, int(tokens), float(seconds), json.dumps(settings, sort_keys=True)))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0])

    def close(self) -> None:
        self._db.close()

