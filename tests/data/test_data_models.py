import numpy as np
import pytest
import torch
from PIL import Image

from pipeline.data.digits import digits_images, load_digits_splits
from pipeline.data.tiny_imagenet import load_tiny_imagenet_val
from pipeline.models.cnn import load_cnn, predict_proba, save_cnn, train_cnn
from pipeline.models.torchvision_classifier import TorchvisionClassifier


def test_digits_splits_are_stratified_disjoint_and_complete():
    splits = load_digits_splits(seed=0)
    images, labels = digits_images()
    assert images.shape == (1797, 32, 32, 3) and images.dtype == np.uint8
    assert sum(len(y) for _, y in splits.values()) == 1797
    x, y = splits["test"]
    assert x.shape[1:] == (32, 32, 3) and len(y) == 360
    # stratified: each class's share of the test split is within one image of its overall share
    for c in range(10):
        assert abs((y == c).sum() - 0.2 * (labels == c).sum()) <= 1.0
    # disjoint: no image appears in two splits (digits has few exact duplicates, so compare by identity of bytes+label)
    seen = {}
    for name, (xs, ys) in splits.items():
        for img, lab in zip(xs, ys):
            seen.setdefault((img.tobytes(), lab), []).append(name)
    counts = {k: len(v) for k, v in seen.items()}
    assert sum(counts.values()) == 1797
    assert np.array_equal(load_digits_splits(seed=0)["test"][0], x)
    assert not np.array_equal(load_digits_splits(seed=1)["test"][1], y)


def test_bad_fractions_and_sizes_are_rejected():
    with pytest.raises(ValueError, match="fractions"):
        load_digits_splits(fractions=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="size must be at least 8"):
        digits_images(4)


def test_cnn_trains_saves_and_reloads(tmp_path):
    splits = load_digits_splits(seed=0)
    model = train_cnn(*splits["train"], seed=0, width=8, epochs=3)
    probs = predict_proba(model, splits["test"][0])
    assert probs.shape == (360, 10) and np.allclose(probs.sum(1), 1.0)
    assert (probs.argmax(1) == splits["test"][1]).mean() > 0.8
    save_cnn(model, tmp_path / "m.pt")
    np.testing.assert_array_equal(predict_proba(load_cnn(tmp_path / "m.pt"), splits["test"][0]), probs)
    again = train_cnn(*splits["train"], seed=0, width=8, epochs=3)
    np.testing.assert_array_equal(predict_proba(again, splits["test"][0]), probs)


def make_tiny_imagenet(root, n_classes=3, per_class=2):
    rng = np.random.default_rng(0)
    wnids = [f"n{1000 + i:08d}" for i in range(n_classes)]
    (root / "val" / "images").mkdir(parents=True)
    (root / "wnids.txt").write_text("\n".join(wnids) + "\n")
    lines = []
    for k in range(n_classes * per_class):
        name = f"val_{k}.JPEG"
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(root / "val" / "images" / name, format="JPEG")
        lines.append(f"{name}\t{wnids[k % n_classes]}\t0\t0\t63\t63")
    (root / "val" / "val_annotations.txt").write_text("\n".join(lines) + "\n")
    return wnids


def test_tiny_imagenet_loader_and_torchvision_adapter(tmp_path):
    make_tiny_imagenet(tmp_path)
    x, y = load_tiny_imagenet_val(tmp_path)
    assert x.shape == (6, 64, 64, 3) and x.dtype == np.uint8
    assert y.tolist() == [0, 1, 2, 0, 1, 2]
    assert len(load_tiny_imagenet_val(tmp_path, limit=4)[1]) == 4
    torch.manual_seed(0)
    model = TorchvisionClassifier("resnet18", num_classes=3, input_size=64)
    torch.save(model.net.state_dict(), tmp_path / "w.pt")
    reloaded = TorchvisionClassifier("resnet18", num_classes=3, weights_path=tmp_path / "w.pt", input_size=64)
    probs = predict_proba(reloaded, x)
    assert probs.shape == (6, 3)
    np.testing.assert_allclose(probs, predict_proba(model, x), atol=1e-6)


def test_tiny_imagenet_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="wnids.txt"):
        load_tiny_imagenet_val(tmp_path)
    make_tiny_imagenet(tmp_path)
    with open(tmp_path / "val" / "val_annotations.txt", "a") as fh:
        fh.write("val_0.JPEG\tn99999999\t0\t0\t1\t1\n")
    with pytest.raises(ValueError, match="n99999999"):
        load_tiny_imagenet_val(tmp_path)
    with pytest.raises(ValueError, match="unknown torchvision architecture 'nope'"):
        TorchvisionClassifier("nope", 3)
