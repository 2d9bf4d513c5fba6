"""Importing this module pins the numerical environment (`pipeline.numerics.ensure_pinned`).

Every stage script imports it first, so the re-execution under the pinned environment happens before the
script's heavy imports; and pytest loads it as a plugin (`-p pipeline.pin` in pyproject.toml) before it
captures output or imports any test."""
from pipeline.numerics import ensure_pinned

ensure_pinned()
