"""The code each DVC stage runs, one small file per stage (stage `stage_code`, `scripts/stage_code.py`): the md5
and path of every source file of the stage's closure (`Stage.sources`: the project modules its script imports,
directly or not, and those its catalog names), one `<md5>  <path>` line each, sorted by path.

Each stage depends on its own file instead of on each of its source files. The file's content changes exactly
when one of those sources changes, or when the closure gains or loses a file, so a stage reruns exactly when it did
with the sources listed. They are not listed because DVC rewrites `dvc.lock` after every stage with a pure-Python
YAML round trip, and parses it again before the next: with about 75 sources a stage the lock was 418 KB, and that
bookkeeping took about 3 s a stage, 2 of the 29 minutes of a `make repro`. The stage `stage_code`
depends on the folders `pipeline`, `scripts` and `conf` (`.dvcignore` leaves bytecode out): it reruns on any edit
there, in about a second, and a stage downstream reruns only if its own file came out different."""
from __future__ import annotations

import hashlib
from pathlib import Path

from pipeline.runtime.io import write_text
from pipeline.stages.layout import ROOT, stage_code_path
from pipeline.stages.table import STAGES


def code_listing(sources: list[Path], md5: dict[Path, str]) -> str:
    """`<md5>  <path relative to the repository>` of each file, one line each, sorted by path (`md5sum`'s format);
    `md5`: each file's digest."""
    return "".join(f"{md5[p]}  {path}\n" for path, p in sorted((str(p.relative_to(ROOT)), p) for p in sources))


def stage_code_listings() -> dict[str, str]:
    """Every stage of the table (a `foreach` stage's items share its script): its name -> `code_listing`. A file
    most stages share (`pipeline/__init__.py`, the config schema) is read once."""
    sources = {s.name: s.sources() for s in STAGES}
    md5 = {p: hashlib.md5(p.read_bytes()).hexdigest() for p in {p for files in sources.values() for p in files}}
    return {name: code_listing(files, md5) for name, files in sources.items()}


def write_stage_code(cfg) -> list[Path]:
    """Write each stage's listing to `stage_code_path(cfg, name)`; the paths written."""
    written = []
    for name, text in stage_code_listings().items():
        written.append(stage_code_path(cfg, name))
        write_text(text, written[-1])
    return written
