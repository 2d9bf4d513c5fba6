"""The catalog names every built-in once, with facts the configuration checks without importing anything: each
fact must be what the named implementation says of itself, and each constant what its domain uses."""
import inspect

import pytest

from pipeline.plugins import catalog
from pipeline.config.benchmark import FEATURE_KINDS
from pipeline.config.dataset import DATASET_KINDS
from pipeline.config.model import MODEL_KINDS
from pipeline.plugins.registry import is_import_path, load_import_path


@pytest.mark.parametrize("name", catalog.PERTURBATIONS.names())
def test_a_perturbation_is_what_its_facts_say(name):
    from pipeline.perturb.registry import get_perturbation

    family = get_perturbation(name)
    assert (family.name, family.modality, family.max_level) == (name, *catalog.PERTURBATIONS.facts(name).values())


@pytest.mark.parametrize("name", catalog.SEARCH_METHODS.names())
def test_a_search_method_has_its_name_and_population_fact(name):
    from pipeline.search.registry import method_class

    cls = method_class(name)
    assert cls.name == name
    assert ("mu" in cls.hyperparameters()) == catalog.SEARCH_METHODS.facts(name)["population"]


def test_every_entry_of_every_registry_imports():
    for registry in (catalog.FIDELITY, catalog.TASK_METRICS, catalog.ADEQUACY, catalog.FUZZ_ADAPTERS, catalog.ZOO_KINDS, catalog.POOLS):
        for name, entry in registry.items():
            assert entry is not None, (registry.kind, name)


def test_zoo_kinds_and_pools_have_their_modality():
    import numpy as np

    for name in catalog.POOLS:  # what a pool loads is what its modality says
        _, (test_x, _) = catalog.POOLS.get(name)(0, 16)
        vision = isinstance(test_x, np.ndarray) and test_x.ndim == 4 and test_x.dtype == np.uint8
        assert vision == (catalog.POOLS.facts(name)["modality"] == "vision")
        assert vision or all(isinstance(t, str) for t in test_x)
    for name in catalog.ZOO_KINDS:
        config = load_import_path(catalog.ZOO_KINDS.facts(name)["config"])
        factory = catalog.ZOO_KINDS.get(name)
        options = set(inspect.signature(factory).parameters) - {"module"}
        assert options == {f for f in config.__dataclass_fields__} - {"name", "family", "kind"}, name


def test_the_constants_are_the_domains():
    from pipeline.data.humaneval import load_humaneval
    from pipeline.fuzz.campaign import FRONTIER_SCOPES
    from pipeline.perturb.continuous import FAMILIES
    from pipeline.perturb.recapture import LIGHTINGS, N_PARAMS
    from pipeline.search.methods.variation import TOURNAMENTS

    assert tuple(TOURNAMENTS) == catalog.SELECTIONS
    assert FRONTIER_SCOPES == catalog.FRONTIER_SCOPES and FAMILIES == catalog.CONTINUOUS_FAMILIES
    assert tuple(sorted(LIGHTINGS)) == catalog.RECAPTURE_LIGHTINGS and N_PARAMS == catalog.CAMERA_SETTINGS
    assert len(load_humaneval()) == catalog.HUMANEVAL_SIZE


def test_every_kind_names_importable_code():
    for table in (MODEL_KINDS, DATASET_KINDS):
        assert all(cls.modality in (*catalog.MODALITIES, None) for cls in table.values())
    for cls in DATASET_KINDS.values():
        if hasattr(cls, "prepare"):
            assert callable(load_import_path(cls.prepare))
    for cls in FEATURE_KINDS.values():
        assert is_import_path(cls.target) and callable(load_import_path(cls.target))
