"""`make profile`, first half: run `dvc repro` (arguments passed on, e.g. `--force`) and print the wall time of
every stage it ran, slowest first, with the total; the table is also written to outputs/timings/repro.tsv.

    python scripts/profile_repro.py            # what `make repro` does, timed per stage
    python scripts/profile_repro.py --force    # every stage, as from a fresh clone

A stage's time runs from DVC's "Running stage '<name>':" line to the next stage's (or to the end of the run),
so it includes DVC's own work for that stage (hashing and caching its outputs). Stages DVC skips as unchanged
take no time and are not listed. The output of `dvc repro` is passed through as it comes.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from pipeline.runtime.io import write_text

STAGE_LINE = re.compile(r"^Running stage '([^']+)'")
TIMINGS = Path("outputs") / "timings" / "repro.tsv"  # under the project root; `make repro` writes it too (scripts/repro.py)
OUT = Path(__file__).resolve().parents[1] / TIMINGS


def stage_times(lines, clock=time.monotonic) -> tuple[list[tuple[str, float]], float]:
    """(stage, seconds) for each "Running stage" line of a `dvc repro` output stream, in run order, and the
    total seconds; each line is echoed as it arrives."""
    start = clock()
    times: list[tuple[str, float]] = []
    current, since = None, start
    for line in lines:
        sys.stdout.write(line)
        sys.stdout.flush()
        match = STAGE_LINE.match(line)
        if match:
            now = clock()
            if current is not None:
                times.append((current, now - since))
            current, since = match.group(1), now
    end = clock()
    if current is not None:
        times.append((current, end - since))
    return times, end - start


def minutes(seconds: float) -> str:
    """m:ss.s"""
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def table(times: list[tuple[str, float]], total: float) -> str:
    """The stages slowest first, with minutes:seconds and share of the total, as tab-separated lines."""
    rows = ["stage\tseconds\tmin:s\tshare"]
    for name, seconds in sorted(times, key=lambda t: -t[1]):
        rows.append(f"{name}\t{seconds:.1f}\t{minutes(seconds)}\t{seconds / max(total, 1e-9):.1%}")
    rows.append(f"total\t{total:.1f}\t{minutes(total)}\t100.0%")
    return "\n".join(rows) + "\n"


def main(argv: list[str]) -> int:
    proc = subprocess.Popen(["dvc", "repro", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    times, total = stage_times(proc.stdout)
    code = proc.wait()
    text = table(times, total)
    print("\n" + text.replace("\t", "  "))
    if code == 0 and times:
        write_text(text, OUT)
        print(f"written to {TIMINGS}")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
