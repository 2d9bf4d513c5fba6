"""Figures of a structural fuzzing report (chapter 9), rendered from the report alone.

- the ω distribution with mean, P75, P95 and CVaR marked (§9.2, exercise 9.5);
- the sensitivity profile as a bar chart (§9.3);
- the adversarial thresholds as a Markdown table (§9.4, the layout of §9.6.3);
- the three-objective frontier (active dimensions, error, MRI) (§9.5.3, exercise 9.6).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from pipeline.figures.save import save_png  # noqa: E402
from pipeline.fuzz.report import StructuralFuzzReport  # noqa: E402
from pipeline.runtime.io import write_text  # noqa: E402


def _save(fig: plt.Figure, path: str | Path) -> Path:
    return save_png(fig, path, dpi=130, bbox_inches="tight")


def plot_omega_distribution(report: StructuralFuzzReport, path: str | Path) -> Path:
    """Histogram of ω = |error_pert − error_base| with mean, P75, P95, CVaR and the MRI."""
    m = report.mri_result
    if m is None:
        raise ValueError("the report has no MRI result to plot")
    omegas = m.omegas
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.hist(omegas, bins=min(40, max(10, len(omegas) // 8)), color="#9bb7d4", edgecolor="white")
    marks = [("mean", m.mean_omega, "#1b4f72", "-"), ("P75", m.p75_omega, "#b9770e", "--"),
             ("P95", m.p95_omega, "#a93226", "--"), (f"CVaR$_{{{m.cvar_alpha:g}}}$", m.cvar_omega, "#6c3483", ":")]
    for label, value, color, style in marks:
        ax.axvline(value, color=color, linestyle=style, linewidth=1.6, label=f"{label} = {value:.3g}")
    ax.set_xlabel(f"ω = |{report.error_name} perturbed − {report.error_name} base|")
    ax.set_ylabel("perturbations")
    ax.set_title(f"MRI = {m.mri:.3g}  (N = {m.n_perturbations}, σ = {m.scale:g}, base {report.error_name} = {m.base_mae:.3g})")
    ax.legend(frameon=False, fontsize=8)
    return _save(fig, path)


def plot_sensitivity(report: StructuralFuzzReport, path: str | Path) -> Path:
    """Δ_i per dimension, rank 1 on top; negative Δ (removing the dimension helps) in red."""
    rows = sorted(report.sensitivity_results, key=lambda r: r.importance_rank)
    if not rows:
        raise ValueError("the report has no sensitivity results to plot")
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    deltas = [r.delta_mae for r in rows]
    ax.barh(y, deltas, color=["#c0392b" if d < 0 else "#2e86c1" for d in deltas])
    ax.set_yticks(y, [f"{r.importance_rank}. {r.dim_name}" for r in rows])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"Δ {report.error_name} with the dimension inactive")
    ax.set_title("Sensitivity profile (ablation at the operating point)")
    return _save(fig, path)


def threshold_table(report: StructuralFuzzReport) -> str:
    """Markdown table of tipping points per dimension and direction ('none' where the scan found none)."""
    tol = report.settings.get("adversarial_tolerance")
    lines = [f"Adversarial thresholds (tolerance {tol} in {report.error_name} per target)", "",
             "| Dimension | Direction | Base value | Threshold value | Ratio | Target flipped | Δ target |",
             "|---|---|---|---|---|---|---|"]
    bases = dict(zip(report.dim_names, report.operating_point or [float("nan")] * len(report.dim_names)))
    for name, direction, a in report.threshold_rows():
        if direction is None:
            lines.append(f"| {name} | — | {bases[name]:.4g} | skipped (not positive) | | | |")
        elif a is None:
            lines.append(f"| {name} | {direction} | {bases[name]:.4g} | none in range | | | |")
        else:
            lines.append(f"| {name} | {direction} | {a.base_value:.4g} | {a.threshold_value:.4g} | "
                         f"{a.threshold_ratio:.3g} | {a.target_flipped} | {a.target_delta:+.3g} |")
    return "\n".join(lines) + "\n"


def plot_frontier(report: StructuralFuzzReport, path: str | Path) -> Path:
    """The configurations in (active dimensions, error, MRI), marking both frontiers (exercise 9.6)."""
    pts = report.frontier
    if not pts:
        raise ValueError("the report has no frontier MRIs to plot (run the campaign with frontier='pareto' or 'all')")
    fig = plt.figure(figsize=(10.5, 4.2))
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    ax2 = fig.add_subplot(1, 2, 2)
    groups = [("dominated", lambda p: not p.three_objective, "#bbbbbb", "o"),
              ("3-objective frontier only", lambda p: p.three_objective and not p.two_objective, "#e67e22", "^"),
              ("2- and 3-objective frontier", lambda p: p.two_objective and p.three_objective, "#1f618d", "s")]
    for label, keep, color, marker in groups:
        sel = [p for p in pts if keep(p)]
        if not sel:
            continue
        n, e, r = (np.array([getattr(p, k) for p in sel]) for k in ("n_dims", "mae", "mri"))
        ax3.scatter(n, e, r, color=color, marker=marker, s=30, label=label, depthshade=False)
        ax2.scatter(e, r, color=color, marker=marker, s=30, label=label)
    two = sorted((p for p in pts if p.two_objective), key=lambda p: p.n_dims)
    if two:
        ax3.plot([p.n_dims for p in two], [p.mae for p in two], [p.mri for p in two], color="#1f618d", linewidth=1)
        ax2.plot([p.mae for p in two], [p.mri for p in two], color="#1f618d", linewidth=1)
        for p in two:
            ax2.annotate(str(p.n_dims), (p.mae, p.mri), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax3.set_xlabel("active dimensions")
    ax3.set_ylabel(report.error_name)
    ax3.set_zlabel("MRI")
    ax2.set_xlabel(report.error_name)
    ax2.set_ylabel("MRI (lower = more robust)")
    ax2.set_title("error against robustness (labels: active dimensions)", fontsize=9)
    ax2.legend(frameon=False, fontsize=7)
    fig.suptitle("Three-objective frontier: dimensions, error, MRI")
    return _save(fig, path)


def render_fuzz_figures(report: StructuralFuzzReport, out_dir: str | Path) -> list[Path]:
    """All figures of the report into `out_dir`: omega.png, sensitivity.png, frontier.png, thresholds.md."""
    out_dir = Path(out_dir)
    paths = [plot_omega_distribution(report, out_dir / "omega.png"), plot_sensitivity(report, out_dir / "sensitivity.png")]
    if report.frontier:
        paths.append(plot_frontier(report, out_dir / "frontier.png"))
    write_text(threshold_table(report), out_dir / "thresholds.md")
    return paths + [out_dir / "thresholds.md"]
