import pytest
import torch

from pipeline.data.digits import load_digits_splits
from pipeline.models.cnn import train_cnn


@pytest.fixture(scope="session")
def digits():
    return load_digits_splits(seed=0, size=32)


@pytest.fixture(scope="session")
def tiny_cnn(digits):
    """A width-4 CNN trained for two epochs: seconds on CPU, good enough to have a few errors."""
    torch.manual_seed(0)
    return train_cnn(*digits["train"], seed=0, width=4, epochs=2)
