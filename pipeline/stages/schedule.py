"""Which of `dvc repro`'s stages to start next when several run at once (`scripts/repro.py`, what `make repro` runs).

A stage keeps `cost` cores busy: every core for a stage with a worker pool (`Stage.pool`), one otherwise. Stages
start while the costs of those running stay within `slots`; `make repro` gives the number of cores, so a pool stage
runs alone and the one-core stages (prepare, fuzz, figures, bounds, policies, the summary and report) run as many at
a time as there are cores. More slots than cores was measured slower (docs/timings.md): two pool stages side by
side took 7% more CPU time than one after the other, more than the idle cores they filled. Outputs do not depend on
the slots: each stage is a pure function of its inputs, and it starts only once every stage it reads from has
finished, as in `dvc repro`.

Among the stages ready to start, the costlier go first, then those more stages wait on, then dvc.yaml's order:
the pool stages are most of the pipeline's time (the ground truths, then the searches), and the one-core stages
run side by side whenever no pool stage can start.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence


@dataclass(frozen=True)
class Job:
    """One DVC stage: its name, the cores it keeps busy and the stages whose outputs it reads."""

    name: str
    cost: int
    after: frozenset[str] = frozenset()


def readers(jobs: Sequence[Job]) -> dict[str, set[str]]:
    """The stages that read, directly or through others, the outputs of each stage."""
    direct: dict[str, set[str]] = {j.name: set() for j in jobs}
    for j in jobs:
        for dep in j.after:
            direct[dep].add(j.name)
    below: dict[str, set[str]] = {}

    def downstream(name: str) -> set[str]:
        if name not in below:
            below[name] = set(direct[name]).union(*(downstream(r) for r in direct[name]))
        return below[name]

    return {j.name: downstream(j.name) for j in jobs}


def waiting_on(jobs: Sequence[Job]) -> dict[str, int]:
    """How many stages read, directly or through others, the outputs of each stage."""
    return {name: len(names) for name, names in readers(jobs).items()}


def ready(jobs: Sequence[Job], done: set[str], running: Mapping[str, int]) -> list[Job]:
    """The jobs neither done nor running whose inputs' stages are all `done`, in the order given."""
    return [j for j in jobs if j.name not in done and j.name not in running and j.after <= done]


def needless(jobs: Sequence[Job], done: set[str], running: Mapping[str, int], stale: set[str], changed: set[str]) -> list[str]:
    """The stages ready to start that need not run: not `stale` themselves (`dvc status`) and reading from no stage
    whose outputs `changed` in this run. `dvc repro` would find each up to date; they count as done."""
    return [j.name for j in ready(jobs, done, running) if j.name not in stale and not j.after & changed]


def to_start(jobs: Sequence[Job], done: set[str], running: Mapping[str, int], slots: int) -> list[str]:
    """The stages to start now: those whose inputs are all `done`, in priority order, while the cost of
    `running` (name -> cost) and theirs stays within `slots`. With nothing running the first ready stage starts
    whatever its cost, so a stage costlier than `slots` still runs (alone)."""
    unknown = sorted({d for j in jobs for d in j.after} - {j.name for j in jobs})
    if unknown:
        raise ValueError(f"stages depend on stages that are not in the list: {unknown}")
    weight = waiting_on(jobs)
    busy, start = sum(running.values()), []
    for j in sorted(ready(jobs, done, running), key=lambda j: (-j.cost, -weight[j.name])):  # stable: dvc.yaml order last
        if busy + j.cost <= slots or (busy == 0 and not start):
            start.append(j.name)
            busy += j.cost
    return start
