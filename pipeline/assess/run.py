"""A user's run, resolved once: what is tested (model, data, Θ, fidelity metrics), how its benchmark is built
in every worker, the fingerprint its stored values are keyed by, and the folders it writes.

Two ways in, one object out (and for a comparison of two models, `pair_run_from_spec` and `pair_run_from_objects`:
the same run of model B, whose benchmark also answers for the baseline A, `pipeline.benchmark.pair`):

* `run_from_spec`: a config spec (`scripts/assess.py`: Hydra's composition, `pipeline.stages.runner.benchmark_spec`)
  whose plug-ins are named by `_target_`; the benchmark is built by `pipeline.benchmark.build` over the run's
  prepared folder, and the fingerprint names the spec, the prepared assets, the code and the plug-ins' sources
  (`pipeline.benchmark.ground_truth.table_fingerprint`), as the ground truth's does.
* `run_from_objects`: a model and a data set as Python objects (`pipeline.assess.assess`, a notebook). They
  travel to worker processes by pickling (loky and submitit use cloudpickle), and the fingerprint names the
  space, the metric names, the clean inputs and labels, and the model's clean output (a changed model
  answers differently on D, so its stored values are not reused), beside code and library versions.

A run writes only under `outputs/runs/<name>/` and `data/runs/<name>/` (its stored evaluations under
`data/cache/store/assess/<name>.sqlite`): never into the committed tables of the embedded benchmarks.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.benchmark.problem import Benchmark
from pipeline.config.errors import ConfigError
from pipeline.runtime.fingerprint import digest, inputs_digest, stage_fingerprint
from pipeline.benchmark.live_evaluation import BenchmarkFactory
from pipeline.front.space import Space

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
CODE = ("pipeline.benchmark.build", "pipeline.benchmark.problem")  # what computes a configuration's values


def check_name(name: Any) -> str:
    """A run's name: a folder name of letters, digits, '.', '_' and '-'."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ConfigError("run", name, "a name for the run's folders: letters, digits, '.', '_' and '-', e.g. run=my-model")
    return name


@dataclass(frozen=True)
class Run:
    """Everything a user's run needs, resolved once (module docstring)."""

    name: str
    space: Space
    metrics: tuple[str, ...]            # the fidelity metrics φ, one search (and one front) each
    key: str                            # names the benchmark in each worker process
    factory: BenchmarkFactory           # builds the benchmark (picklable)
    fingerprint: str                    # everything an evaluation depends on (resume key)
    out_dir: Path                       # outputs/runs/<name>/
    data_dir: Path                      # data/runs/<name>/ (prepared assets)
    store: Path                         # data/cache/store/assess/<name>.sqlite (every evaluation, resumable)
    about: dict[str, Any] = field(default_factory=dict)  # model, data set, modality, levels, sources: for the page

    @property
    def jobs(self) -> Path:
        """submitit's job files (cluster executors)."""
        return self.store.with_suffix(".jobs")


def folders(name: str, outputs: Path, data: Path) -> dict[str, Path]:
    """The run's folders under the project's outputs and data folders."""
    name = check_name(name)
    return {"out_dir": outputs / "runs" / name, "data_dir": data / "runs" / name,
            "store": data / "cache" / "store" / "assess" / f"{name}.sqlite"}


def run_from_spec(spec: Mapping[str, Any], name: str, outputs: Path, data: Path, assets: str) -> Run:
    """The run of a config spec, whose assets (`prepare`'s folder `data/runs/<name>/`) digest to `assets`."""
    from pipeline.benchmark.build import build_benchmark
    from pipeline.benchmark.ground_truth import table_fingerprint
    from pipeline.benchmark.plugin_code import plugin_sources

    paths = folders(name, outputs, data)
    spec = {**dict(spec), "name": name}
    key = digest({"spec": spec, "data_dir": str(paths["data_dir"]), "per_input": True})
    factory = partial(build_benchmark, spec, paths["data_dir"], per_input=True)
    model, dataset = spec["model"], spec["dataset"]
    about = {"model": model.get("_target_") or model.get("name"), "model_name": model.get("name"),
             "data": dataset.get("_target_") or dataset.get("kind"), "modality": spec["modality"],
             "perturbations": list(spec["perturbations"]), "levels": int(spec["levels"]), "fidelity": list(spec["fidelity"]),
             "task_metric": spec.get("task_metric", "accuracy"), "seed": int(spec.get("seed", 0)),
             "sources": [str(p) for p in plugin_sources(spec)], "labels": perturbation_labels(spec["perturbations"])}
    return Run(name=name, space=Space(tuple(spec["perturbations"]), int(spec["levels"])), metrics=tuple(spec["fidelity"]),
               key=key, factory=factory, fingerprint=table_fingerprint({**spec, "per_input": True}, assets), about=about, **paths)



def perturbation_labels(perturbations: Sequence[str]) -> dict[str, str]:
    """What the page and the terminal call each perturbation: a plug-in's own `name` (its config string,
    `module:Class`, stays its key in the run's tables), a built-in's catalog name."""
    from pipeline.perturb.registry import get_perturbation

    return {p: str(getattr(get_perturbation(p), "label", None) or p) for p in perturbations}


def output_digest(model: Any, inputs: Any) -> str:
    """sha256 of the model's raw output on `inputs` (`predict_proba` where it has one, else `predict`): a changed
    model answers differently, so its stored values are not reused."""
    predict = getattr(model, "predict_proba", None)
    output = np.asarray(predict(inputs) if callable(predict) else model.predict(inputs))
    return hashlib.sha256(np.ascontiguousarray(output).tobytes()).hexdigest()


def _label(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def build_object_benchmark(model: Any, inputs: Any, labels: np.ndarray, spec: Mapping[str, Any], data_dir: Path) -> Benchmark:
    """The benchmark of a user's objects: the perturbations and fidelity metrics of `spec` by name (catalog
    names or `module:attribute` plug-ins), the model's predictions through its protocol."""
    from pipeline.benchmark.build import fidelity_metric
    from pipeline.benchmark.conformance import checked_predictions, conform_inputs
    from pipeline.perturb.registry import get_perturbation

    space = Space(tuple(spec["perturbations"]), int(spec["levels"]))
    perturbations = [get_perturbation(p) for p in space.names]
    inputs = conform_inputs(inputs, perturbations, spec.get("adapt_inputs"), key="perturbations", option="adapt_inputs")
    return Benchmark(name=str(spec["name"]), space=space, perturbations=perturbations, clean=inputs,
                     labels=np.asarray(labels, dtype=np.int64), predict=checked_predictions(model, labels, "model", _label(model)),
                     task_metric=_task_metric(spec), fidelity={m: fidelity_metric(m, inputs, dict(spec), data_dir) for m in spec["fidelity"]},
                     seed=int(spec.get("seed", 0)), per_input=True)


def _task_metric(spec: Mapping[str, Any]):
    from pipeline.benchmark.problem import get_task_metric

    return get_task_metric(spec.get("task_metric", "accuracy"))


def run_from_objects(model: Any, data: Any, perturbations: Sequence[str], fidelity: Sequence[str], name: str, outputs: Path,
                     data_root: Path, *, levels: int = 6, task_metric: str = "accuracy", seed: int = 0,
                     adapt_inputs: str | None = None) -> tuple[Run, Benchmark]:
    """The run of a model and a data set given as objects (`pipeline.plugins.protocols`: a Classifier or Predictor and a
    DataSet), with the benchmark built here once (its clean score, the checks of the first batch; images below
    what a perturbation needs adapted by `adapt_inputs`, 'pad' or 'resize', as `benchmark.adapt_inputs`)."""
    from pipeline.perturb.registry import get_perturbation
    from pipeline.benchmark.plugin_code import DATASET_PROTOCOLS, MODEL_PROTOCOLS, check_instance

    paths = folders(name, outputs, data_root)
    check_instance(model, {"_target_": _label(model)}, "model", MODEL_PROTOCOLS)
    check_instance(data, {"_target_": _label(data)}, "data", DATASET_PROTOCOLS)
    if not perturbations:
        raise ConfigError("perturbations", list(perturbations), "at least one perturbation (a catalog name or module:Class)")
    if not fidelity:
        raise ConfigError("fidelity", list(fidelity), "at least one fidelity metric (a catalog name or module:factory)")
    modalities = {get_perturbation(p).modality for p in perturbations}
    if len(modalities) != 1:
        raise ConfigError("perturbations", list(perturbations), f"perturbations of one modality (these are of {sorted(modalities)})")
    inputs, labels = data.test_set()
    labels = np.asarray(labels, dtype=np.int64)
    spec = {"name": name, "modality": modalities.pop(), "perturbations": list(perturbations), "levels": int(levels),
            "fidelity": list(fidelity), "task_metric": task_metric, "seed": int(seed), "device": "cpu", "adapt_inputs": adapt_inputs,
            "model": {"_target_": _label(model)}, "dataset": {"_target_": _label(data)}}
    paths["data_dir"].mkdir(parents=True, exist_ok=True)
    factory = partial(build_object_benchmark, model, inputs, labels, spec, paths["data_dir"])
    bench = factory()
    fingerprint = stage_fingerprint({"spec": {k: v for k, v in spec.items() if k not in ("model", "dataset")},
                                     "model": spec["model"], "data": inputs_digest(inputs, labels),
                                     "clean_output": output_digest(model, inputs)},
                                    CODE)
    about = {"model": spec["model"]["_target_"], "model_name": type(model).__name__, "data": spec["dataset"]["_target_"],
             "modality": spec["modality"], "perturbations": list(perturbations), "levels": int(levels), "fidelity": list(fidelity),
             "task_metric": task_metric, "seed": int(seed), "sources": [], "labels": perturbation_labels(perturbations)}
    run = Run(name=name, space=bench.space, metrics=tuple(fidelity), key=digest({"objects": fingerprint}), factory=factory,
              fingerprint=fingerprint, about=about, **paths)
    return run, bench


def pair_run(run: Run, baseline: Any, baseline_name: str, baseline_fingerprint: str) -> Run:
    """The comparison of `run`'s model B with a baseline A: `baseline` builds A's checked predictions from the
    labels in each worker (`pipeline.benchmark.pair`), and the fingerprint names both models."""
    from pipeline.benchmark.pair import build_pair

    fingerprint = digest({"pair": [run.fingerprint, baseline_fingerprint]})
    model = run.about.get("model_name") or run.about["model"]
    return replace(run, key=digest({"pair": [run.key, baseline_fingerprint]}), factory=partial(build_pair, run.factory, baseline),
                   fingerprint=fingerprint, about={**run.about, "model_label": model, "baseline": baseline_name})


def pair_run_from_spec(spec: Mapping[str, Any], baseline: Mapping[str, Any], name: str, outputs: Path, data: Path, assets: str,
                       baseline_dir: Path, baseline_assets: str) -> Run:
    """The comparison of a config spec's model B with the model config `baseline` (A) prepared in `baseline_dir`,
    whose assets digest to `baseline_assets`."""
    from pipeline.benchmark.pair import spec_baseline

    run = run_from_spec(spec, name, outputs, data, assets)
    baseline_spec = {**dict(spec), "model": dict(baseline)}
    pair = pair_run(run, partial(spec_baseline, baseline_spec, baseline_dir), model_label(baseline, spec["model"]),
                    digest({"model": dict(baseline), "assets": baseline_assets}))
    return replace(pair, about={**pair.about, "model_label": model_label(spec["model"], baseline)})


def model_label(model: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """A model config as the page names it: its `name`, with the keys where it differs from `other`'s (two versions
    of one model config differ only there), e.g. `fasttext_langid (max_input_length=40)`."""
    differ = [f"{k}={model.get(k)}" for k in sorted(set(model) | set(other)) if k != "device" and model.get(k) != other.get(k)]
    name = str(model.get("name") or model.get("_target_"))
    return f"{name} ({', '.join(differ)})" if differ and model.get("name") == other.get("name") else name


def pair_run_from_objects(model_a: Any, model_b: Any, data: Any, perturbations: Sequence[str], fidelity: Sequence[str], name: str,
                          outputs: Path, data_root: Path, *, levels: int = 6, seed: int = 0,
                          adapt_inputs: str | None = None) -> tuple[Run, Benchmark]:
    """The comparison of `model_b` with the baseline `model_a` on `data` (objects, as `run_from_objects`), with the
    pair's benchmark built here once."""
    from pipeline.benchmark.pair import object_baseline
    from pipeline.benchmark.plugin_code import MODEL_PROTOCOLS, check_instance

    check_instance(model_a, {"_target_": _label(model_a)}, "baseline", MODEL_PROTOCOLS)
    run, bench = run_from_objects(model_b, data, perturbations, fidelity, name, outputs, data_root, levels=levels,
                                  seed=seed, adapt_inputs=adapt_inputs)
    pair = pair_run(run, partial(object_baseline, model_a), type(model_a).__name__,
                    digest({"model": _label(model_a), "clean_output": output_digest(model_a, bench.clean)}))
    return pair, pair.factory()
