"""Importing this module pins the numerical environment (`pipeline.runtime.numerics.ensure_pinned`).

Every stage script imports it first, so the re-execution under the pinned environment happens before the
script's heavy imports; and pytest loads it as a plugin (`-p pipeline.runtime.pin` in pyproject.toml) before it
captures output or imports any test."""
from pipeline.runtime.numerics import ensure_pinned

ensure_pinned()
