"""The composition of P* by perturbation order (TestNav Table 3 and the counts in Fig. 1's caption).

The order of θ is its number of active perturbations, |{i : θ_i > 0}| (TestNav App. "perturbation
order"); Θ_k holds the configurations of order k. The identity θ = 0 (order 0) is always in P*: it has
the highest fidelity and δ = 0 is the lowest degradation, so nothing dominates it. The paper's counts
leave it out (Fig. 1: "|P*| = 27 (9, 12, 4, 2)", orders 1-4 summing to |P*|); `count_identity` makes
that a setting: False (the paper's convention, the default) reports |P*| without the identity and
orders 1..n; True counts it in |P*| and adds an order-0 column. Recall@P* is unaffected: the search
metrics always use the whole front.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd


def front_composition(front_orders: Iterable[int], n_dims: int, count_identity: bool) -> dict[str, int]:
    """{'size': |P*|, 'order_<k>': count} for the orders of the members of one front (Table 3 row)."""
    orders = [int(k) for k in front_orders]
    if any(not 0 <= k <= n_dims for k in orders):
        raise ValueError(f"orders must lie in 0..{n_dims}; got {sorted(set(orders))}")
    first = 0 if count_identity else 1
    counts = {f"order_{k}": sum(1 for o in orders if o == k) for k in range(first, n_dims + 1)}
    return {"size": sum(counts.values()), **counts}


def composition_label(row: Mapping[str, int], n_dims: int, count_identity: bool) -> str:
    """'|P*| = 27 (9,12,4,2)' as in Fig. 1's caption, under the same convention as Table 3."""
    first = 0 if count_identity else 1
    return f"|P*| = {row['size']} (" + ",".join(str(row[f"order_{k}"]) for k in range(first, n_dims + 1)) + ")"


def table3(fronts: Mapping[tuple[str, str], tuple[Iterable[int], int]], count_identity: bool,
           confidence: Mapping[tuple[str, str], tuple[Iterable[int], Iterable[int]]] | None = None) -> pd.DataFrame:
    """Table 3: one row per (benchmark, metric) from {(benchmark, metric): (orders of P*'s members, n)}.
    Benchmarks with fewer dimensions leave the higher order columns empty (NA). With `confidence`,
    {(benchmark, metric): (orders of the core's members, orders of the plausible set's)} (π ≥ 0.95 and
    π ≥ 0.05 under the paired bootstrap of the inputs), the sizes of both beside |P*|, under the same convention
    on the identity (NA for a table without per-input outcomes)."""
    rows = [{"benchmark": b, "metric": m, **front_composition(orders, n, count_identity)} for (b, m), (orders, n) in fronts.items()]
    table = pd.DataFrame(rows)
    order_cols = sorted((c for c in table.columns if c.startswith("order_")), key=lambda c: int(c.split("_")[1]))
    table = table[["benchmark", "metric", "size", *order_cols]]
    if confidence is not None:
        first = 0 if count_identity else 1
        sets = [confidence.get((b, m)) for b, m in zip(table["benchmark"], table["metric"])]
        for i, column in enumerate(("core", "plausible")):
            table.insert(3 + i, column, [sum(1 for o in s[i] if int(o) >= first) if s is not None else pd.NA for s in sets])
    counts = [c for c in table.columns if c not in ("benchmark", "metric")]
    return table.astype({c: "Int64" for c in counts})


def table3_markdown(table: pd.DataFrame) -> str:
    """Table 3 as Markdown: benchmark, metric, |P*|, the core and plausible sizes where known, one column per order."""
    orders = [c for c in table.columns if c.startswith("order_")]
    sets = [c for c in ("core", "plausible") if c in table.columns]
    head = ["Benchmark", "Metric", "\\|P*\\|", *(f"\\|{c}\\|" for c in sets), *(f"Θ{c.split('_')[1]}" for c in orders)]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (1 + len(sets) + len(orders))]
    for r in table.itertuples(index=False):
        values = [getattr(r, c) for c in ["size", *sets, *orders]]
        lines.append(f"| {r.benchmark} | {r.metric} | " + " | ".join("–" if pd.isna(v) else str(v) for v in values) + " |")
    return "\n".join(lines) + "\n"


def confidence_sets(table: pd.DataFrame, benchmark: str, metric: str, names: Iterable[str]) -> dict[tuple[str, str], tuple]:
    """{(benchmark, metric): (orders of the core's members, orders of the plausible set's)} from a ground-truth
    table's `set_<metric>` column (`pipeline.front.per_input`); empty for a table without one."""
    column = f"set_{metric}"
    if column not in table:
        return {}
    orders = (table[list(names)].to_numpy() > 0).sum(axis=1)
    sets = table[column].to_numpy()
    return {(benchmark, metric): (orders[sets == "core"], orders[sets != "out"])}
