"""The campaign report (chapter 9, §9.5.2): every stage's results, a text summary, JSON both ways."""
from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Iterator

import numpy as np

from pipeline.fuzz.composition import CompositionResult
from pipeline.fuzz.frontier import FrontierPoint
from pipeline.fuzz.mri import DirectionalMRI, ModelRobustnessIndex
from pipeline.fuzz.sensitivity import SensitivityResult
from pipeline.fuzz.subsets import SubsetResult
from pipeline.fuzz.threshold import DIRECTIONS, AdversarialResult


@dataclass
class StructuralFuzzReport:
    """All six stages of a structural fuzzing campaign, plus the exercises' extensions.

    `operating_point` is the configuration stages 3–5 analysed; `settings` records the campaign's
    arguments; `n_evaluations` counts the model evaluations the campaign asked for.
    """

    dim_names: list[str]
    subset_results: list[SubsetResult]
    pareto_results: list[SubsetResult]
    sensitivity_results: list[SensitivityResult]
    mri_result: ModelRobustnessIndex | None
    adversarial_results: list[AdversarialResult]
    composition_result: CompositionResult | None
    forward_results: list[SubsetResult] = field(default_factory=list)
    backward_results: list[SubsetResult] = field(default_factory=list)
    operating_point: list[float] = field(default_factory=list)
    directional: DirectionalMRI | None = None
    frontier: list[FrontierPoint] = field(default_factory=list)
    skipped_threshold_dims: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    n_evaluations: int = 0
    error_name: str = "error"

    # ---- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=_plain)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "StructuralFuzzReport":
        missing = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING} - set(data)
        if missing:
            raise ValueError(f"not a structural fuzz report: missing keys {sorted(missing)}")
        subsets = lambda rows: [SubsetResult(**r) for r in rows]  # noqa: E731
        mri = data.get("mri_result")
        directional = data.get("directional")
        comp = data.get("composition_result")
        return cls(
            dim_names=list(data["dim_names"]),
            subset_results=subsets(data["subset_results"]),
            pareto_results=subsets(data["pareto_results"]),
            sensitivity_results=[SensitivityResult(**r) for r in data["sensitivity_results"]],
            mri_result=_mri(mri) if mri is not None else None,
            adversarial_results=[AdversarialResult(**r) for r in data["adversarial_results"]],
            composition_result=_composition(comp) if comp is not None else None,
            forward_results=subsets(data.get("forward_results", [])),
            backward_results=subsets(data.get("backward_results", [])),
            operating_point=list(data.get("operating_point", [])),
            directional=_directional(directional) if directional is not None else None,
            frontier=[FrontierPoint(**r) for r in data.get("frontier", [])],
            skipped_threshold_dims=list(data.get("skipped_threshold_dims", [])),
            settings=dict(data.get("settings", {})),
            n_evaluations=int(data.get("n_evaluations", 0)),
            error_name=str(data.get("error_name", "error")),
        )

    @classmethod
    def from_json(cls, text: str) -> "StructuralFuzzReport":
        return cls.from_dict(json.loads(text))

    # ---- the human-readable report -------------------------------------------------------------
    def threshold_rows(self) -> Iterator[tuple[str, str | None, AdversarialResult | None]]:
        """(dimension, direction, result) per dimension and scan direction, result None where the scan
        found no threshold; one (dimension, None, None) row for a dimension whose scan was skipped."""
        found = {(a.dim_name, a.direction): a for a in self.adversarial_results}
        for name in self.dim_names:
            if name in self.skipped_threshold_dims:
                yield name, None, None
                continue
            for direction in DIRECTIONS:
                yield name, direction, found.get((name, direction))

    def summary(self) -> str:
        """The campaign as text: configuration, frontier, sensitivity, MRI, thresholds, composition."""
        e = self.error_name
        out = [f"Structural fuzzing report — {len(self.dim_names)} dimensions: {', '.join(self.dim_names)}",
               f"model evaluations: {self.n_evaluations}", ""]
        best = self.subset_results[0] if self.subset_results else None
        out.append(f"1. Subset enumeration: {len(self.subset_results)} configurations")
        if best is not None:
            out.append(f"   best: {{{', '.join(best.dim_names)}}}  {e} = {best.mae:.4g}")
        out.append(f"2. Pareto frontier ({e} vs active dimensions): {len(self.pareto_results)} configurations")
        for r in self.pareto_results:
            out.append(f"   {r.n_dims} dims  {e} = {r.mae:<10.4g} {{{', '.join(r.dim_names)}}}")
        out.append("   operating point: " + ", ".join(f"{n}={v:.4g}" for n, v in zip(self.dim_names, self.operating_point)))
        out.append("3. Sensitivity profile (Δ = error with the dimension inactive − base error)")
        for s in self.sensitivity_results:
            flag = "  <- negative: removing it helps" if s.harmful else ""
            out.append(f"   {s.importance_rank:>2}. {s.dim_name:<24} Δ = {s.delta_mae:+.4g}  ({e} without = {s.mae_without:.4g}){flag}")
        m = self.mri_result
        if m is not None:
            w = m.weights
            out.append(f"4. Model Robustness Index (N = {m.n_perturbations}, σ = {m.scale:g}, weights {w[0]:g}/{w[1]:g}/{w[2]:g})")
            out.append(f"   base {e} = {m.base_mae:.4g}; mean ω = {m.mean_omega:.4g}, P75 = {m.p75_omega:.4g}, P95 = {m.p95_omega:.4g}")
            out.append(f"   MRI = {m.mri:.4g};  CVaR_{m.cvar_alpha:g}(ω) = {m.cvar_omega:.4g};  worst-case {e} = {m.worst_case_mae:.4g}")
        if self.directional is not None:
            dm = self.directional
            out.append(f"   directional MRI (one dimension perturbed): sum = {dm.sum_directional:.4g}, "
                       f"global − sum = {dm.interaction:+.4g}")
            for name, r in zip(dm.dim_names, dm.per_dim):
                out.append(f"     {name:<24} MRI = {r.mri:.4g}")
        tol = self.settings.get("adversarial_tolerance")
        out.append(f"5. Adversarial thresholds (tolerance {tol})")
        for name, direction, a in self.threshold_rows():
            if direction is None:
                out.append(f"   {name:<24} skipped (operating value not positive)")
            elif a is None:
                out.append(f"   {name:<24} {direction:<9} none in range")
            else:
                out.append(f"   {name:<24} {direction:<9} ×{a.threshold_ratio:<9.4g} (value {a.threshold_value:.4g}) "
                           f"breaks {a.target_flipped} (Δ {a.target_delta:+.3g})")
        c = self.composition_result
        if c is not None:
            out.append("6. Compositional testing")
            out.append("   forward addition:     " + " → ".join(f"+{n} ({x:.4g})" for n, x in zip(c.forward_order, c.forward_errors[1:]))
                       + f"   [none active: {c.forward_errors[0]:.4g}]")
            out.append("   backward elimination: " + " → ".join(f"−{n} ({x:.4g})" for n, x in zip(c.backward_order, c.backward_errors[1:]))
                       + f"   [all active: {c.backward_errors[0]:.4g}]")
            for r in c.regressions:
                out.append(f"   regression: adding {r['dim_name']} at step {r['step']} raised {e} by {r['increase']:.4g}")
            out.append(f"   paths reach the same error at every size: {c.consistent} (same order: {c.same_order}); "
                       f"composes well: {c.composes_well}")
        if self.frontier:
            out.append(f"Robustness of the frontier ({e}, active dimensions, MRI)")
            for p in sorted(self.frontier, key=lambda p: (p.n_dims, p.mae)):
                tag = ("2+3" if p.two_objective else "3") if p.three_objective else ("2" if p.two_objective else "-")
                out.append(f"   [{tag:>3}] {p.n_dims} dims  {e} = {p.mae:<10.4g} MRI = {p.mri:<10.4g} {{{', '.join(p.dim_names)}}}")
        return "\n".join(out) + "\n"


def _plain(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _mri(d: dict) -> ModelRobustnessIndex:
    return ModelRobustnessIndex(**{**d, "weights": tuple(d["weights"])})


def _composition(d: dict) -> CompositionResult:
    return CompositionResult(**d)


def _directional(d: dict) -> DirectionalMRI:
    return DirectionalMRI(d["dim_names"], [_mri(r) for r in d["per_dim"]], _mri(d["global_mri"]))
