"""scripts/house.py on a checkout drawn by hand: its rooms, arrows, floors and lines counted independently."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "pipeline/__init__.py": "",
    "pipeline/a/__init__.py": "",
    "pipeline/a/x.py": "from pipeline.b.y import f\n",
    "pipeline/b/__init__.py": "",
    "pipeline/b/y.py": "def f():\n    return 1\n",
    "pipeline/c.py": "import pipeline.a.x\nfrom pipeline.b import y\n",
    "scripts/__init__.py": "",
    "scripts/s.py": "from pipeline.c import x\nimport json\n",
    "perf/bench_b.py": "import sys\nfrom pipeline.b.y import f\n",
}


def test_the_drawing_of_a_small_checkout(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "house.py"), "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # rooms: pipeline.a, pipeline.b, pipeline.c, scripts, perf; arrows: a→b, c→a, c→b, scripts→c, perf→b;
    # longest chain: scripts → c → a → b
    lines = sum(t.count("\n") for t in FILES.values())
    assert done.stdout.strip() == f"5 rooms (1 loose modules in pipeline/), 4 floors, 5 arrows, {lines} lines"


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "house.py"), "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"--root {tmp_path}: no pipeline/ and scripts/ folders" in done.stderr
