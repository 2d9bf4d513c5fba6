"""The stage table: every DVC stage, its command, params, inputs and outputs, from which `dvc.yaml` is
generated (`make dvc.yaml`; a test checks the committed file is current).

Generated rather than hand-written because the two things that drift by hand come for free here: each
stage's code dependencies are the transitive project imports of its script (`pipeline.runtime.fingerprint`,
the same closure that keys the resume store), and its inputs and outputs are the path functions of
`pipeline.stages.layout` that the scripts themselves write to, evaluated on a config whose values are DVC's
`${...}` templates. Adding a stage is one entry here.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml
from omegaconf import OmegaConf

from pipeline.plugins.catalog import ADEQUACY, FUZZ_ADAPTERS, SEARCH_METHODS, TASK_METRICS
from pipeline.runtime.fingerprint import module_closure
from pipeline.benchmark.plugin_code import target_module
from pipeline.runtime.io import write_text
from pipeline.stages.layout import (
    PARAMS,
    ROOT,
    data_dir,
    fuzz_assets,
    fuzz_dir,
    fuzz_figures,
    groundtruth_figures,
    headline_path,
    outputs,
    paired_dir,
    paired_figures,
    perturb_manifest,
    prepare_metrics,
    recapture_path,
    records_path,
    report_dir,
    screening_dir,
    screening_figures,
    sibling,
    stage_code_path,
    summary_dir,
    table_path,
    traces_dir,
    tune_dir,
)

SEARCH_CODE = ("pipeline.search", *SEARCH_METHODS.modules())  # as `pipeline.search.tables.CODE`, without importing it
# What a benchmark stage runs by import path (`pipeline.benchmark.plugin_code.code_modules`), for every benchmark of conf/: the
# built-in `_target_` modules of conf/model and conf/benchmark, every task metric and the adequacy metrics.
BENCHMARK_CODE = tuple(sorted({
    target_module(t) for f in sorted((ROOT / "conf").glob("*/*.yaml"))
    for t in re.findall(r"^\s*_target_:\s*(pipeline\.[\w.:]+)", f.read_text(), flags=re.M)} | {*TASK_METRICS.modules(), *ADEQUACY.modules()}))

Paths = Callable[[object], list[Path]]
SCREENING_TABLES = ("table16", "table17", "table18", "table19", "table20", "table21", "table23", "table24", "table25",
                    "table26", "table27", "table28", "table29", "table32", "table33", "table34", "table35", "table36", "table37", "table38", "table39",
                    "capture", "table43", "table46")  # scripts/screening.py writes each as .csv and .md


class Template:
    """A config whose every value is the DVC template naming it: `cfg.benchmark.name` -> `${benchmark.name}`;
    keys in `fixed` render as given instead (`${item}` in a `foreach` stage)."""

    def __init__(self, key: str = "", fixed: dict[str, str] | None = None):
        self._key, self._fixed = key, fixed or {}

    def __getattr__(self, key: str) -> "Template":
        return Template(f"{self._key}.{key}" if self._key else key, self._fixed)

    __getitem__ = __getattr__

    def __str__(self) -> str:
        return self._fixed.get(self._key, "${" + self._key + "}")

    __fspath__ = __format__ = lambda self, *_: str(self)  # noqa: E731


@dataclass(frozen=True)
class Suite:
    """A list of params.yaml (`key`) whose items each run a stage once more, as DVC `foreach` stages
    `<stage>_suite@<item>`: `--params <group>=<item>` switches the config group `group` to conf/<group>/<item>.yaml,
    whose files (`conf`) replace the params of the keys `own` as dependencies; `template` is the config key
    that names the item's files (so its paths become `${item}`)."""

    key: str
    group: str
    template: str
    own: tuple[str, ...]
    conf: tuple[str, ...]


BENCHMARKS = Suite("suite", "benchmark", "benchmark.name", ("benchmark", "model", "fidelity"),
                   ("conf/benchmark/${item}.yaml", "conf/model"))
PAIRED_SOURCES = Suite("paired_suite", "paired", "paired.source", ("paired",), ("conf/paired/${item}.yaml", "conf/paired/default.yaml"))


@dataclass(frozen=True)
class Stage:
    """One DVC stage: `python scripts/<script>.py <args>`."""

    name: str
    script: str
    params: tuple[str, ...]
    deps: Paths = lambda cfg: []          # data inputs (outputs of earlier stages)
    after: Paths = lambda cfg: []         # outputs of stages to run first that the script does without (DVC order only)
    outs: Paths = lambda cfg: []          # cached in DVC
    committed: Paths = lambda cfg: []     # small outputs kept in git (cache: false)
    metrics: Paths = lambda cfg: []       # small JSON summaries, kept in git (cache: false); not DVC metrics
    headline: Paths = lambda cfg: []      # the DVC metrics (`dvc metrics show`): the report's headline numbers only
    plots: Paths = lambda cfg: []
    args: str = ""
    checks_inputs: bool = True            # False: the script checks its inputs itself (they depend on a mode)
    suite: Suite | None = None            # also run once per item of that suite (`<name>_suite@<item>`)
    code: tuple[str, ...] = ()            # modules it runs that no import reaches (a catalog's entries), beside its script's closure
    pool: bool = False                    # runs a worker process per core (`workers`): `scripts/repro.py` counts it as every core

    def sources(self) -> list[Path]:
        """The source files it runs: the closure of its script and of `code` (`pipeline.runtime.fingerprint`)."""
        return module_closure([f"scripts.{self.script}", *self.code])

    def runs_with(self, script: str, cfg) -> bool:
        """Whether `python scripts/<script>.py` under `cfg` is this stage (its `--params` keys match)."""
        pairs = [a.split("=", 1) for a in self.args.split() if "=" in a]
        return script == self.script and all(str(OmegaConf.select(cfg, k)) == v for k, v in pairs)

    def entry(self, suite: bool = False) -> dict:
        """The dvc.yaml entry; `suite=True`: the body of the `foreach: ${<suite key>}` variant, which runs the
        stage on item `${item}` (`--params <group>=${item}`: benchmark `${item}`, or paired source `${item}`)
        with that item's conf/ files as dependencies in place of the params they set. Its code is one dependency,
        the listing of its source files (`pipeline.stages.stage_code`)."""
        each = self.suite if suite else None
        cfg = Template(fixed={each.template: "${item}"} if each else None)
        rel = lambda paths: [str(Path(p).relative_to(ROOT)) for p in paths]  # noqa: E731
        args = f"--params {each.group}=${{item}} {self.args.removeprefix('--params')}".strip() if each else self.args
        params = [p for p in self.params if p.split(".")[0] not in each.own] if each else list(self.params)
        conf = list(each.conf) if each else []
        out: dict = {"cmd": f"python scripts/{self.script}.py" + (f" {args}" if args else ""),
                     "deps": rel([stage_code_path(cfg, self.name)]) + conf + rel(self.deps(cfg)) + rel(self.after(cfg))}
        if params:
            out["params"] = params
        if self.outs(cfg):
            out["outs"] = rel(self.outs(cfg))
        uncached = [{p: {"cache": False}} for p in rel(self.committed(cfg)) + rel(self.metrics(cfg))]
        if uncached:
            out.setdefault("outs", []).extend(uncached)
        for kind, paths in (("metrics", self.headline(cfg)), ("plots", self.plots(cfg))):
            if paths:
                out[kind] = [{p: {"cache": False}} for p in rel(paths)]
        return out


def _fuzz_stages() -> list[Stage]:
    stages = []
    for a in FUZZ_ADAPTERS:
        assets = (lambda cfg, a=a: [fuzz_assets(cfg, a)]) if a != "geometric" else (lambda cfg: [])
        stages.append(Stage(f"fuzz_{a}", "fuzz", ("fuzz.seed", f"fuzz.adapters.{a}"), args=f"--params fuzz.adapter={a}",
                            deps=assets, outs=lambda cfg, a=a: [fuzz_dir(cfg, a) / "report.json"],
                            committed=lambda cfg, a=a: [fuzz_dir(cfg, a) / "summary.txt"],
                            metrics=lambda cfg, a=a: [fuzz_dir(cfg, a) / "metrics.json"]))
        stages.append(Stage(f"figures_fuzz_{a}", "plot_fuzz", ("fuzz.adapter",), args=f"--params fuzz.adapter={a}",
                            deps=lambda cfg, a=a: [fuzz_dir(cfg, a) / "report.json"],
                            committed=lambda cfg, a=a: [fuzz_figures(cfg, a)]))
    return stages


STAGES: list[Stage] = [
    Stage("prepare", "prepare", ("benchmark.name", "benchmark.dataset", "model", "benchmark.features", "benchmark.adequacy"),
          outs=lambda cfg: [data_dir(cfg)], metrics=lambda cfg: [prepare_metrics(cfg)], suite=BENCHMARKS, code=BENCHMARK_CODE),
    Stage("perturb", "perturb", ("benchmark.dataset", "benchmark.perturbations", "benchmark.levels", "benchmark.seed",
                                 "benchmark.store"),
          deps=lambda cfg: [data_dir(cfg)], metrics=lambda cfg: [perturb_manifest(cfg)], suite=BENCHMARKS, code=BENCHMARK_CODE, pool=True),
    Stage("groundtruth", "groundtruth", ("benchmark", "model", "fidelity", "device"), deps=lambda cfg: [data_dir(cfg)],
          after=lambda cfg: [perturb_manifest(cfg)],
          outs=lambda cfg: [table_path(cfg), sibling(table_path(cfg), ".gallery.npz"), sibling(table_path(cfg), ".inputs.parquet")],
          metrics=lambda cfg: [sibling(table_path(cfg), ".summary.json")], suite=BENCHMARKS, code=BENCHMARK_CODE, pool=True),
    Stage("figures_groundtruth", "plot_groundtruth", ("benchmark.name", "fidelity", "benchmark.perturbations", "report"),
          deps=lambda cfg: [table_path(cfg), sibling(table_path(cfg), ".gallery.npz")],
          committed=lambda cfg: [groundtruth_figures(cfg)], suite=BENCHMARKS),
    Stage("search", "search", ("benchmark.name", "benchmark.perturbations", "benchmark.levels", "fidelity", "search"),
          deps=lambda cfg: [table_path(cfg)], outs=lambda cfg: [traces_dir(cfg, str(cfg.benchmark.name))], checks_inputs=False,
          suite=BENCHMARKS, code=SEARCH_CODE, pool=True),
    # the summaries read every benchmark's tables and traces: the folders that hold them
    Stage("search_summary", "search_summary", ("search.table2_methods", "search.summary_benchmarks", "report"),
          deps=lambda cfg: [outputs(cfg) / "search", outputs(cfg) / "groundtruth"],
          outs=lambda cfg: [summary_dir(cfg) / "runs.csv", summary_dir(cfg) / "summary.csv"],
          committed=lambda cfg: [summary_dir(cfg) / f"{t}.{ext}" for t in ("table2", "recovery", "table3") for ext in ("csv", "md")]
          + [summary_dir(cfg) / "monotonicity.csv"],
          metrics=lambda cfg: [summary_dir(cfg) / "metrics.json"]),
    Stage("figures_search", "plot_recall", ("search.table2_methods", "search.fig3_methods", "search.fig4_methods",
                                            "search.summary_benchmarks"),
          deps=lambda cfg: [outputs(cfg) / "search", outputs(cfg) / "groundtruth"],
          plots=lambda cfg: [outputs(cfg) / "figures" / f"search_{f}.png" for f in ("recall", "single_objective", "adequacy", "recall_core")]),
    Stage("tune", "tune", ("search.tune", "search.budget_factor"), deps=lambda cfg: [table_path(cfg)],
          outs=lambda cfg: [tune_dir(cfg) / "grid.parquet"], committed=lambda cfg: [tune_dir(cfg) / "grid.csv"],
          metrics=lambda cfg: [tune_dir(cfg) / "choice.json"], code=SEARCH_CODE, pool=True),
    Stage("records", "records", ("paired.source", "paired.records"), outs=lambda cfg: [records_path(cfg)],
          metrics=lambda cfg: [sibling(records_path(cfg), ".json")], suite=PAIRED_SOURCES, pool=True),
    Stage("bounds", "bounds", ("paired.source", "paired.clean_coverage", "paired.policy_coverages"),
          deps=lambda cfg: [records_path(cfg)],
          outs=lambda cfg: [paired_dir(cfg) / f for f in ("thresholds.parquet", "bounds.parquet", "cells.parquet")],
          metrics=lambda cfg: [paired_dir(cfg) / "bounds.json"], plots=lambda cfg: [paired_dir(cfg) / "widths.csv"],
          suite=PAIRED_SOURCES),
    Stage("policies", "policies", ("paired.source", "paired.clean_coverage", "paired.policy_coverages", "paired.lambdas",
                                   "paired.primary_lambda", "paired.levels"),
          deps=lambda cfg: [records_path(cfg)],
          outs=lambda cfg: [paired_dir(cfg) / f"policy_{t}.parquet" for t in ("costs", "comparisons", "selection")],
          committed=lambda cfg: [paired_dir(cfg) / "table4.md"], metrics=lambda cfg: [paired_dir(cfg) / "policies.json"],
          plots=lambda cfg: [paired_dir(cfg) / "certified.csv", paired_dir(cfg) / "selection.csv"], suite=PAIRED_SOURCES),
    Stage("figures_paired", "plot_paired", ("paired.source", "paired.primary_lambda"),
          deps=lambda cfg: [paired_dir(cfg) / f for f in ("widths.csv", "certified.csv", "bounds.parquet",
                                                           "policy_costs.parquet", "policy_comparisons.parquet")],
          committed=lambda cfg: [paired_figures(cfg), paired_dir(cfg) / "illustration.md"], suite=PAIRED_SOURCES),
    Stage("recapture", "recapture", ("paired.source", "paired.records", "paired.recapture"),
          outs=lambda cfg: [recapture_path(cfg), sibling(recapture_path(cfg), ".synb.parquet"),
                            sibling(recapture_path(cfg), ".probes.parquet")],
          metrics=lambda cfg: [sibling(recapture_path(cfg), ".json")], pool=True),
    Stage("screening", "screening", ("paired.source", "paired.records", "paired.clean_coverage", "paired.screening"),
          deps=lambda cfg: [records_path(cfg), recapture_path(cfg), sibling(recapture_path(cfg), ".synb.parquet"),
                            sibling(recapture_path(cfg), ".probes.parquet")],
          outs=lambda cfg: [screening_dir(cfg) / f"{f}.parquet" for f in ("cells", "prediction_errors", "model_summaries")],
          committed=lambda cfg: [screening_dir(cfg) / f"{t}.{ext}" for t in SCREENING_TABLES for ext in ("csv", "md")]
          + [screening_dir(cfg) / "intervals.csv", screening_dir(cfg) / "tiers.csv"],
          metrics=lambda cfg: [screening_dir(cfg) / "metrics.json"], pool=True),
    Stage("figures_screening", "plot_screening", ("paired.source", "paired.records", "paired.recapture.seed",
                                                  "paired.screening.budgets", "paired.screening.primary_budget"),
          deps=lambda cfg: [screening_dir(cfg) / f for f in ("cells.parquet", "intervals.csv", "table36.csv")],
          committed=lambda cfg: [screening_figures(cfg)]),
    *_fuzz_stages(),
    # one page of every result: reads the folders the stages above write, never a model
    Stage("report", "report", ("benchmark.name", "model.name", "suite", "paired.source", "paired_suite", "paired.records",
                               "paired.recapture.source", "paired.screening", "fuzz.adapters", "search.table2_methods"),
          deps=lambda cfg: [outputs(cfg) / d for d in ("groundtruth", "prepare", "search_summary", "paired",
                                                       "figures/groundtruth", "figures/paired", "figures/screening", "figures/fuzz")]
          # each campaign's results, not the folder: its timings.json differs from run to run and is not reported
          + [fuzz_dir(cfg, a) / f for a in FUZZ_ADAPTERS for f in ("summary.txt", "metrics.json")]
          + [records_path(cfg), recapture_path(cfg), ROOT / "conf" / "benchmark", ROOT / "conf" / "model"],
          committed=lambda cfg: [report_dir(cfg)], headline=lambda cfg: [headline_path(cfg)]),
]


def missing_inputs(script: str, cfg) -> list[tuple[Path, str]]:
    """(input, the stage that makes it) for every missing input file of the stage `script` runs under `cfg`."""
    makers = [(p, s.name) for s in STAGES for f in (s.outs, s.committed, s.metrics, s.plots) for p in f(cfg)]

    def maker(path: Path) -> str:  # the stage writing `path`, or a file under it (a folder of several stages' outputs)
        return next((name for p, name in makers if p == path or path in p.parents), "the stage that writes it")

    return [(p, maker(p)) for s in STAGES if s.checks_inputs and s.runs_with(script, cfg) for p in s.deps(cfg) if not p.exists()]


# The stages that build params.yaml's benchmark, and so depend on the source of the user's plug-ins it names.
PLUGIN_STAGES = ("prepare", "perturb", "groundtruth", "search")


def plugin_deps(params: Path) -> list[str]:
    """The source files of the plug-ins params.yaml's benchmark names (`pipeline.benchmark.plugin_code`), as absolute paths
    (DVC tracks files outside the repository too): none for the embedded default."""
    from pipeline.benchmark.plugin_code import plugin_sources

    cfg = OmegaConf.to_container(OmegaConf.load(params), resolve=True)
    spec = {**cfg["benchmark"], "model": cfg["model"], "fidelity": cfg["fidelity"]}
    return [str(p) for p in plugin_sources(spec)]


def dvc_yaml(params: Path = PARAMS) -> str:
    """The text of dvc.yaml for `params`."""
    header = ("# Generated by pipeline/stages/table.py (`make dvc.yaml`); edit the stage table there, not this file.\n"
              "# `dvc repro` regenerates every result and figure on params.yaml (`dvc exp run -S benchmark=tiny`\n"
              "# composes conf/ with an override first).\n")
    cfg = Template()
    listings = [str(stage_code_path(cfg, s.name).relative_to(ROOT)) for s in STAGES]
    # first: what every stage's code dependency comes from (`pipeline.stages.stage_code`)
    body = {"stages": {"stage_code": {"cmd": "python scripts/stage_code.py", "deps": ["conf", "pipeline", "scripts"],
                                      "outs": [{p: {"cache": False}} for p in listings]}}}
    plugins = plugin_deps(params)
    for s in STAGES:
        body["stages"][s.name] = s.entry()
        if s.name in PLUGIN_STAGES:
            body["stages"][s.name]["deps"] += plugins
        if s.suite:
            body["stages"][f"{s.name}_suite"] = {"foreach": "${" + s.suite.key + "}", "do": s.entry(suite=True)}
    return header + yaml.safe_dump(body, sort_keys=False, width=120)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dvc.yaml"
    write_text(dvc_yaml(), target)
    print(f"wrote {target} ({len(STAGES)} stages)")
