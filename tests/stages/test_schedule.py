"""Which stages `make repro` starts side by side (`pipeline.stages.schedule`): never before what they read, never more
than the slots allow, every stage in the end; and the table marks exactly the stages whose script starts a pool."""
from __future__ import annotations

import random

import pytest

from pipeline.stages.layout import ROOT
from pipeline.stages.schedule import Job, needless, readers, to_start, waiting_on
from pipeline.stages.table import STAGES


def random_dag(rng: random.Random, n: int) -> list[Job]:
    return [Job(f"s{i}", rng.choice([1, 1, 2, 3]), frozenset(f"s{k}" for k in range(i) if rng.random() < 0.2)) for i in range(n)]


@pytest.mark.parametrize("seed", range(20))
def test_a_whole_run_starts_each_stage_once_after_its_inputs_within_the_slots(seed: int) -> None:
    """Simulated to the end, stages finishing in a random order: the invariants checked at every start."""
    rng = random.Random(seed)
    jobs, slots = random_dag(rng, 25), rng.choice([1, 2, 3, 4])
    by_name = {j.name: j for j in jobs}
    done: set[str] = set()
    running: dict[str, int] = {}
    started: list[str] = []
    while len(done) < len(jobs):
        new = to_start(jobs, done, running, slots)
        for name in new:
            assert by_name[name].after <= done, name
            assert name not in started
            alone = not running and name == new[0]
            running[name] = by_name[name].cost
            assert sum(running.values()) <= slots or (alone and len(new) == 1), (running, slots)
            started.append(name)
        assert running, "nothing runs and nothing can start: the run would hang"
        finished = rng.choice(sorted(running))
        del running[finished]
        done.add(finished)
    assert sorted(started) == sorted(by_name)


def test_a_pool_stage_runs_beside_one_other_stage_the_costlier_first() -> None:
    jobs = [Job("fuzz", 1), Job("ground_truth", 2), Job("figures", 1, frozenset({"fuzz"})), Job("records", 2)]
    assert to_start(jobs, set(), {}, slots=4) == ["ground_truth", "records"]
    assert to_start(jobs, set(), {"ground_truth": 2}, slots=3) == ["fuzz"]  # the other pool stage does not fit
    assert to_start(jobs, set(), {"ground_truth": 2, "fuzz": 1}, slots=4) == []  # 5 > 4
    assert to_start(jobs, {"fuzz"}, {"ground_truth": 2, "records": 2}, slots=4) == []
    assert to_start(jobs, {"fuzz"}, {"ground_truth": 2}, slots=3) == ["figures"]


def test_among_equal_costs_the_stage_more_stages_wait_on_goes_first() -> None:
    jobs = [Job("leaf", 1), Job("root", 1), Job("a", 1, frozenset({"root"})), Job("b", 1, frozenset({"a"}))]
    assert waiting_on(jobs) == {"leaf": 0, "root": 2, "a": 1, "b": 0}
    assert to_start(jobs, set(), {}, slots=1) == ["root"]
    assert to_start(jobs, set(), {}, slots=2) == ["root", "leaf"]


def test_a_stage_needs_no_run_when_neither_it_nor_what_it_reads_changed() -> None:
    jobs = [Job("prepare", 1), Job("truth", 2, frozenset({"prepare"})), Job("fuzz", 1),
            Job("search", 2, frozenset({"truth"})), Job("report", 1, frozenset({"search", "fuzz"}))]
    assert readers(jobs)["truth"] == {"search", "report"} and readers(jobs)["report"] == set()
    # nothing stale: the ready stages are up to date, and then their readers
    assert needless(jobs, set(), {}, stale=set(), changed=set()) == ["prepare", "fuzz"]
    assert needless(jobs, {"prepare", "fuzz"}, {}, stale=set(), changed=set()) == ["truth"]
    # truth stale: it runs; its reader waits for it, and runs only if truth's outputs changed
    assert needless(jobs, {"prepare", "fuzz"}, {}, stale={"truth"}, changed=set()) == []
    assert needless(jobs, {"prepare", "fuzz", "truth"}, {}, stale={"truth"}, changed=set()) == ["search"]
    assert needless(jobs, {"prepare", "fuzz", "truth"}, {}, stale={"truth"}, changed={"truth"}) == []
    assert needless(jobs, {"prepare", "fuzz", "truth", "search"}, {}, stale={"truth"}, changed={"truth", "search"}) == []
    assert needless(jobs, set(), {"prepare": 1}, stale=set(), changed=set()) == ["fuzz"]  # running is not done


def test_a_stage_costlier_than_the_slots_runs_alone() -> None:
    jobs = [Job("big", 8), Job("small", 1)]
    assert to_start(jobs, set(), {}, slots=2) == ["big"]
    assert to_start(jobs, set(), {"small": 1}, slots=2) == []


def test_a_dependency_on_an_unknown_stage_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="ghost"):
        to_start([Job("a", 1, frozenset({"ghost"}))], set(), {}, slots=2)


def test_the_pool_stages_are_those_whose_script_reads_the_workers_setting() -> None:
    """A stage whose script spreads work over `workers` processes counts as every core; a new one that does
    and is not marked would run beside two others."""
    for stage in STAGES:
        reads_workers = "cfg.workers" in (ROOT / "scripts" / f"{stage.script}.py").read_text()
        assert stage.pool == reads_workers, stage.name
