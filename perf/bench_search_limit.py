"""How far each table lets a surrogate search go (issue 20's 5x goal): per table of a split, |P*|, the
ideal search (GP-PND's initial design, then only the members of P* it lacks), the leave-one-out order's
u (`pipeline.search.studies.loo_order`) and the median u of each method of an earlier held-out run, with each
as a multiple (x) of the ideal.

    .venv/bin/python perf/bench_search_limit.py --split real --runs outputs/heldout/real/runs.csv --out outputs/heldout/limit_real
    .venv/bin/python perf/bench_search_limit.py --split test --per-family 2 --runs outputs/heldout/test/runs.csv \
        --out outputs/heldout/limit_test
    .venv/bin/python perf/bench_search_limit.py --quick      # 1 development table per family, 4^3 lattice

Writes limit.csv (one row per table) and report.md (the table, and the median multiple per group and over
all tables) to `--out`, or prints the report only. A run that never reaches recall 1 counts as |Θ| + 1,
as in the held-out report.

The core (issue 29): where a table has one (`set_<metric>`; generated tables: `synthetic_confidence`), the same
against the core as the reference: |core|, its ideal (the initial design, then only the members of the core it
lacks), its members with p_θ < 0.05, the leave-one-out order's u to the whole core (`loo_u_core`, the same order,
read where it has placed every member of the core) and x = u / ideal (`x_loo_core`); with `--runs`, each method's
median censored u to the core (`u_core_<method>`) and its multiple of the core's ideal (`x_core_<method>`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search_heldout import QUICK_SPACE, markdown, parse_families, problems, publish  # noqa: E402  (the same tables as the held-out comparison)

from pipeline.runtime.numerics import ensure_pinned  # noqa: E402
from pipeline.search.studies.loo_order import loo_order_u, membership_probability  # noqa: E402
from pipeline.search.parallel import map_runs  # noqa: E402
from pipeline.search.methods.pnd import initial_design, lattice_design  # noqa: E402
from pipeline.search.studies.synthetic import FAMILIES  # noqa: E402
from pipeline.front.space import Space  # noqa: E402


def ideal_u(space: Space, pareto: np.ndarray) -> int:
    """Unique configurations of a search that evaluates GP-PND's initial design and then only the members
    of P* it does not hold (its random part counted as holding no member)."""
    design = len(initial_design(space, np.random.default_rng(0)))
    return design + int(np.setdiff1d(np.flatnonzero(pareto), lattice_design(space)).size)


def one_table(group: str, table: str, objectives: np.ndarray, space: Space, pareto: np.ndarray, core: np.ndarray | None = None
              ) -> dict:
    """One row of limit.csv: P*'s ideal and leave-one-out u, and the core's beside them where it has a non-empty one."""
    p, ideal = membership_probability(objectives, space), ideal_u(space, pareto)
    loo_u = loo_order_u(p, pareto)
    row = {"group": group, "table": table, "pareto_size": int(pareto.sum()), "ideal_u": ideal,
           "members_below_0_05": int((p[pareto] < 0.05).sum()), "loo_u": loo_u, "x_loo": loo_u / ideal}
    if core is not None and core.any():
        ideal_core, loo_core = ideal_u(space, core), loo_order_u(p, core)
        row.update(core_size=int(core.sum()), ideal_u_core=ideal_core, core_below_0_05=int((p[core] < 0.05).sum()),
                   loo_u_core=loo_core, x_loo_core=loo_core / ideal_core)
    return row


def with_methods(limit: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`limit` with the median censored u (q = 1) of each method in `runs` and every u as a multiple of the ideal;
    where both carry the core, also each method's median censored u to the core over the core's ideal."""
    runs = runs[runs["q"] == 1].assign(u=lambda r: r["u_full"].fillna(r["space_size"] + 1))
    medians = runs.pivot_table(index="table", columns="method", values="u", aggfunc="median")
    out = limit.merge(medians.add_prefix("u_").reset_index(), on="table", how="left")
    for method in medians.columns:
        out[f"x_{method}"] = out[f"u_{method}"] / out["ideal_u"]
    if "u_core" not in runs.columns or "ideal_u_core" not in out.columns:
        return out
    core = runs[runs["core_size"] > 0].assign(u=lambda r: r["u_core"].fillna(r["space_size"] + 1))
    medians = core.pivot_table(index="table", columns="method", values="u", aggfunc="median")
    out = out.merge(medians.add_prefix("u_core_").reset_index(), on="table", how="left")
    for method in medians.columns:
        out[f"x_core_{method}"] = out[f"u_core_{method}"] / out["ideal_u_core"]
    return out


def report(table: pd.DataFrame) -> str:
    ratios = [c for c in table.columns if c.startswith("x_")]
    by_group = table.groupby("group", sort=False)[ratios].median()
    by_group.loc["all tables"] = table[ratios].median()
    note = "\nThe _core columns measure against the core (π ≥ 0.95) instead of P*.\n" if "ideal_u_core" in table.columns else ""
    return ("## Per table (u: unique configurations to recall 1; x: u / ideal)\n\n" + markdown(table, 1) + note
            + "\n## Median multiple of the ideal\n\n" + markdown(by_group.reset_index(), 2))


def main(argv: list[str] | None = None) -> None:
    ensure_pinned()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "real"), default="real")
    ap.add_argument("--per-family", type=int, default=2, help="generated tables per family")
    ap.add_argument("--families", default=",".join(FAMILIES), help="the generated families, comma-separated")
    ap.add_argument("--runs", type=Path, default=None, help="a held-out runs.csv whose methods' u to compare")
    ap.add_argument("--workers", type=int, default=0, help="worker processes (0: every core)")
    ap.add_argument("--out", type=Path, default=None, help="folder for limit.csv and report.md")
    ap.add_argument("--quick", action="store_true", help="1 development table per family on a 4^3 lattice (seconds)")
    args = ap.parse_args(argv)
    families = parse_families(ap, args.families)
    if args.runs is not None and not args.runs.is_file():
        ap.error(f"--runs {args.runs} is not a file; give the runs.csv of a bench_search_heldout.py --out folder")
    keys = ("group", "table", "objectives", "space", "pareto", "core")
    split, per_family, space = ("dev", 1, QUICK_SPACE) if args.quick else (args.split, args.per_family, None)
    tables = [dict(zip(keys, problem)) for problem in problems(split, per_family, space, families)]
    limit = pd.DataFrame(map_runs(one_table, tables, args.workers, desc="leave-one-out order"))
    if args.runs is not None:
        limit = with_methods(limit, pd.read_csv(args.runs))
    publish(limit, report(limit), args.out, "limit.csv")


if __name__ == "__main__":
    main()
