"""The `prepare` stage's library: clean inputs, labels, splits and the embedded models of a benchmark, one
function per data set kind that needs preparing (its `prepare` in `pipeline.config.dataset`; real-world
data sets are read where they are). A model of another kind than the data set's own built-in (a user's
plug-in, a Hugging Face folder) is trained by nobody here: only the data and the KID feature network are
prepared for it."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pipeline.config.dataset import DATASET_KINDS
from pipeline.config.model import MODEL_KINDS
from pipeline.data.digits import load_digits_splits
from pipeline.runtime.io import atomic_path, write_json, write_text
from pipeline.models.cnn import predict_proba, save_cnn, train_cnn
from pipeline.plugins.registry import load_import_path

Spec = dict[str, Any]


def own_model(spec: Spec) -> bool:
    """Whether the model under test is the data set's own built-in (trained or checked by its preparer)."""
    return spec["dataset"]["kind"] in getattr(MODEL_KINDS[spec["model"]["kind"]], "datasets", ())


def prepare_digits(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Split the digits, train the model under test and the KID feature network; return clean metrics."""
    data_dir = Path(data_dir)
    ds = spec["dataset"]
    splits = load_digits_splits(seed=int(ds.get("split_seed", 0)), size=int(ds.get("size", 32)))
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = data_dir / ".splits.tmp.npz"
    np.savez_compressed(tmp, **{f"{k}_{xy}": v for k, (x, y) in splits.items() for xy, v in (("x", x), ("y", y))})
    tmp.replace(data_dir / "splits.npz")
    metrics = {f"n_{k}": len(y) for k, (_, y) in splits.items()}
    roles = (("model", "model.pt"), ("features", "features.pt")) if own_model(spec) else (("features", "features.pt"),)
    for role, file in roles:
        m = spec[role]
        net = train_cnn(*splits["train"], seed=int(m["seed"]), width=int(m["width"]), epochs=int(m["epochs"]), progress=progress)
        save_cnn(net, data_dir / file)
        for split in ("dev", "test"):
            x, y = splits[split]
            metrics[f"{role}_{split}_accuracy"] = float((predict_proba(net, x).argmax(1) == y).mean())
        if role == "model" and spec.get("adequacy"):
            save_adequacy_profile(net, splits["train"][0], spec["adequacy"], data_dir / "adequacy_profile.npz")
    return metrics


def save_adequacy_profile(net: Any, train_x: np.ndarray, adequacy: Spec, path: Path) -> None:
    """The training-set activation profile the adequacy metrics compare with (TestNav §4.4): per-neuron
    bounds of every layer and the penultimate traces, classes = the model's own training predictions
    (as Kim et al. do for LSA / DSA)."""
    from pipeline.adequacy import AdequacySettings, build_profile
    from pipeline.adequacy.hooks import capture
    from pipeline.models.cnn import to_tensor

    settings = AdequacySettings.from_spec(adequacy)
    logits, acts = capture(net, settings.layers, train_x, transform=to_tensor)
    build_profile(acts, logits.argmax(1), settings.surprise_layers).save(path)


def prepare_bbc_news(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Split the BBC News leads (the test split, or its stratified subset of `test_size`, is D), write D as
    test.json, train the logistic head on the frozen MiniLM encoder (model.npz); return clean metrics."""
    import json

    from pipeline.data.text_corpus import load_text_splits
    from pipeline.models.text_encoder import train_text_classifier

    data_dir = Path(data_dir)
    ds, model = spec["dataset"], spec["model"]
    splits = load_text_splits(seed=int(ds["split_seed"]), test_size=ds.get("test_size"))
    texts, labels = splits["test"]
    metrics: dict[str, float] = {f"n_{k}": len(y) for k, (_, y) in splits.items()}
    if not own_model(spec):
        write_text(json.dumps({"texts": texts, "labels": labels.tolist()}, indent=0), data_dir / "test.json")
        return metrics
    head = train_text_classifier(*splits["train"], C=float(model["C"]), max_iter=int(model["max_iter"]))
    write_text(json.dumps({"texts": texts, "labels": labels.tolist()}, indent=0), data_dir / "test.json")
    with atomic_path(data_dir / "model.npz") as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **head.state())
    if spec.get("adequacy"):
        save_text_adequacy_profile(head, splits["train"][0], spec["adequacy"], data_dir)
    for split in ("dev", "test"):
        x, y = splits[split]
        metrics[f"model_{split}_accuracy"] = float((head.predict(x) == y).mean())
    return metrics


def save_text_adequacy_profile(head: Any, train_texts: list[str], adequacy: Spec, data_dir: Path) -> None:
    """The text model's training profile for the adequacy metrics (`pipeline.adequacy.text_model`): the
    principal axes of the training sentence embeddings (adequacy_projection.npz) and the profile of the
    token-averaged block outputs and projected embeddings, classes = the head's training predictions."""
    from pipeline.adequacy import build_profile
    from pipeline.adequacy.text_model import (
        encoder_views,
        fit_projection,
        text_activations,
        text_settings,
    )

    layers, sentences = encoder_views(head.encoder.encode(train_texts))
    projection = fit_projection(sentences)
    projection.save(data_dir / "adequacy_projection.npz")
    settings = text_settings(adequacy, layers.shape[1])
    profile = build_profile(text_activations(layers, sentences, projection), head.predict(train_texts), settings.surprise_layers)
    profile.save(data_dir / "adequacy_profile.npz")


def prepare_humaneval(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Write D (`problems` HumanEval problems from index `first`, each prompt `variants` times) and the retrieval
    model's bank (all 164 problems with their canonical solutions) into `data_dir` (`pipeline.code.assets`);
    return the clean pass rate of the model on D, executed in the sandbox (at θ = 0 the variants of a
    problem are one prompt, so RP_s@1 = pass@1)."""
    from pipeline.code.assets import code_predictor, write_code_assets
    from pipeline.data.humaneval import load_humaneval

    ds = spec["dataset"]
    bank = load_humaneval()
    first = int(ds.get("first", 0))
    problems = bank[first : first + ds["problems"]] if ds.get("problems") is not None else bank[first:]
    write_code_assets(problems, bank, int(ds["variants"]), float(ds["timeout_s"]), data_dir)
    if not own_model(spec):
        return {"n_problems": len(problems), "n_inputs": len(problems) * int(ds["variants"]), "n_bank": len(bank)}
    predict = code_predictor(spec["model"], data_dir)
    passed = predict([p.prompt for p in problems for _ in range(int(ds["variants"]))])
    return {"n_problems": len(problems), "n_inputs": len(passed), "n_bank": len(bank),
            "model_clean_pass_at_1": float(passed.mean()), "sandbox_runs": predict.cache.runs}


def prepare_qqp(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Write D (the first `limit` QQP dev pairs of the local copy at `dataset.root`, `pipeline.data.qqp`) as
    test.json and a record of the checkpoint the model under test reads (weights.json: folder and sha256, so
    the prepared assets name the weights); return the model's clean accuracy on D (nothing is trained)."""
    from pipeline.data.qqp import load_qqp, write_pairs
    from pipeline.runtime.device import resolve_device
    from pipeline.models.pair_classifier import PairClassifier, weights_record

    data_dir = Path(data_dir)
    ds, model = spec["dataset"], spec["model"]
    pairs, labels = load_qqp(ds["root"], ds.get("limit"))
    write_pairs(pairs, labels, data_dir / "test.json")
    if not own_model(spec):
        return {"n_test": len(labels), "n_duplicate": int(labels.sum())}
    record = weights_record(model.get("weights_path"))
    write_json(record, data_dir / "weights.json")
    classifier = PairClassifier(model["weights_path"], batch_size=int(spec.get("batch_size", 32)), max_length=int(model["max_length"]),
                                device=resolve_device(model.get("device", "cpu"), "model.device"))
    predictions = classifier.predict(pairs)
    return {"n_test": len(labels), "n_duplicate": int(labels.sum()), "model_test_accuracy": float(np.mean(predictions == labels))}


def record_test_set(spec: Spec, data_dir: str | Path) -> dict[str, float]:
    """A data set read where it lies (an image folder, a text file, a user's plug-in): the size and sha256 of
    its clean test set D in `data_dir/test_set.json`, so that the prepared folder, and with it every resume
    key that names the assets (`asset_digest`), changes when the data do."""
    from pipeline.runtime.fingerprint import inputs_digest
    from pipeline.benchmark.plugin_code import build

    data_dir = Path(data_dir)
    inputs, labels = build(spec["dataset"], "benchmark.dataset", data_dir=data_dir, device=spec["model"].get("device", "cpu"),
                           batch_size=int(spec.get("batch_size", 512))).test_set()
    labels = np.asarray(labels, dtype=np.int64)
    record = {"n_test": len(labels), "n_classes": int(labels.max()) + 1 if len(labels) else 0,
              "sha256": inputs_digest(inputs, labels)}
    write_json(record, data_dir / "test_set.json")
    return {"n_test": record["n_test"], "n_classes": record["n_classes"]}


def prepare(spec: Spec, data_dir: str | Path, progress: bool = True) -> dict[str, float]:
    """Prepare the assets of `spec` into `data_dir`; returns clean metrics. A data set read where it lies is
    recorded (`record_test_set`): the model under test is then a user's or a local checkpoint, never trained."""
    preparer = getattr(DATASET_KINDS[spec["dataset"]["kind"]], "prepare", None)
    if preparer is None:
        return record_test_set(spec, data_dir)
    return load_import_path(preparer)(spec, data_dir, progress)
