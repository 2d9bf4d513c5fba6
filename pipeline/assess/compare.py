"""A comparison of two models on the same perturbed inputs: did the new model B get less robust than the
baseline A, where, at what fidelity, and is it real or noise?

Both models answer on every slice of every configuration (`pipeline.benchmark.pair`: T_θ(x) is composed once,
both see the same bytes, the store keeps both answers). The search is the user's run's, on the pair's objectives
(Δ⁺, ρ) with Δ = δ_B − δ_A and Δ⁺ = max(Δ, 0): the recommended method finds the regression front (the
configurations where B loses most against A at each fidelity), racing both models over the inputs, and its
stopping rule reads the paired per-input outcomes. Every perturbation alone is evaluated first. Each configuration
completed on all n inputs is then judged by `pipeline.assess.regressions` (Δ with its paired bootstrap interval,
the discordant counts, significantly worse / better / tie, simultaneous over all of them). Racing stops early the
configurations where B is clearly no worse than the best regressions found, so the improvements it reports are
among those it completed; `assess.racing=false` completes every configuration the search proposes.

With `replay` (an earlier run's folder), no search: exactly that run's front and regressions are evaluated on the
pair (CheckList's saved tests, for a new model).

Everything goes under `outputs/runs/<name>/`: the page `index.html`, `regressions.csv`, `front.csv` (the
regression front with π), `summary.json` (the counts, the verdict, each model's cost), each metric's trace, the
figures (docs/outputs.md, "A comparison of two models").
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.assess.assess import Say, Settings, collected, confidence, proposed, settings_of
from pipeline.assess.live import evaluate_up_front, evaluator, live_oracle, search_metric, singletons
from pipeline.assess.regressions import CORRECTION, RESAMPLES, regression_table, verdict
from pipeline.assess.run import Run
from pipeline.runtime.worker_state import cached
from pipeline.benchmark.problem import Benchmark
from pipeline.config.errors import ConfigError
from pipeline.front.pareto import pareto_mask
from pipeline.front.space import Space
from pipeline.runtime.io import write_json, write_parquet
from pipeline.runtime.store import ResumeStore
from pipeline.search.racing.unit_outcomes import UnitRecorder

PAIRED = "paired_accuracy"
GALLERY = 8  # regressions shown with an input that A gets right and B wrong


@dataclass
class ComparisonResult:
    """A comparison: `regressions` (one row per configuration completed, `pipeline.assess.regressions`), `front`
    (the regression front of each metric with π), `summary` (what `summary.json` holds, the verdict included)."""

    regressions: pd.DataFrame
    front: pd.DataFrame
    summary: dict[str, Any]
    traces: dict[str, pd.DataFrame] = field(repr=False)
    gallery: list[dict[str, Any]] = field(repr=False)
    out_dir: Path | None = None

    @property
    def regression(self) -> bool:
        """Whether B is significantly worse than A somewhere in the gate's scope (`summary['verdict']`)."""
        return bool(self.summary["verdict"]["regression"])

    def to_html(self, path: str | Path) -> Path:
        """Write the comparison's page (`pipeline.report.compare_page`); figures are read from the run's folder."""
        from pipeline.report.compare_page import render_comparison_page
        from pipeline.runtime.io import atomic_path

        path = Path(path)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(render_comparison_page(self), encoding="utf-8")
        return path

    def terminal(self, top: int) -> str:
        """The short summary printed at the end of a comparison, the verdict last."""
        s = self.summary
        lines = [f"comparison {s['run']}: {s['model']} (B) against {s['baseline']} (A) on {s['data']} ({s['n_inputs']:,} inputs)",
                 f"clean accuracy: A {s['clean_accuracy']['baseline']:.4f}, B {s['clean_accuracy']['model']:.4f}",
                 f"{s['configurations_completed']:,} configurations completed: B significantly worse at {s['significant']['worse']}, "
                 f"better at {s['significant']['better']}, a tie at {s['significant']['tie']} (simultaneous, {s['level']:.0%})"]
        worst = self.regressions.sort_values("Delta", ascending=False, kind="stable").head(top)
        for _, r in worst.iterrows():
            lines.append(f"    Δ {r['Delta']:+.3f} [{r['Delta_lo']:+.3f}, {r['Delta_hi']:+.3f}]  {r['verdict']:<6}  "
                         f"A-only {int(r['a_only'])}, B-only {int(r['b_only'])}  {r['theta']}")
        cost = s["model_evaluations"]
        lines.append(f"cost: {cost['baseline']:,} model evaluations of each model ({100 * s['share_of_exhaustive']:.1f}% of the "
                     f"exhaustive {s['exhaustive_model_evaluations']:,}), {s['wall_seconds']:.0f} s")
        if self.out_dir is not None:
            lines.append(f"page: {self.out_dir / 'index.html'}")
        lines.append(s["verdict"]["line"])
        return "\n".join(lines)


def replayed(folder: str | Path, space: Space) -> np.ndarray:
    """The configurations of an earlier run's `front.csv` and `regressions.csv` (those present), distinct, in Θ's
    order; its perturbations and levels must be this run's."""
    folder = Path(folder)
    files = [folder / f for f in ("front.csv", "regressions.csv") if (folder / f).is_file()]
    if not files:
        raise ConfigError("assess.replay", str(folder), "the folder of an earlier run, holding its front.csv or regressions.csv")
    names = list(space.names)
    thetas = []
    for path in files:
        frame = pd.read_csv(path)
        missing = [n for n in names if n not in frame]
        if missing:
            raise ConfigError("assess.replay", str(path), f"a run over the same perturbations ({', '.join(names)}); it lacks {', '.join(missing)}")
        thetas.append(frame[names].to_numpy(dtype=np.int64))
    grid = np.unique(np.concatenate(thetas), axis=0)
    if len(grid) and (grid.min() < 0 or grid.max() >= space.levels):
        raise ConfigError("assess.replay", str(folder), f"configurations with levels 0..{space.levels - 1}")
    return grid


def execute_comparison(run: Run, bench: Benchmark, settings: Settings, say: Say = print) -> ComparisonResult:
    """Search, judge and write the comparison of the pair `bench` (`pipeline.benchmark.pair`; module docstring)."""
    started = time.perf_counter()
    labels, n = np.asarray(bench.labels), len(bench.labels)
    clean = np.asarray(bench.predict(bench.clean))
    correct_clean = clean == labels[:, None]
    say(f"clean accuracy on {n:,} inputs: baseline A {correct_clean[:, 0].mean():.4f}, B {correct_clean[:, 1].mean():.4f}; "
        + (f"replaying {settings.replay}" if settings.replay else
           f"searching {run.space.size:,} configurations for B's regressions with {settings.method}, q = {settings.batch_size} a round"))
    cached(run.key, lambda: bench)
    first = replayed(settings.replay, run.space) if settings.replay else singletons(run.space)
    budget = int(settings.budget) if settings.budget else 5 * run.space.size
    run.store.parent.mkdir(parents=True, exist_ok=True)
    with ResumeStore(run.store) as store, evaluator(run, store, executor=settings.executor, submitit=settings.submitit,
                                                    workers=min(settings.batch_size, settings.workers)) as evaluate:
        racing = None if not settings.racing else {"labels": labels, "clean_score": bench.clean_score, "seed": settings.seed,
                                                   "task_metric": PAIRED}
        oracles = {m: live_oracle(run, evaluate, m, UnitRecorder(run.space, labels, clean, PAIRED, m, settings.seed), racing)
                   for m in run.metrics}
        evaluate_up_front(oracles, first)
        traces = {} if settings.replay else {m: search_metric(run, oracles[m], m, settings, budget, say) for m in run.metrics}
        values, seen, spent = collected(oracles, evaluate, traces, first, run.space, n, racing is not None)
        tried = sorted({*proposed(traces, run.space), *seen})
    predictions = np.array([values[t]["prediction"] for t in seen]).reshape(len(seen), n, 2)
    correct = predictions == labels[None, :, None]
    table = regressions_frame(run, seen, values, correct, correct_clean, labels, settings)
    membership = {m: confidence(values, seen, labels, clean, m, settings.seed, task_metric=PAIRED) for m in run.metrics}
    front = regression_front(table, membership, run)
    regression, line = verdict(table, settings.min_fidelity, run.metrics, settings.tolerance, settings.level)
    summary = {
        "run": run.name, "model": run.about["model_label"], "baseline": run.about["baseline"], "data": run.about["data"],
        "modality": run.about["modality"], "n_inputs": n, "task_metric": run.about["task_metric"],
        "clean_accuracy": {"baseline": float(correct_clean[:, 0].mean()), "model": float(correct_clean[:, 1].mean())},
        "perturbations": list(run.space.names), "labels": dict(run.about["labels"]), "levels": run.space.levels,
        "space_size": run.space.size, "method": None if settings.replay else settings.method, "replay": settings.replay,
        "racing": racing is not None, "batch_size": settings.batch_size, "stop_at_recall": settings.stop_at_recall,
        "configurations_evaluated": len(tried), "configurations_completed": len(seen),
        "significant": {k: int((table["verdict"] == k).sum()) for k in ("worse", "better", "tie")},
        "correction": CORRECTION, "resamples": RESAMPLES, "level": settings.level, "tolerance": settings.tolerance,
        "min_fidelity": settings.min_fidelity, "verdict": {"regression": regression, "line": line},
        "model_evaluations": {"baseline": spent, "model": spent, "both": 2 * spent},
        "exhaustive_model_evaluations": run.space.size * n, "share_of_exhaustive": spent / (run.space.size * n),
        "full_evaluation_cost": len(tried) * n, "computed_now": evaluate.inputs_evaluated + evaluate.evaluated * n,
        "metrics": {m: _metric_summary(traces.get(m), front, m, budget, run.space.size, settings) for m in run.metrics},
        "wall_seconds": round(time.perf_counter() - started, 1), "sources": run.about.get("sources", []),
    }
    result = ComparisonResult(regressions=table, front=front, summary=summary, traces=traces,
                              gallery=regression_gallery(bench, table, values, correct, seen, run, settings.min_fidelity),
                              out_dir=run.out_dir)
    write_comparison(result, run)
    say(result.terminal(settings.top))
    return result


def regressions_frame(run: Run, seen: Sequence[tuple[int, ...]], values: Mapping[tuple[int, ...], Mapping[str, Any]],
                      correct: np.ndarray, correct_clean: np.ndarray, labels: np.ndarray, settings: Settings) -> pd.DataFrame:
    """`regressions.csv`: θ's levels and active perturbations, every ρ, then `regression_table`'s columns, largest Δ first."""
    from pipeline.report.run_page import active

    levels = pd.DataFrame(list(seen), columns=list(run.space.names))
    head = levels.assign(theta=[active(r, list(run.space.names), run.about["labels"]) for _, r in levels.iterrows()],
                         order=(levels.to_numpy() > 0).sum(axis=1))
    for m in run.metrics:
        head[f"rho_{m}"] = [float(values[t][f"rho_{m}"]) for t in seen]
    judged = regression_table(correct[..., 0], correct[..., 1], correct_clean[:, 0], correct_clean[:, 1],
                              level=settings.level, tolerance=settings.tolerance, seed=settings.seed)
    return pd.concat([head, judged], axis=1).sort_values(["Delta", "order"], ascending=[False, True], kind="stable").reset_index(drop=True)


def regression_front(table: pd.DataFrame, membership: Mapping[str, pd.DataFrame | None], run: Run) -> pd.DataFrame:
    """The regression front of each metric: the completed configurations no other beats on both Δ⁺ and ρ, with π
    (the share of bootstrap resamples of the inputs that keep them there) and their set (core, plausible)."""
    names = list(run.space.names)
    rows = []
    for m, frame in membership.items():
        by_theta = {tuple(t): r for t, r in zip(frame["theta"], frame.itertuples())} if frame is not None else {}
        points = np.column_stack([np.maximum(table["Delta"].to_numpy(), 0.0), table[f"rho_{m}"].to_numpy()])
        for (_, r), on in zip(table.iterrows(), pareto_mask(points)):
            if on:
                member = by_theta.get(tuple(int(r[x]) for x in names))
                rows.append({"metric": m, **{x: int(r[x]) for x in names}, "theta": r["theta"], "order": int(r["order"]),
                             "Delta": r["Delta"], "Delta_lo": r["Delta_lo"], "Delta_hi": r["Delta_hi"], "verdict": r["verdict"],
                             f"rho_{m}": r[f"rho_{m}"], "pi": member.pi if member is not None else np.nan,
                             "set": member.set if member is not None else ""})
    front = pd.DataFrame(rows)
    return front.sort_values(["metric", "Delta"], ascending=[True, False], kind="stable").reset_index(drop=True) if len(front) else front


def _metric_summary(trace: pd.DataFrame | None, front: pd.DataFrame, metric: str, budget: int, size: int,
                    settings: Settings) -> dict[str, Any]:
    from pipeline.assess.result import stop_reason

    rows = front[front["metric"] == metric] if len(front) else front
    out: dict[str, Any] = {"front": len(rows), "core": int((rows["set"] == "core").sum()) if len(rows) else 0}
    if trace is not None:
        out.update(evaluated=int(trace["u"].iloc[-1]), rounds=int(trace["round"].iloc[-1]),
                   est_core=float(trace["est_core"].iloc[-1]) if "est_core" in trace else None,
                   stopped=stop_reason(trace, budget, size, settings.stop_at_recall))
    return out


def regression_gallery(bench: Benchmark, table: pd.DataFrame, values: Mapping[tuple[int, ...], Mapping[str, Any]],
                       correct: np.ndarray, seen: Sequence[tuple[int, ...]], run: Run, floor: Any) -> list[dict[str, Any]]:
    """For the worst regressions (significantly worse first, then by Δ) in the gate's scope: the first input that A gets
    right and B wrong under that θ, clean and perturbed, with both models' answers."""
    from pipeline.assess.regressions import in_scope
    from pipeline.perturb.compose import compose

    index = {t: k for k, t in enumerate(seen)}
    names = list(run.space.names)
    scoped = table[in_scope(table, floor, run.metrics) & (table["a_only"] > 0).to_numpy()]
    scoped = scoped.assign(_worse=scoped["verdict"] == "worse").sort_values(["_worse", "Delta"], ascending=False, kind="stable")
    entries = []
    for _, r in scoped.head(GALLERY).iterrows():
        theta = tuple(int(r[x]) for x in names)
        k = index[theta]
        i = int(np.flatnonzero(correct[k, :, 0] & ~correct[k, :, 1])[0])
        clean = bench.clean[i:i + 1] if isinstance(bench.clean, np.ndarray) else [bench.clean[i]]
        perturbed = compose(bench.perturbations, clean, theta, bench.seed, [i])[0]
        answers = values[theta]["prediction"][i]
        entries.append({"theta": r["theta"], "input": i, "label": int(bench.labels[i]), "clean": clean[0], "item": perturbed,
                        "baseline_answer": int(answers[0]), "model_answer": int(answers[1]), "Delta": float(r["Delta"]),
                        "verdict": r["verdict"]})
    return entries


def write_comparison(result: ComparisonResult, run: Run) -> None:
    """The comparison's files (module docstring), each written atomically; the page last."""
    from pipeline.figures.compare import plot_compared_fronts, plot_regressions
    from pipeline.figures.run import plot_progress
    from pipeline.figures.save import save_png
    from pipeline.runtime.io import atomic_path

    out = run.out_dir
    for m, trace in result.traces.items():
        write_parquet(trace, out / f"{m}.trace.parquet")
    for name, frame in (("regressions.csv", result.regressions), ("front.csv", result.front)):
        with atomic_path(out / name) as tmp:
            frame.to_csv(tmp, index=False)
    write_json(result.summary, out / "summary.json")
    fronts = model_fronts(result.regressions, run.metrics, result.summary["clean_accuracy"])
    save_png(plot_compared_fronts(fronts, run.metrics), out / "figures" / "fronts.png")
    save_png(plot_regressions(result.regressions, run.metrics), out / "figures" / "regressions.png")
    if result.traces:
        save_png(plot_progress(result.traces), out / "figures" / "progress.png")
    result.to_html(out / "index.html")


def model_fronts(table: pd.DataFrame, metrics: Sequence[str], clean: Mapping[str, float]) -> dict[str, pd.DataFrame]:
    """Each model's own (δ, ρ) front among the configurations the comparison completed, per metric: the rows of
    `table` with `model` ("baseline" or "model"), δ (TestNav Eq. 1, clamped at 0) and `on_front`."""
    out = {}
    for m in metrics:
        parts = []
        for who, column in (("baseline", "delta_a"), ("model", "delta_b")):
            delta = np.maximum(table[column].to_numpy(), 0.0)
            rho = table[f"rho_{m}"].to_numpy()
            parts.append(pd.DataFrame({"model": who, "delta": delta, "rho": rho,
                                       "on_front": pareto_mask(np.column_stack([delta, rho]))}))
        out[m] = pd.concat(parts, ignore_index=True)
    return out


def compare(model_a: Any, model_b: Any, data: Any, *, perturbations: Sequence[str], fidelity: Sequence[str], name: str,
            levels: int = 6, adapt_inputs: str | None = None, outputs: str | Path = "outputs", data_root: str | Path = "data",
            say: Say = print, **settings: Any) -> ComparisonResult:
    """Compare the new model `model_b` with the baseline `model_a` (each a Classifier or Predictor) on `data`
    (`test_set() -> (inputs, labels)`) under every composition of `perturbations` with `fidelity` metrics: the
    comparison's files and page under `<outputs>/runs/<name>/` (module docstring). `settings` are `Settings`' fields
    (e.g. tolerance=0.02, min_fidelity=0.8, executor="serial", replay="outputs/runs/earlier")."""
    from pipeline.assess.run import pair_run_from_objects

    chosen = settings_of(settings)
    run, bench = pair_run_from_objects(model_a, model_b, data, perturbations, fidelity, name, Path(outputs), Path(data_root),
                                       levels=levels, seed=chosen.seed, adapt_inputs=adapt_inputs)
    return execute_comparison(run, bench, chosen, say)
