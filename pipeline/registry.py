"""One registry mechanism for every named choice: perturbations, datasets, models, feature extractors,
fidelity and task metrics, search methods, fuzz adapters, zoo models.

A `Registry` maps names to entries (a factory, a class, a function). Built-in entries are registered
by a loader that runs once, on first use, whatever a user registered before; an unknown name fails with
the list of valid names (what every config error shows)."""
from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Entries of one `kind` by name. `builtins` (optional) registers the built-in entries on first use."""

    def __init__(self, kind: str, builtins: Callable[["Registry[T]"], None] | None = None):
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._builtins = builtins

    def _load(self) -> None:
        if self._builtins is not None:
            load, self._builtins = self._builtins, None
            load(self)

    def register(self, name: str, entry: T | None = None):
        """`register(name, entry)`, or `@register(name)` on a function or class. A name is registered once."""
        def add(value: T) -> T:
            self._load()
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = value
            return value

        return add if entry is None else add(entry)

    def get(self, name: str) -> T:
        """The entry called `name`, or a ValueError naming it and the valid choices."""
        self._load()
        if name not in self._entries:
            raise ValueError(f"unknown {self.kind} {name!r}; valid choices: {', '.join(self.names())}")
        return self._entries[name]

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        self._load()
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        self._load()
        return list(self._entries.items())

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())
