"""Importing this module pins the numerical environment (`pipeline.numerics.ensure_pinned`).

For programs whose start the project does not write, e.g. pytest, which loads it as a plugin
(`-p pipeline.pin` in pyproject.toml) before it captures output or imports any test."""
from pipeline.numerics import ensure_pinned

ensure_pinned()
