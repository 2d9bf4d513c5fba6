"""The committed perturbation manifests (`outputs/perturb/<benchmark>.json`, written by the `perturb` stage) name
the store that today's code computes: its digest covers the clean set and the perturbation code
(`pipeline.perturb.materialize`), so a change of that code must come with a rerun of the stage. DVC cannot see a
stale manifest: a fresh clone gets it from git, and DVC skips a stage whose dependencies and git-tracked output
match the lock (the four manifests were stale from e60e0c2, which changed `compose.py`, to fa65145)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.benchmark.conformance import conform_inputs
from pipeline.perturb.materialize import PerturbationStore
from pipeline.perturb.registry import get_perturbation
from pipeline.front.space import Space
from pipeline.stages.runner import load_params

ROOT = Path(__file__).resolve().parents[2]


def _clean_set(spec: dict, tmp_path: Path):
    """D of the benchmark as its prepare stage writes it, without training anything."""
    ds = spec["dataset"]
    if ds["kind"] == "digits":
        from pipeline.data.digits import load_digits_splits

        return load_digits_splits(seed=int(ds["split_seed"]), size=int(ds["size"]))["test"][0]
    if ds["kind"] == "bbc_news":
        from pipeline.data.text_corpus import load_text_splits

        return load_text_splits(seed=int(ds["split_seed"]), test_size=ds["test_size"])["test"][0]
    from pipeline.code.assets import load_code_set, write_code_assets
    from pipeline.data.humaneval import load_humaneval

    bank = load_humaneval()
    first = int(ds.get("first", 0))
    write_code_assets(bank[first : first + ds["problems"]], bank, int(ds["variants"]), float(ds["timeout_s"]), tmp_path)
    return load_code_set(tmp_path)[0]


@pytest.mark.parametrize("benchmark", ["digits", "bbc_news", "humaneval"])
def test_the_committed_manifest_names_the_store_of_todays_code(benchmark, tmp_path):
    from omegaconf import OmegaConf

    spec = OmegaConf.to_container(load_params([f"benchmark={benchmark}"]).benchmark, resolve=True)
    perturbations = [get_perturbation(n) for n in spec["perturbations"]]
    clean = conform_inputs(_clean_set(spec, tmp_path), perturbations, spec.get("adapt_inputs"))
    store = PerturbationStore(tmp_path, perturbations, clean, Space(tuple(spec["perturbations"]), int(spec["levels"])),
                              int(spec["seed"]))
    manifest = json.loads((ROOT / "outputs" / "perturb" / f"{benchmark}.json").read_text())
    assert manifest["digest"] == store.digest, f"outputs/perturb/{benchmark}.json is stale: rerun `dvc repro -f -s perturb…`"
