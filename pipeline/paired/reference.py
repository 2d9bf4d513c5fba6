"""The paper's published numbers that the screening tables and their notes show beside the embedded ones
(Paired Evaluations, arXiv 2609.35583, Sections 3.3 and 5, Appendix E). A pair is (ImageNet-ES, ES-Diverse): the
paper's two physical recapture sources, scored by its 44 ImageNet models. Keys are the score columns of
`pipeline.paired.screening` (neg_U = U, neg_S = S, ...) or the row labels of the table named.
"""
from __future__ import annotations

Pair = tuple[float, float]   # (ES, Diverse)

N_MODELS = 44                                                                    # the paper's model zoo
TIER_COUNTS = {"mild": (44, 51), "severe": (5, 25), "extreme": (5, 86)}          # real conditions per tier (§3.3)
AUROC_MILD = {"neg_U": (0.854, 0.801)}                                           # beside Table 16
COVERAGE_MILD = {(0.1, "neg_U"): (0.49, 0.26), (0.1, "neg_S"): (0.41, 0.21),     # beside Table 18: (q, score)
                 (0.2, "neg_U"): (0.67, 0.45), (0.2, "neg_S"): (0.58, 0.36)}
# U - S on the development half, App. E text around Tables 23 and 24: under development-defined tiers; under
# evaluation-defined tiers ES is unchanged and Diverse gives +0.088.
SWAP_MILD = {"table23": {"auroc": (0.078, 0.128), "coverage": (0.111, 0.093)},
             "table24": {"auroc": (0.078, 0.128), "coverage": (0.111, 0.088)}}
IDENTITY_MILD = {"neg_U": (0.85, 0.80), "neg_U_derange": (0.55, 0.58)}           # beside Table 25
CLASS_MILD = {"neg_class_U_cc": (0.60, 0.60), "neg_S": (0.78, 0.68)}             # beside Table 26
STRATA_AUROC = {"U": (0.63, 0.77), "S": (0.52, 0.68)}                            # Table 27: range over the strata
PREFIX_MILD = {"severity 4": (0.669, 0.461), "all": (0.672, 0.449), "severity 2": (0.658, 0.416)}   # Table 28
PROBES_MILD = {"coverage corruption - natural (mean)": (0.076, 0.083),           # beside Tables 33 and 37
               "auroc corruption - natural (mean)": (0.063, 0.114)}
PROBE_SET_COUNTS = {"types_above_natural": ((9, 9), (9, 9)),                     # App. E.3 text beside Table 36:
                    "probes_above_natural": ((8, 18), (16, 18)),                 # (count, of) per source
                    "types_gaining_with_severity": ((5, 9), (8, 9))}


def es_diverse(value: Pair | None) -> str:
    """"ES / Diverse" of a reference pair; "" where the paper states none."""
    return "" if value is None else f"{value[0]:g} / {value[1]:g}"


def probes_mild_text() -> str:
    """The corruption - natural gaps of mean scoring (Table 33) as one cell: "coverage a / b; AUROC c / d"."""
    return (f"coverage {es_diverse(PROBES_MILD['coverage corruption - natural (mean)'])}; "
            f"AUROC {es_diverse(PROBES_MILD['auroc corruption - natural (mean)'])}")
