"""One registry mechanism for every named choice: perturbations, fidelity and task metrics, search methods,
fuzz adapters, zoo models, record pools, adequacy metrics, feature networks.

A `Registry` maps names to import paths (`"package.module:attribute"`), resolved on first `get`, so the
names a config may choose are known without importing what they name (`pipeline.plugins.catalog` lists the
built-ins). Each entry may carry facts, plain data the configuration checks without importing the entry
(its modality, its highest level). A name that is itself an import path (`my_pkg.blur:Blur`) names a
user's plug-in: `get` imports it. An unknown name fails with the list of valid names.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Generic, Iterator, Mapping, TypeVar

T = TypeVar("T")


def is_import_path(name: str) -> bool:
    """`module:attribute` or Hydra's dotted `package.module.attribute`: a user's plug-in rather than a
    registered name (registered names hold no dots)."""
    module, sep, attr = name.partition(":")
    parts = [*module.split("."), *attr.split(".")] if sep else name.split(".")
    return len([p for p in parts if p]) >= 2 and all(p.isidentifier() for p in parts)


def load_import_path(path: str) -> Any:
    """The object `module:attribute` (or dotted `package.module.attribute`) names; a ValueError naming the
    path if it cannot be imported."""
    if ":" in path:
        module, _, attr = path.partition(":")
        splits = [(module, attr.split("."))]
    else:
        parts = path.split(".")
        splits = [(".".join(parts[:i]), parts[i:]) for i in range(len(parts) - 1, 0, -1)]
    error: Exception | None = None
    for module, attrs in splits:
        try:
            value: Any = importlib.import_module(module)
        except ModuleNotFoundError as err:
            error = err
            if err.name and not module.startswith(err.name):
                break  # the module exists but imports something that does not
            continue
        except ImportError as err:
            error = err
            break
        try:
            for attr in attrs:
                value = getattr(value, attr)
        except AttributeError as err:
            error = err
            break
        return value
    raise ValueError(f"cannot import {path!r}: {error}")


@dataclass(frozen=True)
class Entry:
    """A registered name: the import path of its implementation (or the object itself) and its facts;
    with `args`, the target is a factory and the entry is `target(*args)` (one factory for many names)."""

    target: Any
    facts: Mapping[str, Any] = field(default_factory=dict)
    args: tuple[Any, ...] = ()


class Registry(Generic[T]):
    """Entries of one `kind` by name, in registration order."""

    def __init__(self, kind: str, entries: Mapping[str, Entry | str] | None = None):
        self.kind = kind
        self._entries: dict[str, Entry] = {}
        self._loaded: dict[str, T] = {}
        for name, entry in (entries or {}).items():
            self._entries[name] = entry if isinstance(entry, Entry) else Entry(entry)

    def register(self, name: str, entry: T | None = None, **facts: Any):
        """`register(name, obj_or_import_path, **facts)`, or `@register(name, **facts)` on a function or
        class. A name is registered once."""
        def add(value: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = Entry(value, facts)
            return value

        return add if entry is None else add(entry)

    def get(self, name: str) -> T:
        """The entry called `name` (imported on first use), the object an import path names, or a
        ValueError naming `name` and the valid choices."""
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._entries:
            if isinstance(name, str) and is_import_path(name):
                return load_import_path(name)
            raise ValueError(f"unknown {self.kind} {name!r}; valid choices: {', '.join(self.names())}")
        entry = self._entries[name]
        value = load_import_path(entry.target) if isinstance(entry.target, str) else entry.target
        if entry.args:
            value = value(*entry.args)
        self._loaded[name] = value
        return value

    def facts(self, name: str) -> Mapping[str, Any]:
        """The facts registered with `name` (empty for an import path)."""
        return self._entries[name].facts if name in self._entries else {}

    def where(self, **facts: Any) -> list[str]:
        """The names whose facts have the given values, in registration order."""
        return [n for n, e in self._entries.items() if all(e.facts.get(k) == v for k, v in facts.items())]

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._entries)

    def modules(self) -> list[str]:
        """The modules that define the entries (without importing them), sorted: the code roots whose
        sources key a stage that may run any entry (`pipeline.runtime.fingerprint.source_fingerprint`)."""
        def module(target: Any) -> str:
            return target.partition(":")[0] if isinstance(target, str) else target.__module__

        return sorted({module(e.target) for e in self._entries.values()})

    def items(self) -> list[tuple[str, T]]:
        """(name, entry) pairs, every entry imported."""
        return [(n, self.get(n)) for n in self._entries]

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)
