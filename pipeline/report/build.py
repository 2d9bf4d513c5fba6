"""The report page: one self-contained HTML file (CSS inline, every image a PNG data URI, links only to
files beside it, no external URL) rendered with Jinja2 from the sections of `pipeline.report.sections`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pipeline.report.provenance import collect_provenance
from pipeline.report.sections import benchmark_section, fuzz_section, need, paired_section, priority_href, screening_section

TEMPLATES = Path(__file__).with_name("templates")


def discover(outputs: Path) -> dict[str, list[str]]:
    """The benchmarks, paired sources, screened sources and fuzzing adapters whose files are present."""
    return {"benchmarks": sorted(p.name.removesuffix(".summary.json") for p in (outputs / "groundtruth").glob("*.summary.json")),
            "sources": sorted(p.parent.name for p in (outputs / "paired").glob("*/widths.csv")),
            "screening": sorted(p.parent.parent.name for p in (outputs / "paired").glob("*/screening/metrics.json")),
            "adapters": sorted(p.parent.name for p in (outputs / "fuzz").glob("*/summary.txt"))}


def search_tables(outputs: Path, benchmarks: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Tables 2, 3 and the recovery table (`search_summary`); empty ones when no benchmark is reported."""
    folder = outputs / "search_summary"
    if not benchmarks:
        return {k: pd.DataFrame(columns=["benchmark", "metric", "method"]) for k in ("table2", "table3", "recovery")}
    return {k: pd.read_csv(need(folder / f"{k}.csv", "search_summary")) for k in ("table2", "table3", "recovery")}


def read_priority(page_dir: Path, source: str) -> dict[str, pd.DataFrame]:
    """The priority lists of `source` already beside the page (model -> list)."""
    return {p.stem: pd.read_csv(p) for p in sorted((page_dir / priority_href(source, "*")).parent.glob("*.csv"))}


def render_report(outputs: Path, page_dir: Path, *, benchmarks: Sequence[str] | None = None,
                  models: Mapping[str, str] | None = None, sources: Sequence[str] | None = None,
                  screening: Sequence[str] | None = None, adapters: Sequence[str] | None = None,
                  methods: Sequence[str] | None = None, priority: Mapping[str, Mapping[str, pd.DataFrame]] | None = None,
                  provenance: Mapping | None = None, repo: Path | None = None, run_script: str | None = None) -> str:
    """The HTML of the report on the stages' files under `outputs`, for a page in `page_dir`.

    Each of `benchmarks`, `sources` (paired bounds and policies), `screening` (screened sources) and
    `adapters` (fuzzing) lists what to report, whose files must exist; None reports whatever is present.
    `models` names the model under test per benchmark; `methods` are Table 2's rows (None: the table's).
    `priority` holds the priority lists per screened source and model (`priority_lists`), which the page
    links as `priority/<source>/<model>.csv` beside it (the caller writes them there); None reads the
    ones already there.
    `provenance` defaults to `collect_provenance(repo)` (repo: the folder above `outputs`); with `run_script`
    (a path relative to the page) its run-dependent part is left to that script (`provenance.run_script`)."""
    found = discover(outputs)
    chosen = {k: list(v) if v is not None else found[k] for k, v in
              (("benchmarks", benchmarks), ("sources", sources), ("screening", screening), ("adapters", adapters))}
    search = search_tables(outputs, chosen["benchmarks"])
    methods = list(methods) if methods is not None else list(dict.fromkeys(search["table2"]["method"]))
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return env.get_template("report.html.j2").render(
        css=(TEMPLATES / "report.css").read_text(),
        benchmarks=[benchmark_section(outputs, b, (models or {}).get(b), search, methods) for b in chosen["benchmarks"]],
        paired=[paired_section(outputs, s) for s in chosen["sources"]],
        screening=[screening_section(outputs, s, priority.get(s, {}) if priority is not None else read_priority(page_dir, s))
                   for s in chosen["screening"]],
        fuzz=[fuzz_section(outputs, a) for a in chosen["adapters"]],
        provenance=provenance if provenance is not None else collect_provenance(repo or outputs.resolve().parent),
        run_script=run_script)
