"""How every stage script gets its configuration.

Run with no arguments (as `dvc repro` does), a stage reads `params.yaml`, the committed composition of
`conf/` that DVC tracks (and rewrites on `dvc exp run -S ...`); `--params key=value …` reads params.yaml
and sets those keys (how one script serves several DVC stages). Run with arguments, it is a Hydra app over
`conf/`: `python scripts/groundtruth.py benchmark=digits shard=0 num_shards=4`, or `-m` for a multirun
sweep with any launcher (`hydra/launcher=joblib`, `hydra/launcher=submitit_slurm`).
Every stage runs in the pinned numerical environment of `pipeline.runtime.numerics` (same bits on any AVX2
machine), whoever starts it: `dvc repro`, `dvc exp run`, Hydra multirun jobs or a plain `python` call.
Each stage script imports `pipeline.runtime.pin` before anything else, so the one re-execution under the pinned
environment happens before its heavy imports (2-3 s a stage); `run_stage` pins too, for a script that
does not, and importing this module does nothing.
Jobs a launcher runs in other processes (joblib, submitit, SLURM) unpickle the task by reference to its
`scripts.*` modules, which the project's install provides (`scripts` is a package of it).
Both modes load through one schema (`pipeline.config.validate_config`). A rejected setting or input
(a ValueError, such as `ConfigError`) is reported as one line naming the key or file, the bad value and
what is allowed, with exit status 2, before any output is written.
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from omegaconf import DictConfig, OmegaConf

from pipeline.runtime.numerics import configure_torch_when_imported, ensure_pinned
from pipeline.stages.layout import CONF_DIR, PARAMS, ROOT

if TYPE_CHECKING:
    from hydra.core.override_parser.types import Override


def fail(err: BaseException) -> None:
    """The one error path: one line on stderr naming the key (or file and row), the value and what is
    allowed; exit status 2. A progress bar the error interrupts is ended first, so the line is its own."""
    std = sys.modules.get("tqdm.std")  # loaded only where a stage shows progress
    for bar in list(getattr(getattr(std, "tqdm", None), "_instances", ())):
        bar.close()
    text = " ".join(str(err).split()) or type(err).__name__
    print(f"error: {text}", file=sys.stderr)
    raise SystemExit(2)


# The config groups `--params` can switch, and the keys each switch takes from conf/'s composition.
SWITCHES = {"benchmark": ("benchmark", "model", "fidelity", "modality"), "modality": ("benchmark", "model", "fidelity", "modality"),
            "model": ("model",), "paired": ("paired",)}


def load_params(overrides: list[str]) -> DictConfig:
    """params.yaml with `key=value` overrides (DVC mode), validated against the schema. A group choice
    (`benchmark=<name>`, `modality=<name>`, `model=<name>`) takes that group's keys from conf/'s composition
    with the choice (a benchmark brings its own model and fidelity metrics) and everything else from
    params.yaml: how one DVC stage per benchmark of `suite` runs a benchmark other than params.yaml's.
    Hydra's `+key=value` and `++key=value` set `key` as `key=value` does (the schema then judges the key)."""
    import yaml

    from pipeline.config import apply_overrides, validate_config
    from pipeline.config.errors import yaml_error

    try:
        params = OmegaConf.load(PARAMS)
    except yaml.YAMLError as err:
        raise yaml_error(err, PARAMS.name) from None
    overrides = [o.lstrip("+") for o in overrides]
    choices = [o for o in overrides if o.partition("=")[0] in SWITCHES]
    if choices:
        composed = compose_conf(choices)
        for key in {k for o in choices for k in SWITCHES[o.partition("=")[0]]}:
            if key in composed:
                params[key] = composed[key]
            else:
                params.pop(key, None)
    return check_suite(validate_config(apply_overrides(params, [o for o in overrides if o not in choices])))


def compose_conf(overrides: list[str]) -> DictConfig:
    """Hydra's composition of conf/ with `overrides`, not yet validated."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides)


def hydra_jobs(argv: list[str]) -> list[list[str]]:
    """The override lists of the jobs a Hydra command line runs: one, or every combination of a `-m` sweep."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    overrides = [a for a in argv if not a.startswith("-")]
    if "-m" not in argv and "--multirun" not in argv:
        return [overrides]
    batches = BasicSweeper.split_arguments(OverridesParser.create().parse_overrides(overrides), None)
    return [list(job) for batch in batches for job in batch]


def compose_job(overrides: list[str]) -> DictConfig:
    """Hydra's composition of conf/ with `overrides`, validated against the schema."""
    from hydra.errors import HydraException

    from pipeline.config import validate_config

    try:
        return check_suite(validate_config(compose_conf(overrides)))
    except HydraException:
        name_refused_key(overrides)
        raise


def name_refused_key(overrides: list[str]) -> None:
    """Hydra refuses a key conf/ lacks without saying what is allowed; the schema says it. Composes conf/
    with the overrides that choose configs (groups, Hydra's own settings), then sets (or, with `~`, deletes)
    every other key as written, whatever its `+` or `++`, and lets the schema name the first key it does not
    know, with the keys it allows. Returns when the schema takes them all (Hydra refused for another reason)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from pipeline.config import validate_config

    parsed = [o for o in OverridesParser.create().parse_overrides(overrides) if not o.is_sweep_override()]
    cfg = compose_conf([o.input_line for o in parsed if chooses_config(o)])
    OmegaConf.set_struct(cfg, False)
    for o in parsed:
        if chooses_config(o):
            continue
        if o.is_delete():
            parent, _, leaf = o.key_or_group.rpartition(".")
            node = OmegaConf.select(cfg, parent) if parent else cfg
            if isinstance(node, DictConfig):
                node.pop(leaf, None)
        else:
            OmegaConf.update(cfg, o.key_or_group, o.value(), merge=True, force_add=True)
    validate_config(cfg)


def chooses_config(override: Override) -> bool:
    """Whether `override` picks a config Hydra composes rather than setting a value: a group of conf/
    (`benchmark=tiny`, `hydra/launcher=joblib`, `+fuzz/adapters@fuzz.adapters.mine=external`) or a setting of
    Hydra's own (`hydra.searchpath=[…]`, where the groups of a user's config folder are found)."""
    key = override.key_or_group
    return override.package is not None or "/" in key or key.split(".")[0] == "hydra" or (CONF_DIR / key).is_dir()


def check_suite(cfg: DictConfig) -> DictConfig:
    """Every name in `suite` is a benchmark of conf/benchmark/, every name in `paired_suite` a paired source of
    conf/paired/ whose `source` is its own name (the name its stages' files carry); returns `cfg`."""
    from pipeline.config import ConfigError

    known = sorted(p.stem for p in (CONF_DIR / "benchmark").glob("*.yaml"))
    for i, name in enumerate(cfg.suite):
        if name not in known:
            raise ConfigError(f"suite[{i}]", name, f"one of {', '.join(known)} (the benchmarks of conf/benchmark/)")
    sources = {p.stem: OmegaConf.load(p).get("source") for p in sorted((CONF_DIR / "paired").glob("*.yaml"))}
    named = [name for name, source in sources.items() if source == name]
    for i, name in enumerate(cfg.paired_suite):
        if name not in named:
            raise ConfigError(f"paired_suite[{i}]", name, f"one of {', '.join(named)} (the files of conf/paired/ whose `source` "
                              "is their own name)")
    return cfg


def check_sweep(cfgs: list[DictConfig]) -> None:
    """Jobs of one sweep that differ in the model or the benchmark must not share `benchmark.name`, which
    names their data and result files (`-m model=a,b` would otherwise let b overwrite a)."""
    seen: dict[str, tuple[int, Any]] = {}
    for i, cfg in enumerate(cfgs):
        identity = (plain(cfg.model), plain(cfg.benchmark))
        first = seen.setdefault(str(cfg.benchmark.name), (i, identity))
        if first[1] != identity:
            raise ValueError(f"benchmark.name: {str(cfg.benchmark.name)!r} — a name of its own for each model and benchmark "
                             f"of the sweep (jobs {first[0]} and {i} differ but would write the same files), e.g. "
                             "benchmark.name='" + str(cfg.benchmark.name) + "-${model.name}'")


def check_inputs(cfg: DictConfig, overrides: list[str] | None = None) -> None:
    """Every input file of this script's stage exists, or the error names the command that makes it: in
    script mode (`overrides`: the job's Hydra overrides) the script of the stage that makes it, with the same
    overrides; in DVC mode (None) `dvc repro <stage>`."""
    from pipeline.stages.table import STAGES, missing_inputs

    missing = missing_inputs(Path(sys.argv[0]).stem, cfg)
    if missing:
        path, producer = missing[0]
        maker = next((s for s in STAGES if s.name == producer), None)
        if overrides is None or maker is None:
            raise ValueError(f"missing input {path}: run `dvc repro {producer}` first")
        given = {o.partition("=")[0].lstrip("+") for o in overrides}
        own = [a for a in maker.args.split() if "=" in a and a.partition("=")[0] not in given]  # `--params fuzz.adapter=…`
        command = shlex.join(["python", f"scripts/{maker.script}.py", *own, *overrides])
        raise ValueError(f"missing input {path}: run `{command}` first")


# The stages that run models or fidelity metrics on `device`, and when. Others (a merge, a figure) never
# touch it: shards computed on GPU nodes merge on a login node without one.
DEVICE_STAGES: dict[str, Callable[[DictConfig], bool]] = {"groundtruth": lambda cfg: True,
                                                          "search": lambda cfg: cfg.search.mode == "live"}


def check_paths(cfg: DictConfig) -> None:
    """An output or data folder where no file can be made is refused before anything is read or computed."""
    from pipeline.config import ConfigError
    from pipeline.runtime.io import unwritable

    for key in ("outputs", "data"):
        why = unwritable(ROOT / cfg.paths[key])
        if why:
            raise ConfigError(f"paths.{key}", cfg.paths[key], f"a folder this run can write to: {why}")


def check_device(cfg: DictConfig) -> None:
    """A stage that runs models stops at its start when this machine lacks `device` (`device=cuda` without
    CUDA): one line naming the key, in the process that would use it (a Hydra or SLURM job, not the host
    that submits it). A stage that builds plug-ins checks them itself (`pipeline.benchmark.build.check_plugins`)."""
    from pipeline.runtime.device import resolve_device

    uses = DEVICE_STAGES.get(Path(sys.argv[0]).stem)
    if uses is not None and uses(cfg):
        resolve_device(cfg.device)


def run_stage(task: Callable[[DictConfig], Any]) -> None:
    """Call `task(cfg)` with params.yaml (no CLI arguments, or `--params key=value …`) or with Hydra's
    composition of conf/ (any other arguments). Both load through one schema (`pipeline.config`): a bad
    setting, in any job of a sweep, stops before anything is written."""
    ensure_pinned()  # re-executes the process under the pinned environment unless it runs under it
    import yaml
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from pipeline.stages.guard import check_overwrite

    configure_torch_when_imported()
    try:
        if len(sys.argv) == 1 or sys.argv[1] == "--params":
            cfg = load_params(sys.argv[2:])
            check_paths(cfg)
            check_inputs(cfg)
            check_device(cfg)
            task(cfg)
            return
        job_overrides = hydra_jobs(sys.argv[1:])
        jobs = [compose_job(job) for job in job_overrides]
        check_sweep(jobs)
        for overrides, cfg in zip(job_overrides, jobs):
            check_paths(cfg)
            check_overwrite(cfg, overrides, load_params)
            check_inputs(cfg, overrides)
    except (ValueError, HydraException, OmegaConfBaseException) as err:
        fail(err)
    except yaml.YAMLError as err:  # a file of conf/ that does not parse
        from pipeline.config.errors import yaml_error

        fail(yaml_error(err, getattr(getattr(err, "problem_mark", None), "name", "conf/")))
    import hydra

    from pipeline.config import validate_config

    def job(cfg: DictConfig) -> None:
        try:
            cfg = validate_config(cfg)
            check_device(cfg)
            task(cfg)
        except ValueError as err:
            fail(err)

    job.__module__ = task.__module__ if task.__module__ != "__main__" else f"scripts.{Path(sys.argv[0]).stem}"  # Hydra names
    hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(job)()  # the app after it (--help)


def plain(cfg: Any) -> Any:
    """A config node as plain Python containers (what the library accepts)."""
    return OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else cfg


def benchmark_spec(cfg: DictConfig) -> dict[str, Any]:
    """The benchmark as the library takes it (`pipeline.benchmark.build`): the `benchmark` node with the model
    under test (`model`) and the fidelity metrics (`fidelity`), which are config groups of their own.
    `device` goes where each reads it: into the model spec (`spec["model"]["device"]`, model adapters)
    and at the top (`spec["device"]`, fidelity metrics and their feature networks)."""
    device = str(cfg.device)
    return {**plain(cfg.benchmark), "model": {**plain(cfg.model), "device": device}, "fidelity": list(cfg.fidelity),
            "device": device}
