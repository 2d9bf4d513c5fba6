"""A user's run from a model and a data set to a page: the clean score, live search with the recommended
method and its stopping rule (q configurations a round, in parallel, resumable), the run's figures, its
files and its page. `assess` is the Python entry (objects, no YAML); `scripts/assess.py` the shell's
(a Hydra app over conf/, the same overrides as every stage); both end in `execute`.

Everything goes under `outputs/runs/<name>/`: the page `index.html`, `front.csv`, `summary.json`, each metric's trace and
ranking R, the figures, and with `exhaustive` the ground truth (each file: docs/outputs.md, "A user's run").
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.assess.live import evaluate_all, evaluate_up_front, evaluator, live_oracle, search_metric, singletons
from pipeline.assess.result import AssessResult, effect_alone, front_table, stop_reason
from pipeline.assess.run import Run, run_from_objects
from pipeline.benchmark.problem import Benchmark
from pipeline.config.errors import ConfigError
from pipeline.runtime.io import write_json, write_parquet
from pipeline.runtime.numerics import n_workers
from pipeline.benchmark.live_evaluation import EXECUTORS
from pipeline.search import rank_evaluated
from pipeline.search.racing.unit_outcomes import UnitRecorder
from pipeline.runtime.store import ResumeStore
from pipeline.runtime.worker_state import cached

Say = Callable[[str], None]
FAIL_ON = (None, "regression")


@dataclass(frozen=True)
class Settings:
    """How a run searches and reports (`assess` in conf/config.yaml and `search.live` for the search)."""

    method: str = "pnd"                   # the recommended method (search.recommended)
    batch_size: int = 4                   # q configurations a round (search.live.batch_size)
    executor: str = "processes"           # search.live.executor
    workers: int = 1                      # processes a round is split over (at most q; 0: every core)
    stop_at_recall: float | None = 0.95   # the stopping rule (search.live.stop_at_recall)
    budget: int | None = None             # proposals B; None = 5·|Θ| (search.budget_factor)
    seed: int = 0
    exhaustive: bool = False              # also evaluate all of Θ and score the search against P*
    racing: bool = True                   # race configurations over the inputs (accuracy tasks; pipeline.search.racing.racing)
    min_fidelity: float | None = None     # "what breaks it": front members with ρ ≥ this (None: the front's median ρ)
    top: int = 5                          # how many of them the terminal lists
    submitit: Mapping[str, Any] | None = None
    hyperparameters: Mapping[str, Any] | None = None  # the method's own (beyond the stopping rule)
    # a comparison of two models (pipeline.assess.compare) also reads these
    tolerance: float = 0.0                # Δ a regression must exceed (pipeline.assess.regressions)
    level: float = 0.95                   # the confidence of its verdicts, simultaneous over the configurations
    fail_on: str | None = None            # "regression": scripts/assess.py exits 1 when the verdict is one
    replay: str | None = None             # an earlier run's folder: evaluate exactly its front and regressions, no search

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ConfigError("search.live.executor", self.executor, f"one of {', '.join(EXECUTORS)}")
        if self.fail_on not in FAIL_ON:
            raise ConfigError("assess.fail_on", self.fail_on, "null or regression")
        if not 0.0 < float(self.level) < 1.0:
            raise ConfigError("assess.level", self.level, "a confidence strictly between 0 and 1, e.g. 0.95")
        if float(self.tolerance) < 0:
            raise ConfigError("assess.tolerance", self.tolerance, "a difference of accuracy of at least 0, e.g. 0.02")
        if int(self.workers) < 0:
            raise ConfigError("workers", self.workers, "0 (every core) or a whole number of processes")
        object.__setattr__(self, "workers", n_workers(int(self.workers)))
        for key, value in (("search.live.batch_size", self.batch_size), ("assess.top", self.top)):
            if int(value) < 1:
                raise ConfigError(key, value, "a whole number of at least 1")


def settings_of(settings: Mapping[str, Any]) -> Settings:
    """`Settings` from the keyword arguments of `assess` or `compare`; an unknown name refused with the valid ones."""
    unknown = sorted(set(settings) - set(Settings.__dataclass_fields__))
    if unknown:
        raise ConfigError(unknown[0], settings[unknown[0]], f"a setting of pipeline.assess.Settings: {', '.join(Settings.__dataclass_fields__)}")
    return Settings(**settings)


def execute(run: Run, bench: Benchmark, settings: Settings, say: Say = print) -> AssessResult:
    """Search the run live for every metric, write its files and page (module docstring), return the result.
    `bench` is the run's benchmark built in this process (the clean score, the gallery; a serial executor
    evaluates with it)."""
    started = time.perf_counter()
    n = len(bench.labels)
    say(f"clean {run.about['task_metric']}: {bench.clean_score:.4f} on {n:,} inputs; searching {run.space.size:,} "
        f"configurations of {', '.join(run.space.names)} with {settings.method}, q = {settings.batch_size} a round")
    cached(run.key, lambda: bench)  # kept here: the serial executor (and a single chunk) evaluates in this process
    budget = int(settings.budget) if settings.budget else 5 * run.space.size
    run.store.parent.mkdir(parents=True, exist_ok=True)
    with ResumeStore(run.store) as store, evaluator(run, store, executor=settings.executor, submitit=settings.submitit,
                                                    workers=min(settings.batch_size, settings.workers)) as evaluate:
        clean = np.asarray(bench.predict(bench.clean)) if run.about["task_metric"] == "accuracy" else None
        racing = None if clean is None or not settings.racing else {
            "labels": bench.labels, "clean_score": bench.clean_score, "seed": settings.seed}
        oracles = {m: live_oracle(run, evaluate, m, None if clean is None else
                                  UnitRecorder(run.space, bench.labels, clean, "accuracy", m, settings.seed), racing)
                   for m in run.metrics}
        first = singletons(run.space)  # every perturbation alone: the page's table, the race's first rivals
        evaluate_up_front(oracles, first)
        traces = {m: search_metric(run, oracles[m], m, settings, budget, say) for m in run.metrics}
        ranked = {m: rank_evaluated(t, run.space) for m, t in traces.items()}
        values, seen, spent = collected(oracles, evaluate, traces, first, run.space, n, racing is not None)
        table = evaluate_all(run, evaluate, max(settings.batch_size, 36), say) if settings.exhaustive else None
    membership = {m: confidence(values, seen, bench.labels, clean, m, settings.seed) for m in run.metrics}
    front = with_confidence(front_table(ranked, values, run.space, run.metrics), membership, run.space)
    summary = _summary(run, bench, settings, traces, ranked, seen, spent, budget, evaluate, time.perf_counter() - started,
                       table, racing is not None)
    for m, frame in membership.items():
        if frame is not None:
            summary["metrics"][m].update(confidence_counts(frame))
    result = AssessResult(front=front, summary=summary, traces=traces, ranked=ranked, alone=effect_alone(values, run.space, run.about["labels"]),
                          gallery=_gallery(bench, front, run), groundtruth=table, out_dir=run.out_dir)
    write(result, run)
    say(result.terminal(settings.top))
    return result


def collected(oracles: Mapping[str, Any], evaluate, traces: Mapping[str, pd.DataFrame], first: np.ndarray, space, n: int,
              raced: bool) -> tuple[dict[tuple[int, ...], dict[str, Any]], list[tuple[int, ...]], int]:
    """(values, seen, model evaluations spent) of a run's searches and the configurations `first` evaluated before them:
    with racing, the configurations some race completed (those stopped early have estimates in their trace only) and
    the distinct (configuration, input) pairs the races paid; without, every configuration evaluated (the store
    answers), n inputs each."""
    if raced:
        values = {t: v for o in oracles.values() for t, v in o.values.items()}
        return values, sorted(values), len(set().union(*(o.spent_pairs() for o in oracles.values())))
    seen = sorted({*proposed(traces, space), *map(tuple, np.asarray(first).tolist())})
    return dict(zip(seen, evaluate(seen))), seen, len(seen) * n


def proposed(traces: Mapping[str, pd.DataFrame], space) -> list[tuple[int, ...]]:
    """Every configuration some search of the run evaluated (completed or stopped early by racing), in order."""
    return sorted({tuple(int(v) for v in row) for t in traces.values()
                   for row in t.loc[t["is_new"].to_numpy(dtype=bool), list(space.names)].to_numpy()})


def confidence(values: Mapping[tuple[int, ...], Mapping[str, Any]], seen: Sequence[tuple[int, ...]], labels: np.ndarray,
               clean_predictions: np.ndarray | None, metric: str, seed: int, resamples: int = 1000,
               task_metric: str = "accuracy") -> pd.DataFrame | None:
    """Membership of the front among the evaluated configurations with confidence: the paired,
    label-stratified bootstrap of `pipeline.front.membership` over the inputs' outcomes, with ρ resampled where
    the metric is a mean of per-input values (SSIM, BERT-F1) and held fixed where it is a set statistic (chrF's
    corpus score, KID). One row per evaluated θ (in `seen`'s order): π, the interval of δ, core / plausible /
    out. None without `clean_predictions`, which the run has only where the task metric is accuracy (the outcome
    of an input is otherwise not its correctness; a comparison's, `paired_accuracy`, is B's correctness minus A's)."""
    from pipeline.front.membership import bootstrap_membership
    from pipeline.front.per_input import input_scores

    if clean_predictions is None or not seen or "prediction" not in values[seen[0]]:
        return None
    outcomes = input_scores(np.array([values[t]["prediction"] for t in seen]), labels, task_metric)
    clean = input_scores(np.asarray(clean_predictions), labels, task_metric)
    key = f"rho_{metric}_inputs"
    fidelity = np.array([values[t][key] if key in values[t] else values[t][f"rho_{metric}"] for t in seen])
    frame = bootstrap_membership(outcomes, clean, fidelity, strata=labels, B=resamples, seed=seed)
    frame.insert(0, "theta", list(seen))
    frame.attrs["resampled_fidelity"] = fidelity.ndim == 2
    return frame


def with_confidence(front: pd.DataFrame, membership: Mapping[str, pd.DataFrame | None], space) -> pd.DataFrame:
    """`front` with each member's π on its metric's front and the interval of its δ (`confidence`)."""
    if front.empty or all(m is None for m in membership.values()):
        return front
    out = front.copy()
    rows = {(m, t): r for m, frame in membership.items() if frame is not None for t, r in zip(frame["theta"], frame.itertuples())}
    thetas = [tuple(int(r[n]) for n in space.names) for _, r in front.iterrows()]
    found = [rows.get((m, t)) for m, t in zip(front["metric"], thetas)]
    out["pi"] = [r.pi if r is not None else np.nan for r in found]
    out["delta_lo"] = [r.delta_lo if r is not None else np.nan for r in found]
    out["delta_hi"] = [r.delta_hi if r is not None else np.nan for r in found]
    out["set"] = [r.set if r is not None else "" for r in found]
    return out


def confidence_counts(frame: pd.DataFrame) -> dict[str, Any]:
    """How many front members the data support: the core (π ≥ 0.95) and the plausible set (π ≥ 0.05)."""
    return {"core": int((frame["set"] == "core").sum()), "plausible": int((frame["set"] != "out").sum()),
            "front_in_core": int(((frame["set"] == "core") & frame["on_front"]).sum()),
            "fidelity_resampled": bool(frame.attrs.get("resampled_fidelity", False))}


def _summary(run: Run, bench: Benchmark, settings: Settings, traces, ranked, seen, spent: int, budget: int, evaluate,
             wall: float, table, raced: bool) -> dict[str, Any]:
    n = len(bench.labels)
    metrics = {}
    for m, t in traces.items():
        estimate = float(t["est_recall"].iloc[-1]) if "est_recall" in t else None
        core = float(t["est_core"].iloc[-1]) if "est_core" in t else None
        metrics[m] = {"front": int((ranked[m]["rank"] == 0).sum()), "evaluated": int(t["u"].iloc[-1]), "proposals": len(t),
                      "rounds": int(t["round"].iloc[-1]), "est_recall": estimate, "est_core": core,
                      "stopped": stop_reason(t, budget, run.space.size, settings.stop_at_recall)}
        if "evaluations" in t:
            metrics[m].update(model_evaluations=int(t["evaluations"].iloc[-1]), completed=int((t["inputs"] == n).sum()))
    tried = sorted({*proposed(traces, run.space), *seen})
    summary = {"run": run.name, "model": run.about["model"], "data": run.about["data"], "modality": run.about["modality"],
               "n_inputs": n, "task_metric": run.about["task_metric"], "clean_score": float(bench.clean_score),
               "perturbations": list(run.space.names), "labels": dict(run.about["labels"]), "levels": run.space.levels, "space_size": run.space.size,
               "method": settings.method, "batch_size": settings.batch_size, "stop_at_recall": settings.stop_at_recall,
               "min_fidelity": settings.min_fidelity, "racing": raced, "metrics": metrics,
               "configurations_evaluated": len(tried), "configurations_completed": len(seen),
               "model_evaluations": spent, "exhaustive_model_evaluations": run.space.size * n,
               "share_of_exhaustive": spent / (run.space.size * n), "full_evaluation_cost": len(tried) * n,
               "saved_by_racing": len(tried) * n - spent,
               "computed_now": evaluate.inputs_evaluated + evaluate.evaluated * n,
               "wall_seconds": round(wall, 1),
               "compute_seconds": {k.removeprefix("seconds_"): round(v, 1) for k, v in sorted(evaluate.seconds.items())},
               "sources": run.about.get("sources", [])}
    if table is not None:
        summary["exhaustive"] = {}
        for m in run.metrics:
            pareto = {tuple(int(v) for v in row) for row in table.loc[table[f"pareto_{m}"], list(run.space.names)].to_numpy()}
            front = {tuple(int(r[x]) for x in run.space.names) for _, r in ranked[m][ranked[m]["rank"] == 0].iterrows()}
            found = len(pareto & front)
            summary["exhaustive"][m] = {"pareto": len(pareto), "found": found, "recall": found / len(pareto) if pareto else 1.0}
    return summary


def _gallery(bench: Benchmark, front, run: Run, index: int = 0) -> dict[str, Any]:
    """Input `index` of the clean set under every front member (the union over metrics), for the page."""
    from pipeline.perturb.compose import compose

    thetas = sorted({tuple(int(r[n]) for n in run.space.names) for _, r in front.iterrows()},
                    key=lambda t: (sum(v > 0 for v in t), t))
    clean = bench.clean[index:index + 1] if isinstance(bench.clean, np.ndarray) else [bench.clean[index]]
    items = [compose(bench.perturbations, clean, t, bench.seed)[0] for t in thetas]
    return {"thetas": thetas, "items": items, "clean": clean[0], "label": int(bench.labels[index])}


def write(result: AssessResult, run: Run) -> None:
    """The run's files (module docstring), each written atomically; the page last."""
    from pipeline.figures.run import plot_effect_alone, plot_progress, plot_run_fronts
    from pipeline.figures.save import save_png
    from pipeline.runtime.io import atomic_path

    out = run.out_dir
    for m in run.metrics:
        write_parquet(result.traces[m], out / f"{m}.trace.parquet")
        write_parquet(result.ranked[m], out / f"{m}.ranked.parquet")
    with atomic_path(out / "front.csv") as tmp:
        result.front.to_csv(tmp, index=False)
    if result.groundtruth is not None:
        write_parquet(result.groundtruth, out / "groundtruth.parquet")
    write_json(result.summary, out / "summary.json")
    save_png(plot_run_fronts(result.ranked, result.summary["clean_score"]), out / "figures" / "fronts.png")
    if len(result.alone):
        save_png(plot_effect_alone(result.alone, result.summary["clean_score"]), out / "figures" / "alone.png")
    save_png(plot_progress(result.traces), out / "figures" / "progress.png")
    result.to_html(out / "index.html")


def assess(model: Any, data: Any, *, perturbations: Sequence[str], fidelity: Sequence[str], name: str, levels: int = 6,
           task_metric: str = "accuracy", adapt_inputs: str | None = None, outputs: str | Path = "outputs",
           data_root: str | Path = "data", say: Say = print, **settings: Any) -> AssessResult:
    """Test `model` (`predict_proba(inputs) -> (n, classes)` or `predict(inputs) -> (n,)`) on `data`
    (`test_set() -> (inputs, labels)`) under every composition of `perturbations` (catalog names or
    `module:Class` plug-ins) at `levels` levels, with `fidelity` metrics (catalog names or `module:factory`):
    the run's files and page under `<outputs>/runs/<name>/`. Images smaller than a perturbation needs are refused
    unless `adapt_inputs` is 'pad' or 'resize'. `settings` are `Settings`' fields (e.g. batch_size=8,
    executor="serial", exhaustive=True)."""
    chosen = settings_of(settings)
    run, bench = run_from_objects(model, data, perturbations, fidelity, name, Path(outputs), Path(data_root), levels=levels,
                                  task_metric=task_metric, seed=chosen.seed, adapt_inputs=adapt_inputs)
    return execute(run, bench, chosen, say)
