"""Materialized perturbed sets: an on-disk, content-addressed, chunked store of T_θ for the
configurations θ of a space, written once and read by the evaluation of every model that shares the
clean set, the perturbations and the seed (a model never re-perturbs what the cache holds).

Key. A store lives in `<root>/<key digest>/`, the digest of everything its arrays depend on: the clean
set (`data_digest`), the perturbation code (`perturbation_fingerprint`: the import closure of the
composition and registry modules and of the perturbations' own modules, the versions of the numeric
libraries and the pinned numerics), the perturbation names in order, the number of levels, the global
seed and the file format. Any change gives another folder; nothing is invalidated in place.

Layout.

    <root>/<key digest>/manifest.json        the key parts, the chunking, the bytes on disk after the last fill
    <root>/<key digest>/chunks/<θ_1>-…-<θ_{n-1}>.chunk
                                             the stored configurations sharing θ_1..θ_{n-1} (up to ℓ of them)

A chunk file is written atomically (temporary file, then rename) and holds: the magic bytes `MAGIC`, the
sha256 of everything after it, the length of a JSON header (8 bytes, little-endian), the header (the
store's key digest, the chunk's prefix, and per θ its encoding, offset and length), then the payloads:
an array as a complete `.npy` byte string (dtype, shape and memory order kept, never pickled), a list of
strings as JSON. A chunk whose checksum, header or payload does not check out (corrupt, truncated,
copied from another store) is reported in one line on stderr and recomputed; it is never read.

The identity configuration θ = (0, …, 0) is the clean set itself (`compose` returns its input
unchanged) and is never stored.

Reading. `store.get(θ)` returns what `compose(perturbations, clean, θ, seed)` returns, bit for bit:
from the chunk when it holds θ; else, for θ inside the store's bound (all of Θ by default), the chunk's
missing configurations are computed with prefix reuse, written, and returned from memory; θ outside
the bound is computed in memory (prefix reuse across calls in lexicographic order) and not written.
`Benchmark.evaluate_many(thetas, source=store)` evaluates any model from the store.

Concurrency. Two processes filling one store compute the same bits, and a rename never leaves half a
file, so the only cost of a race is work done twice; when they fill one chunk with different bounds,
the last rename wins and the configurations it lacks are recomputed when asked for.
"""
from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from pipeline.runtime.fingerprint import digest, library_versions, source_fingerprint, sources_digest, sources_of
from pipeline.runtime.io import atomic_path, write_json
from pipeline.runtime.numerics import PINNED
from pipeline.perturb.compose import PrefixCache
from pipeline.front.space import Space

FORMAT = 1  # of the folder key, the layout and the chunk file; a change makes new folders
MAGIC = b"PTSTORE\x01"
CODE_ROOTS = ("pipeline.perturb.compose", "pipeline.perturb.registry")
_SUM = len(MAGIC) + 32  # end of the checksum field
_HEAD = _SUM + 8  # end of the header length field

Theta = tuple[int, ...]


def _report(message: str) -> None:
    print(f"perturbation store: {message}", file=sys.stderr, flush=True)


# ---- the key ---------------------------------------------------------------------------------------

def data_digest(clean: Any) -> str:
    """sha256 of a clean set: an array (dtype, shape and values) or a sequence of strings."""
    h = hashlib.sha256()
    if isinstance(clean, np.ndarray):
        if clean.dtype.hasobject:
            raise TypeError("clean inputs of object dtype cannot be stored; use an array of a numeric dtype or a list of str")
        descr = np.lib.format.dtype_to_descr(clean.dtype)
        h.update(json.dumps({"kind": "ndarray", "dtype": descr, "shape": list(clean.shape)}).encode())
        h.update(np.ascontiguousarray(clean).data)
    elif isinstance(clean, (list, tuple)) and all(isinstance(x, str) for x in clean):
        h.update(json.dumps({"kind": type(clean).__name__, "items": list(clean)}).encode())
    else:
        raise TypeError(f"cannot digest clean inputs of type {type(clean).__name__}: an array or a list of str is needed")
    return h.hexdigest()


def perturbation_fingerprint(perturbations: Sequence[Any]) -> str:
    """Digest of the code that computes T_θ: the source of the import closure of `CODE_ROOTS` and of the
    modules defining each perturbation's function and class, with the numeric library versions and the
    pinned numerics, and the source of a user's perturbation plug-in (its package, `pipeline.runtime.fingerprint.source_files`).
    Functions defined outside any file (a notebook) are not seen: pass `code=` to the store for those."""
    roots = set(CODE_ROOTS)
    for p in perturbations:
        roots.add(type(p).__module__)
        module = getattr(getattr(p, "_apply", None), "__module__", None)
        if module:
            roots.add(module)
    return digest({"code": source_fingerprint(sorted(roots)), "plugins": sources_digest(sources_of(sorted(roots))),
                   "libraries": library_versions(), "numerics": PINNED})


# ---- chunk files -----------------------------------------------------------------------------------

def _encode(value: Any) -> tuple[str, bytes]:
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("perturbed inputs of object dtype cannot be stored without pickle")
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, value, allow_pickle=False)
        return "npy", buffer.getvalue()
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "json", json.dumps(value).encode()  # ASCII escapes: every str round-trips, lone surrogates too
    raise TypeError(f"cannot store perturbed inputs of type {type(value).__name__}: an array or a list of str is needed")


def _decode(encoding: str, payload: memoryview) -> Any:
    if encoding == "npy":
        value = np.load(io.BytesIO(payload), allow_pickle=False)
        if isinstance(value, np.ndarray):
            return value
    if encoding == "json":
        value = json.loads(bytes(payload))
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            return value
    raise ValueError(f"unknown or malformed {encoding!r} payload")


def encode_chunk(store_digest: str, prefix: Theta, values: dict[Theta, Any]) -> list[bytes]:
    """The bytes of a chunk file, as parts to write in order."""
    encoded = [(theta, *_encode(values[theta])) for theta in sorted(values)]
    entries, offset = [], 0
    for theta, encoding, payload in encoded:
        entries.append({"theta": list(theta), "encoding": encoding, "offset": offset, "length": len(payload)})
        offset += len(payload)
    header = json.dumps({"store": store_digest, "prefix": list(prefix), "entries": entries}).encode()
    body = [len(header).to_bytes(8, "little"), header, *(payload for _, _, payload in encoded)]
    h = hashlib.sha256()
    for part in body:
        h.update(part)
    return [MAGIC, h.digest(), *body]


def decode_chunk(data: bytes, store_digest: str, prefix: Theta) -> dict[Theta, Any]:
    """The configurations of a chunk file's bytes; a ValueError says what does not check out."""
    view = memoryview(data)
    if len(data) < _HEAD or data[: len(MAGIC)] != MAGIC:
        raise ValueError(f"not a chunk file of format {FORMAT} ({len(data)} bytes)")
    if hashlib.sha256(view[len(MAGIC) + 32 :]).digest() != data[len(MAGIC) : _SUM]:
        raise ValueError("checksum mismatch (corrupt or truncated)")
    size = int.from_bytes(data[_SUM:_HEAD], "little")
    try:
        header = json.loads(bytes(view[_HEAD : _HEAD + size]))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"unreadable header ({err})") from None
    if not isinstance(header, dict) or header.get("store") != store_digest or tuple(header.get("prefix", ())) != prefix:
        raise ValueError("the chunk belongs to another store or prefix")
    start, out = _HEAD + size, {}
    for entry in header["entries"]:
        theta = tuple(int(v) for v in entry["theta"])
        lo, hi = start + int(entry["offset"]), start + int(entry["offset"]) + int(entry["length"])
        if theta[:-1] != prefix or not start <= lo <= hi <= len(data):
            raise ValueError(f"entry {theta} lies outside the chunk")
        try:
            out[theta] = _decode(entry["encoding"], view[lo:hi])
        except (ValueError, EOFError, OSError) as err:
            raise ValueError(f"entry {theta} does not decode ({err})") from None
    return out


# ---- the store -------------------------------------------------------------------------------------

class PerturbationStore:
    """T_θ of `perturbations` on `clean` under `seed`, for θ in `space`, kept under `root`.

    `thetas` bounds what `get` writes (all of Θ when None); `code` replaces the default code fingerprint
    (`perturbation_fingerprint`). `applications` counts the active transform applications per input this
    object computed (fills and in-memory fallbacks)."""

    def __init__(self, root: str | Path, perturbations: Sequence[Any], clean: Any, space: Space, seed: int, *,
                 thetas: Iterable[Sequence[int]] | None = None, code: str | None = None) -> None:
        if [p.name for p in perturbations] != list(space.names):
            raise ValueError(f"perturbations {[p.name for p in perturbations]} do not match space {space.names}")
        self.perturbations = list(perturbations)
        self.clean, self.space, self.seed = clean, space, int(seed)
        self.bound: frozenset[Theta] | None = None if thetas is None else frozenset(space.validate(t) for t in thetas)
        self.key = {"format": FORMAT, "data": data_digest(clean), "code": code or perturbation_fingerprint(perturbations),
                    "names": list(space.names), "levels": space.levels, "seed": self.seed}
        self.digest = digest(self.key)
        self.path = Path(root) / self.digest
        self._chunk: tuple[Theta, dict[Theta, Any]] | None = None  # the last chunk read or written
        self._cache: PrefixCache | None = None

    @classmethod
    def for_benchmark(cls, root: str | Path, benchmark: Any, **kwargs: Any) -> "PerturbationStore":
        """The store of a `Benchmark`'s clean set, perturbations, space and seed."""
        return cls(root, benchmark.perturbations, benchmark.clean, benchmark.space, benchmark.seed, **kwargs)

    def __repr__(self) -> str:
        return f"PerturbationStore({self.path}, {list(self.space.names)}, levels={self.space.levels}, seed={self.seed})"

    @property
    def applications(self) -> int:
        return self._cache.applications if self._cache is not None else 0

    # -- layout

    def chunk_path(self, prefix: Sequence[int]) -> Path:
        label = "-".join(str(int(v)) for v in prefix) or "all"
        return self.path / "chunks" / f"{label}.chunk"

    def chunk_thetas(self, prefix: Theta) -> list[Theta]:
        """The configurations of the chunk of `prefix` that the store writes: those of the bound, never
        the identity."""
        thetas = [prefix + (level,) for level in range(self.space.levels)]
        return [t for t in thetas if any(t) and (self.bound is None or t in self.bound)]

    def read_chunk(self, prefix: Theta) -> dict[Theta, Any] | None:
        """The configurations stored in the chunk of `prefix`; None when it is absent or does not check
        out (reported, left for the next write to replace)."""
        path = self.chunk_path(prefix)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            return decode_chunk(data, self.digest, prefix)
        except (ValueError, KeyError, TypeError) as err:
            _report(f"{path}: {err}; recomputing")
            return None

    def write_chunk(self, prefix: Theta, values: dict[Theta, Any]) -> None:
        parts = encode_chunk(self.digest, prefix, values)
        if not (self.path / "manifest.json").is_file():
            self.write_manifest()
        with atomic_path(self.chunk_path(prefix)) as tmp, open(tmp, "wb") as f:
            for part in parts:
                f.write(part)

    def chunk_files(self) -> list[Path]:
        folder = self.path / "chunks"
        return sorted(p for p in folder.glob("*.chunk") if p.is_file()) if folder.is_dir() else []

    def size_bytes(self) -> int:
        """Bytes of the chunk files on disk."""
        return sum(p.stat().st_size for p in self.chunk_files())

    def stored_configurations(self) -> int:
        """How many configurations the chunk headers list (headers only: no checksum is verified)."""
        n = 0
        for path in self.chunk_files():
            with open(path, "rb") as f:
                head = f.read(_HEAD)
                try:
                    n += len(json.loads(f.read(int.from_bytes(head[_SUM:_HEAD], "little")))["entries"])
                except (ValueError, KeyError, TypeError):
                    continue
        return n

    def write_manifest(self) -> dict[str, Any]:
        manifest = {"key": self.key, "digest": self.digest, "chunking": "configurations sharing θ_1..θ_{n-1}",
                    "chunks": len(self.chunk_files()), "configurations": self.stored_configurations(),
                    "size_bytes": self.size_bytes()}
        write_json(manifest, self.path / "manifest.json")
        return manifest

    # -- computing and reading

    def _prefix_cache(self) -> PrefixCache:
        if self._cache is None:
            self._cache = PrefixCache(self.perturbations, self.clean, self.seed)
        return self._cache

    def fill_chunk(self, prefix: Theta, thetas: Sequence[Theta], present: dict[Theta, Any] | None = None) -> dict[Theta, Any]:
        """Compute `thetas` (with prefix reuse) beside the valid configurations `present`, write the chunk
        and return its configurations."""
        cache = self._prefix_cache()
        values = dict(present or {})
        for theta in sorted(thetas):
            if theta not in values:
                values[theta] = cache.get(theta)
        self.write_chunk(prefix, values)
        self._chunk = (prefix, values)
        return values

    def get(self, theta: Sequence[int]) -> Any:
        """T_θ, bit-identical to `compose(perturbations, clean, θ, seed)`."""
        theta = self.space.validate(theta)
        if not any(theta):
            return self.clean  # compose applies nothing to the identity configuration
        prefix = theta[:-1]
        if self._chunk is None or self._chunk[0] != prefix:
            self._chunk = (prefix, self.read_chunk(prefix) or {})
        values = self._chunk[1]
        if theta in values:
            return values[theta]
        if self.bound is None or theta in self.bound:
            return self.fill_chunk(prefix, self.chunk_thetas(prefix), values)[theta]
        return self._prefix_cache().get(theta)


def order_bound(space: Space, max_order: int | None) -> list[Theta] | None:
    """The configurations of `space` with at most `max_order` non-zero levels (their order, TestNav's
    Table 3 grouping): the bound of a store too large to hold all of Θ. None: no bound (all of Θ)."""
    if max_order is None:
        return None
    if isinstance(max_order, bool) or not isinstance(max_order, int) or not 0 <= max_order <= space.n_dims:
        raise ValueError(f"max_order must be an integer in 0..{space.n_dims} or None, got {max_order!r}")
    grid = space.grid()
    return [tuple(int(v) for v in row) for row in grid[Space.order(grid) <= max_order]]


def open_store(root: str | Path, max_order: int | None, benchmark: Any) -> PerturbationStore:
    """The perturbation store of a `Benchmark` under `root`, bounded to configurations of order ≤
    `max_order` (`functools.partial(open_store, root, max_order)` is what a ground-truth worker calls)."""
    return PerturbationStore.for_benchmark(root, benchmark, thetas=order_bound(benchmark.space, max_order))
