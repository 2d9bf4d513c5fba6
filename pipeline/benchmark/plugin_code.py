"""Building what a config node names: `_target_` through `hydra.utils.instantiate` (docs/plugins.md),
the protocol checks that refuse a plug-in before any work, and the source files a plug-in's results
depend on (part of the resume key and of its stage's DVC deps).

A node's keys are its implementation's keyword arguments, except `_target_`, `name` and `kind` (which
say what it is, not how to build it). The run-time arguments `data_dir`, `device` and `batch_size` are
passed to an implementation whose signature names them, and only then (the run's values: `device=`,
`benchmark.batch_size`, the benchmark's prepared folder).
"""
from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np

from pipeline.config.errors import ConfigError
from pipeline.runtime.fingerprint import sources_of
from pipeline.plugins.protocols import Classifier, DataSet, Predictor
from pipeline.plugins.registry import is_import_path, load_import_path

META = ("_target_", "name", "kind")
RUNTIME = ("data_dir", "device", "batch_size")


def target_of(node: Mapping[str, Any], key: str) -> Any:
    """The class or factory `node["_target_"]` names, or a ConfigError naming `key`."""
    path = node.get("_target_")
    if not isinstance(path, str) or not is_import_path(path):
        raise ConfigError(f"{key}._target_", path, "the import path of a class or factory, e.g. my_pkg.models.MyModel")
    try:
        return load_import_path(path)
    except ValueError as err:
        raise ConfigError(f"{key}._target_", path, f"an importable class or factory ({err}; is its package installed or "
                          "on PYTHONPATH?)") from None


def build(node: Mapping[str, Any], key: str, **runtime: Any) -> Any:
    """`hydra.utils.instantiate` of `node` with the run-time arguments its target names; a failure to build
    is a ConfigError naming `key`."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    target = target_of(node, key)
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        params = {}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    given = {k: v for k, v in runtime.items() if k in RUNTIME and (k in params or takes_any)}
    config = {k: v for k, v in node.items() if k not in META[1:] and k not in RUNTIME}
    try:
        return instantiate(config, **given, _convert_="all")
    except InstantiationException as err:
        cause = err.__cause__ or err
        first = (str(cause).splitlines() or [type(cause).__name__])[0]
        raise ConfigError(f"{key}._target_", node["_target_"], f"a target that builds from the keys of {key} ({first})") from None


def _missing_methods(obj: Any, protocols: tuple[type, ...]) -> bool:
    return not any(all(callable(getattr(obj, m, None)) for m in _methods(p)) for p in protocols)


def _methods(protocol: type) -> list[str]:
    return [n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")]


def check_class(node: Mapping[str, Any], key: str, protocols: tuple[type, ...]) -> None:
    """Refuse a `_target_` class that cannot satisfy any of `protocols` before it is built (a factory function
    is checked on what it returns, by `check_instance`)."""
    target = target_of(node, key)
    if inspect.isclass(target) and _missing_methods(target, protocols):
        raise ConfigError(f"{key}._target_", node["_target_"], _wanted(target.__name__, protocols))


def check_instance(obj: Any, node: Mapping[str, Any], key: str, protocols: tuple[type, ...]) -> Any:
    """`obj` if it satisfies one of `protocols`, else a ConfigError naming the missing method."""
    if _missing_methods(obj, protocols):
        raise ConfigError(f"{key}._target_", node["_target_"], _wanted(type(obj).__name__, protocols))
    return obj


def _wanted(what: str, protocols: tuple[type, ...]) -> str:
    methods = " or ".join(f"{m}()" for p in protocols for m in _methods(p))
    names = " or ".join(f"pipeline.plugins.protocols.{p.__name__}" for p in protocols)
    return f"a plug-in with {methods} ({names}); {what} has no {methods}"


MODEL_PROTOCOLS = (Classifier, Predictor)
DATASET_PROTOCOLS = (DataSet,)


def check_perturbations(spec: Mapping[str, Any]) -> None:
    """Every perturbation of the space (a catalog name or a plug-in) has the levels Θ asks for and the
    benchmark's modality."""
    from pipeline.perturb.registry import get_perturbation

    levels = int(spec["levels"])
    for name in spec["perturbations"]:
        family = get_perturbation(name)  # fails with the list of valid names
        if family.max_level < levels - 1:
            raise ValueError(f"perturbation {name!r} has levels 0..{family.max_level}; the space asks for 0..{levels - 1}")
        if family.modality != spec["modality"]:
            raise ValueError(f"perturbation {name!r} is of modality {family.modality!r}; benchmark {spec['name']!r} is "
                             f"{spec['modality']!r}")


def check_plugins(spec: Mapping[str, Any]) -> None:
    """Refuse, before any work, a model or data set class that cannot satisfy its protocol and a perturbation
    that does not fit Θ: one line naming what is missing (every stage that builds the benchmark calls it)."""
    check_class(spec["model"], "model", MODEL_PROTOCOLS)
    check_class(spec["dataset"], "benchmark.dataset", DATASET_PROTOCOLS)
    check_perturbations(spec)


def predictions_of(model: Any) -> Callable[[Any], np.ndarray]:
    """The model's predictions, what ψ compares with the labels: `predict` where it has one, else the argmax
    of `predict_proba`."""
    if callable(getattr(model, "predict", None)):
        return model.predict
    return lambda inputs: np.asarray(model.predict_proba(inputs)).argmax(1)


def plugin_targets(spec: Mapping[str, Any]) -> list[str]:
    """Every plug-in a benchmark spec names by import path: the model's and the data set's `_target_`, and
    perturbations, fidelity metrics and the task metric given as `module:attribute`."""
    named = [spec["model"].get("_target_"), spec["dataset"].get("_target_"), spec.get("task_metric"),
             *spec.get("perturbations", []), *spec.get("fidelity", [])]
    return [t for t in named if isinstance(t, str) and is_import_path(t)]


def target_module(target: str) -> str:
    """The module an import path names: `module` of `module:attribute`, all but the last part of Hydra's dotted
    `package.module.Class`."""
    return target.partition(":")[0] if ":" in target else target.rpartition(".")[0]


def code_modules(spec: Mapping[str, Any]) -> list[str]:
    """The project modules a benchmark spec runs that no import statement reaches, so that the closure of
    its stage's code misses them: the modules of its built-in plug-ins (`pipeline.*` targets), of every
    task metric and of the adequacy metrics (the catalog names them by import path). Roots of its
    resume key, beside the stage's code (`pipeline.benchmark.ground_truth.table_fingerprint`)."""
    from pipeline.plugins.catalog import ADEQUACY, TASK_METRICS

    own = [target_module(t) for t in plugin_targets(spec) if t.startswith("pipeline.")]
    return sorted({*own, *TASK_METRICS.modules(), *ADEQUACY.modules()})


def plugin_sources(spec: Mapping[str, Any]) -> list[Path]:
    """The user's source files a benchmark's values depend on (`pipeline.runtime.fingerprint.source_files`), in a fixed order."""
    return sources_of(plugin_targets(spec))
