"""Writing a figure: one PNG, atomically (a failed or interrupted render never replaces the last good file)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.runtime.io import atomic_path


def save_png(fig: Any, path: str | Path, dpi: int = 150, **savefig: Any) -> Path:
    """Write the matplotlib figure `fig` to `path` as PNG at `dpi` (extra `savefig` options passed on), close
    it, and return the path."""
    import matplotlib.pyplot as plt

    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, **savefig)
    plt.close(fig)
    return path
