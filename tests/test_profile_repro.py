"""`make profile`'s stage timer on a recorded `dvc repro` output with a scripted clock."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

from scripts.profile_repro import stage_times, table

OUTPUT = """Running stage 'prepare':
> python scripts/prepare.py
Updating lock file 'dvc.lock'

Stage 'perturb' didn't change, skipping
Running stage 'groundtruth@digits':
> python scripts/groundtruth.py
Running stage 'report':
> python scripts/report.py
Use `dvc push` to send your updates to remote storage.
""".splitlines(keepends=True)


def test_each_stage_runs_from_its_line_to_the_next_and_the_output_passes_through():
    ticks = iter([0.0, 1.0, 4.5, 10.0, 12.0])  # start, three stage lines, end
    echoed = io.StringIO()
    with redirect_stdout(echoed):
        times, total = stage_times(OUTPUT, clock=lambda: next(ticks))
    assert times == [("prepare", 3.5), ("groundtruth@digits", 5.5), ("report", 2.0)]
    assert total == 12.0
    assert echoed.getvalue() == "".join(OUTPUT)
    lines = table(times, total).splitlines()
    assert lines[1].split("\t") == ["groundtruth@digits", "5.5", "0:05.5", "45.8%"]
    assert lines[-1].split("\t")[:2] == ["total", "12.0"]
