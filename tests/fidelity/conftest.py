"""Fixtures the text fidelity tests share: 20 clean BBC News leads and the default MiniLM encoder."""
from __future__ import annotations

import pytest

from pipeline.data.text_corpus import load_text_splits
from pipeline.models.text_encoder import TextEncoder, default_encoder


@pytest.fixture(scope="module")
def clean() -> list[str]:
    return load_text_splits(seed=0, test_size=20)["test"][0]


@pytest.fixture(scope="module")
def encoder() -> TextEncoder:
    return default_encoder()
