"""The one registry mechanism: names -> import paths resolved on first use, facts read without importing,
a plug-in named by its import path, and the errors that list the valid names."""
import subprocess
import sys

import pytest

from pipeline.perturb.registry import Perturbation, available, get_perturbation, register
from pipeline.plugins.registry import Entry, Registry, is_import_path, load_import_path


def test_an_entry_is_imported_only_when_asked_for():
    registry = Registry("thing", {"json_dumps": "json:dumps", "lazy": Entry("pipeline_no_such_module:x", {"modality": "text"})})
    assert registry.names() == ["json_dumps", "lazy"] and registry.facts("lazy") == {"modality": "text"}
    assert registry.where(modality="text") == ["lazy"] and "lazy" in registry and len(registry) == 2
    import json

    assert registry.get("json_dumps") is json.dumps
    with pytest.raises(ValueError, match="cannot import 'pipeline_no_such_module:x'"):
        registry.get("lazy")


def test_a_factory_entry_is_called_with_its_args_once():
    calls = []
    registry = Registry("thing", {"a": Entry(lambda *args: calls.append(args) or args, {}, ("a", 1))})
    assert registry.get("a") == ("a", 1) and registry.get("a") == ("a", 1) and calls == [("a", 1)]


def test_an_import_path_names_a_plug_in():
    assert is_import_path("my_pkg.models:MyModel") and is_import_path("my_pkg.models.MyModel")
    assert not is_import_path("digits_cnn") and not is_import_path("a b.c") and not is_import_path("x:")
    assert load_import_path("pipeline.front.space.Space") is load_import_path("pipeline.front.space:Space")
    registry = Registry("task metric")
    import math

    assert registry.get("math:sqrt") is math.sqrt and registry.facts("math:sqrt") == {}
    with pytest.raises(ValueError, match="module 'math' has no attribute 'nope'"):
        load_import_path("math.nope")


def test_perturbation_registry_keeps_builtins_after_a_user_entry():
    register("test_identity_family", lambda: Perturbation("test_identity_family", "vision", 5, lambda x, lvl, s: x),
             modality="vision", max_level=5)
    assert {"brightness", "glass_blur", "test_identity_family"} <= set(available())
    assert get_perturbation("brightness").max_level == 5 and get_perturbation("test_identity_family").modality == "vision"


def test_a_perturbation_plug_in_by_import_path(tmp_path, monkeypatch):
    (tmp_path / "my_blur_pkg.py").write_text(
        "class Halve:\n    name, modality, max_level = 'halve', 'vision', 3\n"
        "    def apply(self, x, level, seed):\n        return x if level == 0 else x // (2 ** level)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    family = get_perturbation("my_blur_pkg:Halve")  # a class: built with no arguments, keyed by its import path
    assert (family.name, family.modality, family.max_level, family.apply(8, 2, 0)) == ("my_blur_pkg:Halve", "vision", 3, 2)
    with pytest.raises(ValueError, match="'math:pi' is 3.14.*not a perturbation: it needs name, modality, max_level"):
        get_perturbation("math:pi")


def test_unknown_and_duplicate_names_are_refused():
    registry = Registry("search method")
    registry.register("a", 1)
    with pytest.raises(ValueError, match="^unknown search method 'b'; valid choices: a$"):
        registry.get("b")
    with pytest.raises(ValueError, match="search method 'a' is already registered"):
        registry.register("a", 3)


def test_the_config_package_imports_no_domain_module():
    """The configuration sits at the bottom: importing it loads neither torch nor numpy nor the domain."""
    code = ("import sys, pipeline.config; heavy = [m for m in ('torch', 'numpy', 'pandas', 'pipeline.benchmark.build', "
            "'pipeline.search', 'pipeline.perturb') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def _strongly_connected(adjacency: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (iterative: the graph has hundreds of modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in adjacency:
        if root in index:
            continue
        work = [(root, iter(adjacency[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(adjacency[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_strongly_connected_finds_a_planted_cycle():
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e2"], "e2": ["e"]}
    assert sorted(_strongly_connected(graph)) == [["a", "b", "c"], ["e", "e2"]]


def test_no_import_cycle_among_project_modules():
    """Every import statement of pipeline/ and scripts/ (module level and inside functions, as grimp reads
    them) forms an acyclic graph: a module never needs, even lazily, one that needs it."""
    import grimp

    graph = grimp.build_graph("pipeline", "scripts", cache_dir=None)
    adjacency = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    assert len(adjacency) > 150
    assert _strongly_connected(adjacency) == []
