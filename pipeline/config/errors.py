"""The one error type of a rejected setting or input file: one line, `<key>: <bad value> — <what is allowed>`."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


class _Missing:
    """The value shown for a mandatory key that has none."""

    def __repr__(self) -> str:
        return "(missing)"

    def __reduce__(self) -> str:
        return "MISSING_VALUE"  # unpickled as the one instance of this module


MISSING_VALUE: Any = _Missing()


class Text(str):
    """A value already written out for the message (shown as is, not quoted)."""


def show(value: Any) -> str:
    """A value as it would be written in YAML or on the command line: null, true, 'text', [a, b], 1.5."""
    if value is None:
        return "null"
    item = getattr(value, "item", None)  # numpy scalars print as plain numbers
    if callable(item) and getattr(value, "shape", None) == ():
        return show(item())
    if isinstance(value, Text):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class ConfigError(ValueError):
    """A rejected setting: `key` (the full dotted key), the bad `value`, and `allowed` (what is allowed)."""

    def __init__(self, key: str, value: Any, allowed: str) -> None:
        self.key, self.value, self.allowed = str(key), value, str(allowed)
        super().__init__(str(self))

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuilt from its parts, then given back every attribute (a subclass's too), so an error raised in
        a worker process reaches the parent as the same error."""
        return type(self), (self.key, self.value, self.allowed), self.__dict__

    def __str__(self) -> str:
        return _one_line(f"{self.key}: {show(self.value)} — {self.allowed}")


class InputError(ConfigError):
    """A rejected input file: the key is `<label>` plus, where known, `row <r>` (0-based position in the
    file) and `column '<c>'`. Unpickled as `InputError(key, value, allowed)` with `label`, `row` and
    `column` restored after (`ConfigError.__reduce__`)."""

    def __init__(self, label: str, value: Any, allowed: str, *, row: int | None = None, column: str | None = None) -> None:
        key = str(label)
        if row is not None:
            key += f" row {int(row)}"
        if column is not None:
            key += f", column {column!r}"
        self.label, self.row, self.column = str(label), None if row is None else int(row), column
        super().__init__(key, value, allowed)


def yaml_error(err: Exception, path: str) -> ConfigError:
    """A YAML file that does not parse, as one line naming the file, the line and column, and the problem."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    where = f"{path} line {mark.line + 1}, column {mark.column + 1}" if mark is not None else str(path)
    line = (mark.buffer or "").splitlines()[mark.line] if mark is not None and mark.buffer and mark.line < len(mark.buffer.splitlines()) else ""
    problem = " ".join(str(getattr(err, "problem", None) or err).split())
    return ConfigError(where, Text(line.strip() or "(end of file)"), f"valid YAML ({problem})")
