import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "scripts", ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # xdist runs 2 test processes on 2 cores

import torch  # noqa: E402

torch.set_num_threads(1)
