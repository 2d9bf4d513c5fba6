"""docs/benchmark-keys.md names every key of the typed benchmark config and every dataset and feature kind."""
import dataclasses
from pathlib import Path

from pipeline.config.benchmark import FEATURE_KINDS, AdequacyConfig, BenchmarkConfig, KidConfig, PerturbStoreConfig
from pipeline.config.dataset import DATASET_KINDS

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "benchmark-keys.md").read_text()


def keys(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} - {"kind", "_target_"}


def test_every_benchmark_key_is_named():
    for cls in (BenchmarkConfig, KidConfig, PerturbStoreConfig, AdequacyConfig):
        missing = sorted(k for k in keys(cls) if f"| `{k}` |" not in PAGE)
        assert not missing, f"docs/benchmark-keys.md leaves out {cls.__name__}'s {missing}"


def test_every_dataset_and_feature_kind_is_named_with_its_keys():
    for table in (DATASET_KINDS, FEATURE_KINDS):
        for kind, cls in table.items():
            row = next((line for line in PAGE.splitlines() if line.startswith(f"| `{kind}` |")), None)
            assert row is not None, f"docs/benchmark-keys.md has no row for kind {kind!r}"
            missing = sorted(k for k in keys(cls) if f"`{k}`" not in row)
            assert not missing, f"the row of kind {kind!r} leaves out {missing}"
