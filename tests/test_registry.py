import pytest

from pipeline.perturb.registry import Perturbation, available, get_perturbation, register
from pipeline.registry import Registry


def test_registering_first_keeps_the_builtins():
    """Regression: a user's register() before first use used to hide every built-in perturbation."""
    loaded = []
    registry = Registry("thing", lambda r: (loaded.append(1), r.register("builtin", 1)))
    registry.register("mine", 2)
    assert registry.names() == ["builtin", "mine"] and loaded == [1]
    assert registry.get("builtin") == 1 and "mine" in registry and len(registry) == 2


def test_perturbation_registry_keeps_builtins_after_a_user_entry():
    register("test_identity_family", lambda: Perturbation("test_identity_family", "vision", 5, lambda x, lvl, s: x))
    assert {"brightness", "glass_blur", "test_identity_family"} <= set(available())
    assert get_perturbation("brightness").max_level == 5


def test_unknown_and_duplicate_names_are_refused():
    registry = Registry("search method")
    registry.register("a", 1)
    with pytest.raises(ValueError, match="^unknown search method 'b'; valid choices: a$"):
        registry.get("b")
    with pytest.raises(ValueError, match="search method 'a' is already registered"):
        registry.register("a", 3)
