"""Stage `policies`: rejection-policy comparisons under one shared correspondence (Appendix D) for every
cell, weight and information level; certified orderings (Tables 4, 12, Fig. 5) and realised selection
(Tables 13-14).

    python scripts/policies.py     # outputs/paired/<paired.source>/policy_*.parquet, certified.csv, selection.csv, table4.md
"""
from __future__ import annotations

import pipeline.runtime.pin  # noqa: F401  (first: re-executes a stage pinned before its heavy imports)

import numpy as np
import pandas as pd

from pipeline.runtime.io import write_json, write_parquet, write_text
from pipeline.paired import certified_summary, model_thresholds, policies_tables, selection_summary
from pipeline.stages.runner import plain, run_stage
from pipeline.stages.paired_inputs import read_validated_records
from pipeline.stages.layout import paired_dir


def main(cfg) -> None:
    spec = plain(cfg.paired)
    records = read_validated_records(cfg)
    thresholds = model_thresholds(records, spec["clean_coverage"], spec["policy_coverages"])
    tables = policies_tables(records, thresholds, spec["lambdas"], spec["levels"], progress=spec["progress"])
    certified = pd.concat([certified_summary(tables["comparisons"], cost) for cost in ("transition", "natural")],
                          ignore_index=True)
    selection = selection_summary(tables["selection"], "I5")
    out = paired_dir(cfg)
    for name, table in tables.items():
        write_parquet(table, out / f"policy_{name}.parquet")
    write_text(certified.to_csv(index=False), out / "certified.csv")
    write_text(selection.to_csv(index=False), out / "selection.csv")
    primary = float(spec["primary_lambda"])
    cert = certified[(certified["cost"] == "transition") & np.isclose(certified["lam"], primary)].iloc[0]
    nat = certified[(certified["cost"] == "natural") & np.isclose(certified["lam"], primary)].iloc[0]
    sel = selection[np.isclose(selection["lam"], primary)].iloc[0]
    table4 = "\n".join([
        f"Policy comparisons and selection, λ = {primary:g}, {int(cert['n_cells'])} cells (Table 4).", "",
        "| | cells | directed comparisons |", "|---|---|---|",
        f"| shared π vs separate intervals (I5) | {cert['shared_cells']} | {cert['shared_pairs']} |",
        f"| +k: I0 → Ik | {cert['plus_k_cells']} | {cert['plus_k_pairs']} |",
        f"| +5: Ik → I5 | {cert['plus_5_cells']} | {cert['plus_5_pairs']} |",
        f"| +5 under J' = λE + (1 − λ)L (Corollary 1) | {nat['plus_5_cells']} | {nat['plus_5_pairs']} |", "",
        "| minimax vs feasible mean (I5) | lower | higher | equal |", "|---|---|---|---|",
        f"| realised cost | {sel['better']} | {sel['worse']} | {sel['tied']} |", "",
    ])
    write_text(table4, out / "table4.md")
    write_json({"lam": primary, "n_cells": int(cert["n_cells"]), "shared_cells": int(cert["shared_cells"]),
                "plus_k_cells": int(cert["plus_k_cells"]), "plus_5_cells": int(cert["plus_5_cells"]),
                "natural_plus_5_cells": int(nat["plus_5_cells"]),
                "minimax_regret_pp": 100 * float(sel["minimax_regret"]), "mean_regret_pp": 100 * float(sel["mean_regret"]),
                "minimax_better": int(sel["better"]), "minimax_worse": int(sel["worse"]), "tied": int(sel["tied"])},
               out / "policies.json")
    print(table4)


if __name__ == "__main__":
    run_stage(main)
