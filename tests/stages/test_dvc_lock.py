"""`dvc.lock` is what a run of today's `dvc.yaml` on today's code would record, apart from the outputs' bits.

Sessions that change only code edit the lock's source md5s by hand when every output comes out the same; these
checks catch what such an edit can get wrong, none of which `dvc repro` from a fresh clone reports where its outputs
match: a stage of the lock that `dvc.yaml` no longer has (or one it lacks), a stage whose recorded deps are not
`dvc.yaml`'s, a source dep whose md5 is not the committed file's, and a dep on another stage's output whose hash is
not that output's (taken from a run on another host, it would make a host that reproduces the lock rewrite it).

Every stage's code is one dep, the listing of its source files that the stage `stage_code` writes
(`pipeline.stages.stage_code`): the committed listings must be today's, and so must the hashes of the folders
`stage_code` reads, or a fresh clone would rerun what the lock says is done, or skip what it should rerun."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lock() -> dict:
    return yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]


@pytest.fixture(scope="module")
def stages() -> dict:
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:  # the lock keeps params apart from the deps
        return {s.name: ([d.def_path for d in s.deps if not isinstance(d, ParamsDependency)], [o.def_path for o in s.outs])
                for s in repo.index.stages if Path(s.path) == ROOT / "dvc.yaml"}  # not realsize/dvc.yaml's


def test_the_lock_has_the_stages_of_dvc_yaml_and_no_other(lock, stages):
    assert sorted(lock) == sorted(stages)


def test_each_stage_records_the_deps_and_outs_dvc_yaml_gives_it(lock, stages):
    for name, (deps, outs) in stages.items():
        assert sorted(d["path"] for d in lock[name].get("deps", [])) == sorted(deps), name
        assert sorted(o["path"] for o in lock[name].get("outs", [])) == sorted(outs), name


def test_every_source_dep_carries_the_md5_of_its_file(lock):
    stale = []
    for name, stage in lock.items():
        for dep in stage.get("deps", []):
            path = ROOT / dep["path"]
            if path.is_file() and not dep["path"].startswith(("data/", "outputs/")) and (
                    hashlib.md5(path.read_bytes()).hexdigest() != dep["md5"] or path.stat().st_size != dep["size"]):
                stale.append(f"{name}: {dep['path']}")
    assert not stale, f"dvc.lock records other source than the tree's (rerun the stages, or update the md5s): {stale[:5]}"


def test_a_dep_on_another_stages_output_carries_that_outputs_hash(lock):
    outs = {o["path"]: o for stage in lock.values() for o in stage.get("outs", [])}
    wrong = [f"{name}: {d['path']}" for name, stage in lock.items() for d in stage.get("deps", [])
             if d["path"] in outs and any(d.get(k) != outs[d["path"]].get(k) for k in ("md5", "size", "nfiles"))]
    assert not wrong, wrong[:5]


def test_the_committed_code_listings_are_todays_and_the_lock_records_them(lock):
    """A listing left stale by a code change would let `dvc repro` skip a stage whose code changed (the lesson
    of the stale perturbation manifests: a fresh clone gets the file from git and trusts it)."""
    from omegaconf import OmegaConf

    from pipeline.stages.layout import PARAMS, stage_code_path
    from pipeline.stages.stage_code import stage_code_listings

    recorded = {o["path"]: o for o in lock["stage_code"]["outs"]}
    for name, text in stage_code_listings().items():
        path = str(stage_code_path(OmegaConf.load(PARAMS), name).relative_to(ROOT))
        assert (ROOT / path).read_text() == text, f"{path} is stale: run `dvc repro stage_code`"
        assert recorded[path]["md5"] == hashlib.md5(text.encode()).hexdigest(), f"dvc.lock records another {path}"


def test_the_lock_records_the_folders_stage_code_reads():
    """DVC's own hash of conf/, pipeline/ and scripts/ (bytecode left out by .dvcignore) is the lock's: the
    stage `stage_code` is up to date, as in a fresh clone."""
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        assert repo.status(targets=["stage_code"]) == {}, "dvc.lock's stage_code is stale: run `dvc repro stage_code`"
