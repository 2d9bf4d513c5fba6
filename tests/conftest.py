import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "scripts", ROOT / "tests", ROOT / "tests" / "search"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from pipeline.numerics import configure_torch, pinned  # noqa: E402

assert pinned(), "pytest runs with `-p pipeline.pin` (pyproject.toml): tests see the numbers the stages produce"
configure_torch()

import matplotlib  # noqa: E402

matplotlib.use("Agg")
