"""Tiers of real conditions from a record table (paired evaluations §3.3): a condition is mild, severe or
extreme by its accuracy averaged over models, under the one tier rule `pipeline.perturb.recapture.tier_of`.
"""
from __future__ import annotations

import pandas as pd

from pipeline.perturb.recapture import TIER_CUTS, TIERS, tier_of


def condition_tiers(real: pd.DataFrame, split: str = "dev", cuts: tuple[float, float] = TIER_CUTS) -> pd.DataFrame:
    """Tier of each real condition from its accuracy on `split` images (all images, not only clean-correct),
    averaged over models with equal weight: mild >= cuts[0] > severe >= cuts[1] > extreme (Section 3.3)."""
    part = real[real["split"] == split]
    if part.empty:
        raise ValueError(f"no {split!r} records to define tiers from")
    correct = (part["pert_pred"] == part["y"]).rename("accuracy")
    per_model = correct.groupby([part["condition"], part["model"]]).mean()
    acc = per_model.groupby(level=0).mean()
    tier = [tier_of(a, cuts) for a in acc.to_numpy()]
    return pd.DataFrame({"condition": acc.index.astype(str), "accuracy": acc.to_numpy(), "tier": tier})


def condition_summary(records: pd.DataFrame) -> dict:
    """Per condition its mean development accuracy across models and tier (§3.3), and the tier counts."""
    tiers = condition_tiers(records, split="dev")
    counts = {t: int((tiers["tier"] == t).sum()) for t in TIERS}
    per = {row.condition: {"dev_accuracy": float(row.accuracy), "tier": str(row.tier)} for row in tiers.itertuples()}
    return {"tier_counts": counts, "conditions": per}
