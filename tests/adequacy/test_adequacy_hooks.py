"""hooks.capture on the digits CNN: one forward pass gives the model's own logits and the activations."""
import numpy as np
import pytest
import torch
from torch import nn

from pipeline.adequacy.hooks import capture
from pipeline.models.cnn import SmallCNN, to_tensor

LAYERS = ["features.1", "features.4", "features.8"]


@pytest.fixture(scope="module")
def cnn():
    torch.manual_seed(0)
    return SmallCNN(width=4, n_classes=10, image_size=16).eval()


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(0).integers(0, 256, size=(6, 16, 16, 3), dtype=np.uint8)


def _count_calls(module):
    calls = []
    handle = module.register_forward_pre_hook(lambda m, args: calls.append(args[0].shape[0]))
    return calls, handle


def test_one_pass_gives_logits_and_activations(cnn, images):
    calls, handle = _count_calls(cnn)
    conv_calls, conv_handle = _count_calls(cnn.features[0])
    try:
        logits, acts = capture(cnn, LAYERS, images, batch_size=64, transform=to_tensor)
    finally:
        handle.remove()
        conv_handle.remove()
    assert calls == [6] and conv_calls == [6]  # one forward pass over all six inputs, no second inference
    x = to_tensor(images)
    with torch.no_grad():
        expected = cnn(x)
        conv1 = cnn.features[1](cnn.features[0](x))
        conv2 = cnn.features[4](cnn.features[3](cnn.features[2](conv1)))
        embed = cnn.embed(x)
    assert logits.dtype == np.float32 and logits.shape == (6, 10)
    np.testing.assert_array_equal(logits, expected.numpy())
    assert {k: v.shape for k, v in acts.items()} == {"features.1": (6, 4), "features.4": (6, 8), "features.8": (6, 64)}
    np.testing.assert_allclose(acts["features.1"], conv1.mean(dim=(2, 3)).numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(acts["features.4"], conv2.mean(dim=(2, 3)).numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(acts["features.8"], embed.numpy())


def test_batches_are_one_pass_each_and_hooks_go_away(cnn, images):
    cnn.train()
    calls, handle = _count_calls(cnn)
    try:
        logits, acts = capture(cnn, ["features.8"], images, batch_size=4, transform=to_tensor)
    finally:
        handle.remove()
    assert calls == [4, 2] and cnn.training  # the caller's mode comes back
    cnn.eval()
    with torch.no_grad():
        expected = torch.cat([cnn(to_tensor(images[:4])), cnn(to_tensor(images[4:]))])
    np.testing.assert_array_equal(logits, expected.numpy())
    assert acts["features.8"].shape == (6, 64)
    assert all(not m._forward_hooks for m in cnn.modules())


def test_tensor_inputs_and_refusals(cnn, images):
    x = to_tensor(images)
    logits, _ = capture(cnn, ["features.4"], x)
    with torch.no_grad():
        np.testing.assert_array_equal(logits, cnn(x).numpy())
    with pytest.raises(ValueError, match="unknown: \\['nope'\\]"):
        capture(cnn, ["nope"], x)
    with pytest.raises(ValueError, match="no inputs"):
        capture(cnn, ["features.4"], x[:0])

    class Reuses(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.act = nn.Linear(3, 3), nn.ReLU()

        def forward(self, v):
            return self.act(self.fc(self.act(v)))

    model = Reuses()
    with pytest.raises(ValueError, match="ran 2 times"):
        capture(model, ["act"], torch.zeros(2, 3))
    assert not model.act._forward_hooks  # removed after the failure too
