"""Merging plain data into the typed config dataclasses (OmegaConf structured configs), and turning
OmegaConf's errors into one-line `ConfigError`s: `<full.key>: <bad value> — <what is allowed>`.

OmegaConf does the type checks, the unknown-key checks and the error locations; what it does not do is
say, in words, what a key accepts (`describe_type`) and name the full key of a node merged on its own
(`kind_node`: a model, data set or zoo entry merged into the dataclass of its `kind`)."""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import is_dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

from pipeline.config.errors import MISSING_VALUE, ConfigError

_PLURAL = {int: "integers", float: "numbers", str: "strings", bool: "booleans"}
_SINGULAR = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def describe_type(tp: Any) -> str:
    """What a value of type hint `tp` looks like, in words."""
    if tp is Any:
        return "any value"
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        inner = [a for a in args if a is not type(None)]
        return "null or " + (describe_type(inner[0]) if len(inner) == 1 else "a value")
    if origin is list:
        elem = args[0] if args else Any
        return "a list of " + _PLURAL.get(elem, "values" if elem is Any else describe_type(elem))
    if is_dataclass(tp):
        return "a mapping with keys " + ", ".join(f.name for f in dataclasses.fields(tp))
    return _SINGULAR.get(tp, getattr(tp, "__name__", str(tp)))


def _path(key: str) -> list[str | int]:
    return [int(t) if t.isdigit() else t for t in re.findall(r"[^.\[\]]+", key)]


def lookup(data: Any, key: str) -> Any:
    for token in _path(key):
        try:
            data = data[token]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _strip_optional(tp: Any) -> Any:
    if get_origin(tp) in (Union, UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        return inner[0] if len(inner) == 1 else tp
    return tp


def _field_type(err: OmegaConfBaseException) -> Any:
    """The declared type of the node an OmegaConf error is about, if it can be found."""
    owner = err.object_type if is_dataclass(err.object_type) else err.ref_type
    if is_dataclass(owner) and isinstance(err.key, str):
        return get_type_hints(owner).get(err.key)
    ref = _strip_optional(err.ref_type)
    if get_origin(ref) is list and isinstance(err.key, int):
        return get_args(ref)[0]
    return None


def _wrap(err: OmegaConfBaseException, data: Any, prefix: str = "", owner: str | None = None) -> ConfigError:
    """A ConfigError naming the full dotted key, the bad value and what is allowed."""
    key = prefix + (err.full_key or "")
    if isinstance(err, ConfigKeyError):
        parent = key.rpartition(".")[0] or "the top level"
        cls = err.object_type if is_dataclass(err.object_type) else err.ref_type
        # alphabetical, Hydra's `_target_` last
        valid = ", ".join(sorted((f.name for f in dataclasses.fields(cls)), key=lambda n: (n.startswith("_"), n))) if is_dataclass(cls) else "none"
        return ConfigError(key, lookup(data, key[len(prefix):]), f"not a key of {owner or parent}; valid keys: {valid}")
    tp = _field_type(err)
    value = err.value if err.value is not None else lookup(data, key[len(prefix):])
    if isinstance(value, (DictConfig, ListConfig)):
        value = OmegaConf.to_container(value)
    expected = describe_type(tp) if tp is not None else (err.msg or str(err)).splitlines()[0]
    return ConfigError(key or "config", value, expected)


def _prewalk(cls: type, data: Any, key: str) -> None:
    """A group given as a scalar (e.g. `search.live=3`): OmegaConf's merge error would not name the key."""
    if not isinstance(data, Mapping):
        raise ConfigError(key or "config", data, describe_type(cls))
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in data and is_dataclass(hints[f.name]):
            _prewalk(hints[f.name], data[f.name], f"{key}.{f.name}" if key else f.name)


def merge(schema: type, data: Mapping[str, Any], prefix: str = "", owner: str | None = None) -> DictConfig:
    _prewalk(schema, data, prefix.rstrip("."))
    try:
        return OmegaConf.merge(OmegaConf.structured(schema), data)
    except OmegaConfBaseException as err:
        raise _wrap(err, data, prefix, owner) from None


def plain(cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(cfg, DictConfig):
        try:
            return OmegaConf.to_container(cfg, resolve=True)
        except OmegaConfBaseException as err:
            raw = OmegaConf.to_container(cfg, resolve=False)
            value = lookup(raw, err.full_key or "")
            source = _not_a_mapping(raw, value)
            if source is not None:  # the value the interpolation reads is what is wrong: name it
                raise ConfigError(source[0], lookup(raw, source[0]), f"a mapping ({err.full_key} reads {source[1]})") from None
            first = (err.msg or str(err)).splitlines()[0]
            raise ConfigError(err.full_key or "config", value, f"an interpolation that resolves ({first})") from None
    if not isinstance(cfg, Mapping):
        raise ConfigError("config", cfg, "a mapping of config groups")
    return OmegaConf.to_container(OmegaConf.create(dict(cfg)), resolve=True)


def _not_a_mapping(raw: Mapping[str, Any], value: Any) -> tuple[str, str] | None:
    """(key, interpolated path) when `value` is an interpolation `${a.b.c}` that fails because a node on its
    path (`a` or `a.b`) is not a mapping; else None."""
    match = re.fullmatch(r"\$\{([\w.]+)\}", value) if isinstance(value, str) else None
    if match is None:
        return None
    parts = match.group(1).split(".")
    for i in range(1, len(parts)):
        node = lookup(raw, ".".join(parts[:i]))
        if node is not None and not isinstance(node, Mapping):
            return ".".join(parts[:i]), match.group(1)
    return None


def kind_node(data: Any, key: str, table: Mapping[str, type], what: str) -> DictConfig:
    """`data` merged into the dataclass of its `kind`; unknown kinds and keys are errors."""
    if not isinstance(data, Mapping):
        raise ConfigError(key, data, f"a mapping with a kind among {', '.join(table)}")
    kind = data.get("kind")
    if kind not in table:
        raise ConfigError(f"{key}.kind", kind, f"one of {', '.join(table)}")
    return merge(table[kind], data, f"{key}.", owner=f"{key} (a {what} of kind {kind!r})")


_IS = {
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    str: lambda v: isinstance(v, str),
    bool: lambda v: isinstance(v, bool),
}


def typecheck(tp: Any, value: Any, key: str) -> None:
    """Every value of the merged config has its declared type (a second line of defence behind
    OmegaConf's merge, which lets e.g. a nested list through into a list of numbers)."""
    if tp is Any:
        return
    if get_origin(tp) in (Union, UnionType):
        if value is None:
            return
        tp = _strip_optional(tp)
    if is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise ConfigError(key, value, describe_type(tp))
        hints = get_type_hints(tp)
        for f in dataclasses.fields(tp):
            if f.name in value:
                typecheck(hints[f.name], value[f.name], f"{key}.{f.name}" if key else f.name)
    elif get_origin(tp) is list:
        if not isinstance(value, list):
            raise ConfigError(key, value, describe_type(tp))
        for i, v in enumerate(value):
            typecheck(get_args(tp)[0], v, f"{key}[{i}]")
    elif tp in _IS and not _IS[tp](value):
        raise ConfigError(key, value, describe_type(tp))


def missing(cfg: DictConfig, root: type) -> None:
    """A ConfigError for the first key of `cfg` (merged into dataclass `root`) that has no value."""
    missing = sorted(OmegaConf.missing_keys(cfg))
    if missing:
        node_type = declared_type(root, missing[0])
        raise ConfigError(missing[0], MISSING_VALUE, "a value is required" + (f": {describe_type(node_type)}" if node_type else ""))


def declared_type(root: type, key: str) -> Any:
    """The type hint the dataclass `root` declares for the dotted `key`, if any."""
    cls: Any = root
    for token in _path(key):
        if not is_dataclass(cls) or not isinstance(token, str):
            return None
        cls = get_type_hints(cls).get(token)
    return cls


