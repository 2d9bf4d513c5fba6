"""Searches guided by an input-level adequacy metric (TestNav §4.4, Fig. 4): each of NAC, SNAC, KMNC,
TKNC, DeepGini, LSA and DSA as the sole objective, with the evolutionary operators and selection of the
δ-only ablation. The metric's value per configuration comes from the ground-truth table (column
`adequacy_<name>`, computed in the forward pass that gives ψ); larger is pursued, as for δ. What a run
evaluates is scored as every other run is: Recall@P* of the bi-objective (δ, ρ) front, and its trace
records the true (δ, ρ) of each proposal (`run_search(..., truth=...)`).
"""
from __future__ import annotations

from pipeline.plugins.catalog import ADEQUACY
from pipeline.search.methods.evolution import DeltaOnly


class AdequacyGuided(DeltaOnly):
    """δ-only's loop (its first objective only) on an oracle whose first objective is an adequacy metric
    (`guide`, a table column)."""

    guide: str = ""


def guided_method(name: str) -> type[AdequacyGuided]:
    """The method guided by adequacy metric `name` (of the catalog's `ADEQUACY`), named after it."""
    label = ADEQUACY.facts(name)["label"]
    return type(f"{label}Guided", (AdequacyGuided,), {"name": name, "label": label, "guide": f"adequacy_{name}",
                                                      "__doc__": f"{label} as the sole search objective (§4.4)."})
