"""A run from the command line never overwrites the committed results with another benchmark's or model's.

A stage output is committed when dvc.lock lists it (or a folder holding it) or git tracks it (or a file under
it). `dvc repro` and `dvc exp run -S` write them from params.yaml (`--params` mode, never checked here). A
Hydra-mode run (`python scripts/<stage>.py key=value …`, each job of a `-m` sweep) that would write one must
agree with the DVC run that makes it (params.yaml, or params.yaml with an item of its suite) on every value
the output depends on: the DVC params of its stage and of the stages upstream of it (whose outputs its inputs
are), and `paths.data` where those inputs include prepared data. Otherwise it stops before anything is
written, naming the override, the file, and how to give the run files of its own.
"""
from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

from pipeline.config.errors import ConfigError, show
from pipeline.stages.layout import ROOT
from pipeline.stages.table import STAGES, Stage

# Scripts that write another stage's outputs (a sharded ground truth's merge writes the final table), and the
# settings under which a stage's script writes them (live search writes outputs/search_live/ instead).
WRITES_FOR = {"merge_groundtruth": "groundtruth"}
WRITES_WHEN = {"search": lambda cfg: cfg.search.mode == "table"}


def check_overwrite(cfg: DictConfig, overrides: list[str], load_params: Callable[[list[str]], DictConfig]) -> None:
    """Refuse the job of `python sys.argv[0] *overrides` (composed as `cfg`) if it would overwrite a committed
    output with results of a config other than the one that made it (module docstring)."""
    for stage in writing_stages(Path(sys.argv[0]).stem, cfg):
        paths = {path: rel for path in stage_outputs(stage, cfg) if (rel := committed(path))}
        if not paths:
            continue
        keys = relevant_keys(stage, cfg)
        for path, (run, reference) in makers(stage, list(paths), load_params).items():
            diff = dict.fromkeys(leaf for key in keys for leaf in differing(settings(cfg, key), settings(reference, key), key))
            if diff:
                raise refusal(cfg, reference, overrides, list(diff), paths[path], run, own_files(stage, cfg, list(paths)))


def writing_stages(script: str, cfg: DictConfig) -> list[Stage]:
    """The stages of the table whose outputs `python scripts/<script>.py` writes under `cfg`."""
    name = WRITES_FOR.get(script, script)
    return [s for s in STAGES if s.runs_with(name, cfg) and WRITES_WHEN.get(s.name, lambda cfg: True)(cfg)]


def stage_outputs(stage: Stage, cfg: Any) -> list[Path]:
    """Every file or folder `stage` writes under `cfg`."""
    return [Path(p) for f in (stage.outs, stage.committed, stage.metrics, stage.headline, stage.plots) for p in f(cfg)]


@functools.cache
def committed_paths() -> tuple[frozenset[str], frozenset[str]]:
    """(the outputs dvc.lock lists, the files git tracks), as paths relative to the repository."""
    lock = ROOT / "dvc.lock"
    stages = (yaml.load(lock.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}).get("stages", {}) \
        if lock.is_file() else {}
    outs = frozenset(o["path"] for s in stages.values() for o in s.get("outs", []))
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: dvc.lock alone
        listed = b""
    return outs, frozenset(p for p in listed.decode().split("\0") if p)


def committed(path: Path) -> str | None:
    """`path` relative to the repository if it is a committed output, a file inside one or a folder holding
    one; else None."""
    try:
        rel = Path(path).resolve().relative_to(ROOT.resolve()).as_posix()
    except ValueError:
        return None
    outs, tracked = committed_paths()
    inside = lambda a, b: a == b or a.startswith(f"{b}/")
    return rel if any(inside(rel, other) or inside(other, rel) for other in (*outs, *tracked)) else None


def makers(stage: Stage, paths: list[Path], load_params: Callable[[list[str]], DictConfig]) -> dict[Path, tuple[str, DictConfig]]:
    """The DVC run that writes each of `paths` for `stage`: its name (`groundtruth`, `groundtruth_suite@bbc_news`)
    and config (params.yaml with the stage's `--params`, and a suite item's group choice); params.yaml's own
    where no run writes it (a committed file of a benchmark no longer in the suite). `load_params` is the
    runner's reading of params.yaml with `--params` overrides (passed in: the runner calls this module)."""
    args = stage.args.removeprefix("--params").split()
    base = load_params(args)
    items = list(base[stage.suite.key]) if stage.suite else []
    runs = [(stage.name, lambda: base)] + [(f"{stage.name}_suite@{item}", functools.partial(load_params, [f"{stage.suite.group}={item}", *args]))
                                           for item in items]
    found: dict[Path, tuple[str, DictConfig]] = {}
    for run, load in runs:
        todo = [p for p in paths if p not in found]
        if not todo:
            break
        reference = load()
        written = {p.resolve() for p in stage_outputs(stage, reference)}
        found.update({p: (run, reference) for p in todo if p.resolve() in written})
    return {p: found.get(p, (stage.name, base)) for p in paths}


def upstream(stage: Stage, cfg: DictConfig) -> list[Stage]:
    """`stage` and every stage whose outputs its inputs are (or hold, or lie in), transitively."""
    found, todo = [stage], [stage]
    while todo:
        deps = todo.pop().deps(cfg)
        for other in STAGES:
            if other not in found and any(overlap(d, o) for d in deps for o in stage_outputs(other, cfg)):
                found.append(other)
                todo.append(other)
    return found


def overlap(a: Path, b: Path) -> bool:
    """Whether one of the two paths is the other or lies inside it."""
    return a == b or a in b.parents or b in a.parents


def relevant_keys(stage: Stage, cfg: DictConfig) -> list[str]:
    """The config keys `stage`'s outputs depend on: the DVC params of it and of its upstream stages, and
    `paths.data` if one of those reads from the data folder (prepared assets)."""
    stages = upstream(stage, cfg)
    data = (ROOT / cfg.paths.data).resolve()
    keys = list(dict.fromkeys(k for s in stages for k in s.params))
    if any(overlap(p.resolve(), data) for s in stages for p in s.deps(cfg)):
        keys.append("paths.data")
    return keys


def settings(cfg: DictConfig, key: str) -> Any:
    """The value of `key` in `cfg` as plain Python (a folder of `paths` as an absolute path)."""
    value = OmegaConf.select(cfg, key, default=None)
    if key.startswith("paths.") and value is not None:
        return str((ROOT / str(value)).resolve())
    return plain(value)


def differing(a: Any, b: Any, key: str) -> list[str]:
    """The dotted keys of the leaves where `a` and `b` (values at `key`) differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [leaf for k in dict.fromkeys([*a, *b]) for leaf in differing(a.get(k), b.get(k), f"{key}.{k}")]
    return [key] if a != b else []


def override_key(override: str) -> str:
    """The dotted key an override sets: `+model.x=1` -> model.x, `benchmark=tiny` -> benchmark,
    `+fuzz/adapters@fuzz.adapters.mine=external` -> fuzz.adapters.mine."""
    key = override.lstrip("+~").partition("=")[0]
    return key.partition("@")[2] or key.replace("/", ".")


def own_files(stage: Stage, cfg: DictConfig, paths: list[Path]) -> str:
    """How a run of `stage` gets files of its own in place of the committed `paths`: a name of its own where
    `benchmark.name` names them all, and folders of its own (`paths.data` for those in the data folder)."""
    probe = cfg.copy()
    OmegaConf.update(probe, "benchmark.name", f"{cfg.benchmark.name}-own", merge=False)
    renamed = {p.resolve() for p in paths}.isdisjoint(p.resolve() for p in stage_outputs(stage, probe))
    data = (ROOT / cfg.paths.data).resolve()
    keys = sorted({"paths.data" if overlap(p.resolve(), data) else "paths.outputs" for p in paths})
    folders = f"its own folder{'s' if len(keys) > 1 else ''} ({' '.join(f'{k}=<folder>' for k in keys)})"
    return f"its own name (benchmark.name=<name>) or {folders}" if renamed else folders


def refusal(cfg: DictConfig, reference: DictConfig, overrides: list[str], diff: list[str], rel: str, run: str,
            own: str) -> ConfigError:
    """The error naming the first override behind a difference (one that sets a value other than the reference's
    and covers a differing key; else the first differing key), the committed file and how the run gets files of
    its own (`own`)."""
    def given(override: str) -> tuple[str, Any]:  # the key an override sets and its value (a group: the choice)
        key = override_key(override)
        value = OmegaConf.select(cfg, key, default=None)
        return key, override.partition("=")[2] if isinstance(value, DictConfig) else plain(value)

    covers = lambda key, leaf: leaf == key or leaf.startswith(f"{key}.") or key.startswith(f"{leaf}.")
    culprits = [given(o) for o in overrides if any(covers(override_key(o), leaf) for leaf in diff)]
    key, value = next(((k, v) for k, v in culprits if v != name_of(OmegaConf.select(reference, k, default=None))),
                      (diff[0], plain(OmegaConf.select(cfg, diff[0], default=None))))
    return ConfigError(key, value, f"would overwrite the committed {rel} (made from params.yaml's {key}: "
                       f"{show(name_of(OmegaConf.select(reference, key, default=None)))}, by `dvc repro {run}`); give the run "
                       f"{own}, or use scripts/assess.py run=<name>")


def plain(value: Any) -> Any:
    """A config value as plain Python."""
    return OmegaConf.to_container(value, resolve=True) if isinstance(value, (DictConfig, ListConfig)) else value


def name_of(value: Any) -> Any:
    """A config group's node by its name (or paired source); any other value as it is."""
    if isinstance(value, DictConfig):
        return value.get("name", value.get("source", plain(value)))
    return plain(value)
