"""`make repro`: `dvc repro`, with stages that do not read each other's outputs running side by side.

    python scripts/repro.py              # what `make repro` runs
    python scripts/repro.py --force      # every stage, as from a fresh clone
    python scripts/repro.py --slots 1    # one stage at a time, as `dvc repro`

`dvc status` names the stale stages. Each of them, and each stage that reads from one whose outputs changed in
this run, runs as `dvc --wait-for-lock repro --single-item <stage>` once every stage it reads from has finished;
DVC decides again, as in `dvc repro`, whether it is stale, runs it and writes its entry of dvc.lock. DVC releases
its repository lock while a stage's command runs, which lets another stage start meanwhile, and keeps its
read/write locks on each stage's inputs and outputs. Which stages start when is `pipeline.stages.schedule`: by
default a stage with a worker pool runs alone, on every core, and the one-core stages run as many at a time as
there are cores. A plain `dvc repro` at the end finds nothing left to run, and its exit status is this script's.

Each stage's output goes to outputs/logs/repro/<stage>.log (the last lines are printed when it fails); the
terminal shows one line per stage that ran, with its time, and a run that ends well writes those times to
outputs/timings/repro.tsv, slowest first, as `make profile` does (the total is the run's wall time, so stages that ran
side by side add up to more than 100% of it). A failed stage stops new starts, lets those running
finish, and exits non-zero naming it. Ctrl-C stops every stage (DVC keeps nothing of a stage it interrupts); the
next run resumes from what has finished, and the stages' own resume stores.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml
from tqdm import tqdm

from pipeline.runtime.io import write_text
from pipeline.runtime.numerics import n_workers
from pipeline.stages.layout import PARAMS, ROOT
from pipeline.stages.schedule import Job, needless, to_start
from pipeline.stages.table import STAGES
from scripts.profile_repro import TIMINGS, minutes, table

DVC = [sys.executable, "-m", "dvc"]  # the environment's DVC, whatever PATH holds
# and its `python` for the stages' commands (`python scripts/<stage>.py`), as `make repro`'s PATH gives them
ENV = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
LOGS = Path("outputs") / "logs" / "repro"  # under the project root


def dvc_jobs(root: Path, pool_cost: int) -> list[Job]:
    """Every stage of the root's dvc.yaml (`foreach` items by their name, e.g. `search_suite@bbc_news`), in its order,
    with the stages it reads from (DVC's own graph) and its cost: `pool_cost` for a stage of the table with a
    worker pool, 1 for the others. The pipelines of other folders (realsize/dvc.yaml) run on request, as a plain
    `dvc repro` at the root leaves them."""
    from dvc.repo import Repo

    pools = {s.name for s in STAGES if s.pool}
    with Repo(str(root)) as repo:
        graph = repo.index.graph
        return [Job(s.name, pool_cost if s.name.split("_suite@")[0] in pools else 1,
                    frozenset(d.name for d in graph.successors(s))) for s in repo.index.stages
                if Path(s.path).resolve() == (root / "dvc.yaml").resolve()]


def stale_stages(root: Path) -> set[str]:
    """The stages of the root's dvc.yaml that `dvc status` finds changed: an input, an output or the command."""
    status = subprocess.run([*DVC, "status", "--json", "dvc.yaml"], cwd=root, env=ENV, capture_output=True, text=True, check=False)
    if status.returncode:
        raise SystemExit(f"dvc status failed (exit {status.returncode}):\n{status.stderr}")
    return set(json.loads(status.stdout))


def lock_outs(root: Path) -> dict[str, list]:
    """Each stage's outputs as dvc.lock records them (path and hash), {} where there is no lock yet. A lock that
    another DVC process is writing may read cut short: a stage then looks changed, and its readers go to DVC,
    which decides (the safe side)."""
    try:
        stages = yaml.load((root / "dvc.lock").read_text(), Loader=yaml.CSafeLoader)["stages"]
        return {name: entry.get("outs", []) for name, entry in stages.items()}
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError):
        return {}


def tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def run(jobs: list[Job], slots: int, dvc_args: list[str], root: Path = ROOT, stale: set[str] | None = None) -> int:
    """Run the jobs' `dvc repro --single-item` in the DVC project `root`, `slots` cores' worth at a time; 0, or the
    first failure's exit status once the stages running have finished. With `stale` (`dvc status`'s stages), a
    stage outside it whose inputs' stages kept their outputs is up to date without asking DVC."""
    logs = root / LOGS
    logs.mkdir(parents=True, exist_ok=True)
    stale = {j.name for j in jobs} if stale is None else stale
    before = lock_outs(root)
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    done: set[str] = set()
    changed: set[str] = set()
    failed: list[tuple[str, int]] = []
    times: list[tuple[str, float]] = []
    start = time.monotonic()
    cost = {j.name: j.cost for j in jobs}
    bar = tqdm(total=len(jobs), unit="stage", desc="dvc repro", dynamic_ncols=True)
    try:
        finished = True  # a stage finished since the last look: what may start has changed
        while len(done) < len(jobs) and (running or not failed):
            if finished and not failed:
                while skip := needless(jobs, done, running, stale, changed):
                    done.update(skip)
                    bar.update(len(skip))
                for name in to_start(jobs, done, {n: cost[n] for n in running}, slots):
                    with open(logs / f"{name}.log", "w") as log:
                        proc = subprocess.Popen([*DVC, "--wait-for-lock", "repro", "--single-item", name, *dvc_args],
                                                cwd=root, env=ENV, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
                    running[name] = (proc, time.monotonic())
            if ", ".join(running) != bar.postfix:
                bar.set_postfix_str(", ".join(running))
            time.sleep(0.2)
            finished = False
            for name, (proc, since) in list(running.items()):
                if proc.poll() is None:
                    continue
                finished = True
                del running[name]
                log = logs / f"{name}.log"
                if proc.returncode:
                    failed.append((name, proc.returncode))
                    bar.write(f"FAILED {name} (exit {proc.returncode}); its last lines, from {log.relative_to(root)}:\n{tail(log)}")
                    continue
                if "Running stage" in log.read_text(errors="replace"):
                    times.append((name, time.monotonic() - since))
                    bar.write(f"ran  {name}  {minutes(times[-1][1])}")
                    if lock_outs(root).get(name) != before.get(name):
                        changed.add(name)
                done.add(name)
                bar.update()
    except KeyboardInterrupt:
        for proc, _ in running.values():
            os.killpg(proc.pid, signal.SIGINT)
        for proc, _ in running.values():
            proc.wait()
        bar.close()
        print(f"interrupted; stopped {', '.join(running) or 'nothing'}: the next run resumes", file=sys.stderr)
        return 130
    bar.close()
    if failed:
        names = ", ".join(f"{n} (exit {c})" for n, c in failed)
        print(f"stage failed: {names}; its log is in {logs.relative_to(root)}; no stage was started after it", file=sys.stderr)
        return failed[0][1]
    if times:
        write_text(table(times, time.monotonic() - start), root / TIMINGS)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slots", type=int, default=None,
                        help="cores' worth of stages at once (a pool stage counts as every core; default: the cores)")
    parser.add_argument("--force", action="store_true", help="rerun every stage (dvc repro --force)")
    args = parser.parse_args(argv)
    cores = n_workers(0)
    slots = cores if args.slots is None else args.slots
    if slots < 1:
        parser.error(f"--slots must be at least 1, got {slots}")
    pool_cost = n_workers(yaml.safe_load(PARAMS.read_text()).get("workers", 0))
    jobs = dvc_jobs(ROOT, pool_cost)
    stale = None if args.force else stale_stages(ROOT)
    print(f"{len(jobs) if stale is None else len(stale)} of {len(jobs)} stages stale, and those that read from them; "
          f"{slots} cores' worth at a time")
    code = run(jobs, slots, ["--force"] if args.force else [], stale=stale)
    if code:
        return code
    return subprocess.run([*DVC, "repro"], cwd=ROOT, env=ENV).returncode  # finds every stage up to date


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
