"""docs/plugins.md's table of what each plug-in provides agrees with `pipeline.plugins.protocols` (and, for fuzz
adapters, with what `pipeline.fuzz.adapters.as_adapter` reads)."""
import re
from pathlib import Path

import pytest

from pipeline.fuzz.adapters import PLUGIN_OPTIONAL, PLUGIN_REQUIRED
from pipeline.plugins import protocols

ROOT = Path(__file__).resolve().parents[2]
ROWS = {"a model under test": (protocols.Classifier, protocols.Predictor), "a data set": (protocols.DataSet,),
        "a perturbation family": (protocols.Perturbation,), "a model under structural fuzzing": (protocols.FuzzAdapter,)}


def members(protocol: type) -> set[str]:
    """What a protocol requires: its annotated attributes and the methods it defines."""
    own = {n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}
    return own | set(getattr(protocol, "__annotations__", {}))


def provided(row: str) -> tuple[set[str], set[str]]:
    """(required, optional) names in the 'it provides' cell of the table row for `row`."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    line = next(line for line in text.splitlines() if line.startswith(f"| {row} |"))
    cell = line.split(" | ")[1]
    required, _, optional = cell.partition("optional:")
    names = lambda part: {m.group(1) for m in re.finditer(r"`([A-Za-z_]\w*)", part)}  # noqa: E731
    return names(required), names(optional)


@pytest.mark.parametrize("row", sorted(ROWS))
def test_each_row_names_what_its_protocol_requires(row):
    required, _ = provided(row)
    wanted = set().union(*(members(p) for p in ROWS[row]))
    assert wanted <= required, f"docs/plugins.md's row '{row}' leaves out {sorted(wanted - required)}"


def test_the_fuzz_adapter_row_is_what_the_campaign_reads():
    required, optional = provided("a model under structural fuzzing")
    assert members(protocols.FuzzAdapter) == set(PLUGIN_REQUIRED)
    assert set(PLUGIN_REQUIRED) <= required and set(PLUGIN_OPTIONAL) == optional


def test_the_optional_members_are_named():
    assert "inputs" in provided("a perturbation family")[1]
    assert {"aggregate", "per_input"} <= provided("a fidelity metric")[1]
