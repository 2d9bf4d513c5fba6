"""The rule helpers every config group's checks use: each raises a one-line `ConfigError` naming the key,
the bad value and what is allowed."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from pipeline.config.errors import ConfigError

NAME = re.compile(r"^(?!\.+$)[A-Za-z0-9_.=-]+$")  # a file or folder name: not "." or ".."
DEVICE_CHOICES = "cpu, cuda, cuda:<n> (n = a CUDA device index)"
_DEVICE = re.compile(r"^(cpu|cuda(:[0-9]+)?)$")


def is_device_name(value: Any) -> bool:
    """Whether `value` is a device name the config accepts: cpu, cuda or cuda:<n> (`pipeline.runtime.device`)."""
    return isinstance(value, str) and _DEVICE.match(value) is not None


def at_least(key: str, value: int, low: int, note: str = "") -> None:
    if value < low:
        raise ConfigError(key, value, f"an integer ≥ {low}{note}")


def optional_at_least(key: str, value: int | None, low: int, null_means: str) -> None:
    if value is not None and value < low:
        raise ConfigError(key, value, f"null ({null_means}) or an integer ≥ {low}")


def in_range(key: str, value: float, low: float, high: float, closed: str = "[]", note: str = "") -> None:
    ok_low = value >= low if closed[0] == "[" else value > low
    ok_high = value <= high if closed[1] == "]" else value < high
    if not (ok_low and ok_high and math.isfinite(value)):
        raise ConfigError(key, value, f"a number in {closed[0]}{low:g}, {high:g}{closed[1]}{note}")


def positive(key: str, value: float, note: str = "") -> None:
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(key, value, f"a finite number > 0{note}")


def choice(key: str, value: Any, choices: Sequence[Any], note: str = "") -> None:
    if value not in choices:
        raise ConfigError(key, value, f"one of {', '.join(str(c) for c in choices)}{note}")


def non_empty(key: str, values: Sequence[Any], what: str) -> None:
    if len(values) == 0:
        raise ConfigError(key, list(values), f"a non-empty list of {what}")


def distinct(key: str, values: Sequence[Any]) -> None:
    seen: set[Any] = set()
    for i, v in enumerate(values):
        if v in seen:
            raise ConfigError(f"{key}[{i}]", v, f"a value not already listed in {key} (each entry once)")
        seen.add(v)


def distinct_names(key: str, values: Sequence[str], choices: Sequence[str], what: str, note: str = "") -> None:
    """A non-empty list of distinct names, each among `choices`."""
    non_empty(key, values, f"{what} among {', '.join(choices)}")
    for i, v in enumerate(values):
        choice(f"{key}[{i}]", v, choices, note)
    distinct(key, values)


def file_names(key: str, values: Sequence[str] | None, null_means: str) -> None:
    if values is None:
        return
    non_empty(key, values, f"names (or null: {null_means})")
    for i, v in enumerate(values):
        file_name(f"{key}[{i}]", v)
    distinct(key, values)


def file_name(key: str, value: str) -> None:
    if not NAME.match(value):
        raise ConfigError(key, value, "a non-empty name of letters, digits and _ . = - (it names files and folders)")

