"""The natural-augmentation comparison beyond Table 33 (paired evaluations App. E.1, "Natural test-time
augmentation, native scoring rules and consistency of the re-inference"): Table 29's variant with the
untransformed image added to both averages, and Table 32, both averages from m versions.

* Table 29 (variant "untransformed image added"): U19 and TTA19 add the clean true-class probability as a
  nineteenth term to the 18 corruptions and the 18 natural transforms (Bahat and Shakhnarovich, 2020;
  `probes.probe_average`); the paired coverage differences U19 - TTA19 and, for reference,
  U18 - TTA18 at every budget on mild conditions, with model-group intervals from a generator of their own.
  The table's other variants are not reproduced (`NOT_REPRODUCED`, printed beside the table): the native scoring rule
  needs models whose probabilities come from a different scoring protocol (the embedded zoo's are their
  native ones), and the development-selected sets need the 30-transform candidate pool, which the
  recapture stage does not evaluate.
* Table 32: Table 28's prefixed subsets of the condition indices (`prefix_subsets`, the same draws)
  applied by index to both lists, the 18 Syn-B conditions and the 18 TTA18 transforms in their fixed
  orders; coverage at q, gain over S and AUROC per family (`subset_table`). The severity halves are
  Syn-B-specific and left out; with lists of different lengths (a Syn-B set other than 18 conditions) the
  table is empty.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.paired.records.probes import probe_arrays
from pipeline.paired.screening.metrics import evaluate_cells
from pipeline.paired.screening.probes import probe_average
from pipeline.paired.screening.resampling import group_bootstrap, interval_text
from pipeline.paired.screening.subsets import SUBSET_COLUMNS, subset_table

NOT_REPRODUCED = ("native scoring rule: the embedded zoo's probabilities are already its native outputs; "
                  "development-selected TTA_sel / U_sel: the 30-transform candidate pool is not evaluated")


def probe_members(probes: pd.DataFrame, scores: pd.DataFrame, probe: str) -> dict[str, np.ndarray]:
    """Per model, the true-class probability of each scored image under each member of probe set `probe`,
    (score rows in `scores` order, members)."""
    out = {}
    for model, part in scores.groupby("model", sort=True):
        proba = probe_arrays(probes, model, probe, part["image_id"].tolist())
        out[model] = proba[:, np.arange(len(part)), part["y"].to_numpy()].T
    return out


def untransformed_added(scores: pd.DataFrame, probes: pd.DataFrame) -> pd.DataFrame:
    """`scores` with neg_U_clean and neg_TTA_clean: both averages with the clean true-class probability
    added as one more term (U19 and TTA19 with the paper's 18 + 18 probes)."""
    out = scores.copy()
    clean = probe_members(probes, scores, "clean")
    for name, probe in (("neg_U_clean", "synb"), ("neg_TTA_clean", "tta")):
        members = probe_members(probes, scores, probe)
        for model, idx in scores.groupby("model", sort=True).groups.items():
            out.loc[idx, name] = -probe_average(members[model], clean[model][:, 0])
    return out


def untransformed_table(scores: pd.DataFrame, real: pd.DataFrame, probes: pd.DataFrame, tiers: pd.DataFrame,
                        source: str, budgets: Sequence[float], group_draws: int, rng: np.random.Generator,
                        tier: str = "mild") -> pd.DataFrame:
    """Table 29's reproducible variant (module docstring): per budget, the coverage of both averages as
    fixed and with the untransformed image added, and the paired differences with 95% model-group
    intervals, on `tier` conditions."""
    names = ["neg_U", "neg_TTA18", "neg_U_clean", "neg_TTA_clean"]
    cells = evaluate_cells(untransformed_added(scores, probes), real, names, tiers, source, budgets)
    cells = cells[cells["tier"] == tier]
    rows = []
    for q in budgets:
        metric = f"coverage_{q:g}"
        groups = group_bootstrap(cells, metric, [("neg_U", "neg_TTA18"), ("neg_U_clean", "neg_TTA_clean")], rng, group_draws)
        means = cells.groupby("score")[metric].mean()
        for label, (u, t) in (("fixed sets", ("neg_U", "neg_TTA18")),
                              ("untransformed image added to both", ("neg_U_clean", "neg_TTA_clean"))):
            rows.append({"variant": label, "q": q, "corruption average": means[u], "natural average": means[t],
                         "difference [95%]": interval_text(groups, f"{u}-{t}", tier)})
    return pd.DataFrame(rows)


def natural_prefix_table(table28: pd.DataFrame, scores: pd.DataFrame, real: pd.DataFrame, probes: pd.DataFrame,
                         tiers: pd.DataFrame, source: str, q: float,
                         subsets: Sequence[tuple[str, tuple[int, ...]]]) -> pd.DataFrame:
    """Table 32 (module docstring): Table 28's rows of the shared subset families for the corruptions
    (`table28`, computed on the same subsets) and `subset_table` of TTA18 for the natural list; empty when
    the lists differ in length."""
    natural = probe_members(probes, scores, "tta")
    if {v.shape[1] for v in natural.values()} != {len(subsets[-1][1])}:     # subsets[-1] is "all" (prefix_subsets)
        return pd.DataFrame()          # subsets by index need lists of one length (18 and 18 in the paper)
    shared = [(f, s) for f, s in subsets if not f.startswith("severity")]
    corruptions = table28[table28["subsets"].isin({f for f, _ in shared})][SUBSET_COLUMNS]
    parts = [corruptions.assign(**{"probe list": "corruptions (Syn-B)"}),
             subset_table(scores, real, tiers, source, q, shared, natural).assign(**{"probe list": "natural (TTA18)"})]
    out = pd.concat(parts, ignore_index=True)
    return out[["probe list", *SUBSET_COLUMNS]]
