"""Does a reproduction agree with the published outputs? A comparison of two versions of a file by meaning.

Bits reproduce on x86-64 CPUs with AVX2 (`pipeline.runtime.numerics`); elsewhere (another BLAS, an ARM CPU) the same
computation rounds differently, so `make verify` asks whether the conclusions hold instead:

- tables (Parquet, CSV) and JSON: the same columns, rows and keys; booleans, integers and strings (front and
  core membership, counts, levels, ranks, names, decisions) exactly; floats within `Tolerance`;
- text (Markdown tables, listings): the same words, each number within `Tolerance` or one unit of its last
  printed digit (a rounding that flipped);
- anything else (figures, the report's page, weights, images): reported when its bytes differ, never a
  disagreement by itself, since it is drawn or trained from what the comparisons above check.
"""
from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Tolerance:
    """Floats a and b agree when |a - b| <= atol + rtol * |b| (NaN agrees with NaN)."""

    rtol: float = 1e-4
    atol: float = 1e-6

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= self.atol + self.rtol * abs(b)


@dataclass(frozen=True)
class Difference:
    """One way a reproduced file differs from the published one. `breaks`: whether it changes a conclusion (False:
    only a file that the compared ones are drawn or trained from differs); `size`: the largest float gap, if any."""

    path: str
    where: str
    what: str
    breaks: bool = True
    size: float = 0.0


# a number standing alone (not inside a hash or a name): 1,234.5, -0.61, .5, 3e-05, 12%
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?(?![\w])")


def compare_tables(path: str, ours: pd.DataFrame, theirs: pd.DataFrame, tol: Tolerance) -> list[Difference]:
    """Column by column: exact for non-float columns, within `tol` for float ones (module docstring)."""
    if list(ours.columns) != list(theirs.columns):
        return [Difference(path, "columns", f"{list(ours.columns)} against {list(theirs.columns)}")]
    if len(ours) != len(theirs):
        return [Difference(path, "rows", f"{len(ours)} rows against {len(theirs)}")]
    out = []
    for column in ours.columns:
        a, b = ours[column], theirs[column]
        if pd.api.types.is_float_dtype(a) and pd.api.types.is_numeric_dtype(b) and not pd.api.types.is_bool_dtype(b):
            x, y = a.to_numpy(np.float64), b.to_numpy(np.float64)
            bad = ~(np.isclose(x, y, rtol=tol.rtol, atol=tol.atol) | (np.isnan(x) & np.isnan(y)))
            if bad.any():
                gap = float(np.nanmax(np.abs(x - y)))
                out.append(Difference(path, f"column {column!r}", f"{int(bad.sum())} of {len(x)} values outside the "
                                      f"tolerance (largest gap {gap:.3g}; first at row {int(np.argmax(bad))})", size=gap))
        else:
            same = a.astype(object).where(a.notna(), None).tolist() == b.astype(object).where(b.notna(), None).tolist()
            if not same:
                rows = [i for i, (p, q) in enumerate(zip(a.tolist(), b.tolist())) if not (p == q or (p != p and q != q))]
                out.append(Difference(path, f"column {column!r}", f"{len(rows)} of {len(a)} values differ exactly "
                                      f"(first at row {rows[0]}: {a.iloc[rows[0]]!r} against {b.iloc[rows[0]]!r})"))
    return out


def _walk(ours: object, theirs: object, where: str) -> Iterator[tuple[str, object, object]]:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if sorted(ours) != sorted(theirs):
            yield where or "keys", sorted(ours), sorted(theirs)
            return
        for key in ours:
            yield from _walk(ours[key], theirs[key], f"{where}.{key}" if where else str(key))
    elif isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (p, q) in enumerate(zip(ours, theirs)):
            yield from _walk(p, q, f"{where}[{i}]")
    else:
        yield where, ours, theirs


def compare_json(path: str, ours: object, theirs: object, tol: Tolerance) -> list[Difference]:
    """Key by key: floats within `tol`, everything else exactly."""
    out = []
    for where, p, q in _walk(ours, theirs, ""):
        if isinstance(p, float) and isinstance(q, float | int) and not isinstance(q, bool):
            if not tol.close(p, float(q)):
                out.append(Difference(path, where, f"{p!r} against {q!r}", size=abs(p - float(q))))
        elif p != q or type(p) is not type(q):
            out.append(Difference(path, where, f"{p!r} against {q!r}"))
    return out


def _last_digit_unit(token: str) -> float:
    digits = token.rstrip("%").split("e")[0].split("E")[0]
    return 10.0 ** -len(digits.split(".")[1]) if "." in digits else 1.0


def _value(token: str) -> float:
    return float(token.rstrip("%").replace(",", ""))


def compare_text(path: str, ours: str, theirs: str, tol: Tolerance) -> list[Difference]:
    """Line by line: the words exactly, each number within `tol` or one unit of its last printed digit."""
    a, b = ours.splitlines(), theirs.splitlines()
    if len(a) != len(b):
        return [Difference(path, "lines", f"{len(a)} lines against {len(b)}")]
    out = []
    for number, (p, q) in enumerate(zip(a, b), start=1):
        if p == q:
            continue
        if _NUMBER.sub("#", p) != _NUMBER.sub("#", q):
            out.append(Difference(path, f"line {number}", f"{p.strip()[:120]!r} against {q.strip()[:120]!r}"))
            continue
        for s, t in zip(_NUMBER.findall(p), _NUMBER.findall(q)):
            x, y = _value(s), _value(t)
            if not (tol.close(x, y) or abs(x - y) <= max(_last_digit_unit(s), _last_digit_unit(t)) * (1 + 1e-9)):
                out.append(Difference(path, f"line {number}", f"{s} against {t}", size=abs(x - y)))
                break
    return out


def compare_bytes(path: str, ours: bytes, theirs: bytes, tol: Tolerance) -> list[Difference]:
    """Any file by its kind (the suffix of `path`): tables, JSON and text by meaning, the rest by its bytes."""
    if ours == theirs:
        return []
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    try:
        if suffix == "parquet":
            return compare_tables(path, pd.read_parquet(io.BytesIO(ours)), pd.read_parquet(io.BytesIO(theirs)), tol)
        if suffix in ("csv", "tsv"):
            sep = "\t" if suffix == "tsv" else ","
            return compare_tables(path, pd.read_csv(io.BytesIO(ours), sep=sep), pd.read_csv(io.BytesIO(theirs), sep=sep), tol)
        if suffix == "json":
            return compare_json(path, json.loads(ours), json.loads(theirs), tol)
        if suffix in ("md", "txt", "yaml"):
            return compare_text(path, ours.decode("utf-8"), theirs.decode("utf-8"), tol)
    except (ValueError, UnicodeDecodeError) as error:
        return [Difference(path, "file", f"cannot be read as {suffix}: {error}")]
    return [Difference(path, "bytes", "other bytes (a figure, page, weights or data drawn from the compared tables)",
                       breaks=False)]
