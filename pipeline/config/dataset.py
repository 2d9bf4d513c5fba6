"""`benchmark.dataset`: the clean test set D. Its `kind` names the typed node below (keys, modality); its
`_target_` the implementation (`pipeline.plugins.protocols.DataSet`) that `hydra.utils.instantiate` builds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from omegaconf import MISSING

from pipeline.plugins.catalog import HUMANEVAL_SIZE
from pipeline.config.errors import ConfigError
from pipeline.config.rules import at_least, choice, optional_at_least, positive
from pipeline.plugins.registry import is_import_path


@dataclass
class DigitsDataset:
    """The embedded scikit-learn digits, upsampled to `size` × `size` RGB."""

    modality: ClassVar[str] = "vision"
    prepare: ClassVar[str] = "pipeline.benchmark.preparation:prepare_digits"
    kind: str = "digits"
    _target_: str = MISSING
    size: int = MISSING
    split_seed: int = MISSING
    test_limit: int | None = MISSING


@dataclass
class TinyImagenetDataset:
    """Tiny-ImageNet validation images read from `root`."""

    modality: ClassVar[str] = "vision"
    kind: str = "tiny_imagenet"
    _target_: str = MISSING
    root: str = MISSING
    limit: int | None = MISSING
    size: int | None = MISSING


@dataclass
class BBCNewsDataset:
    """The embedded text data set: BBC News lead paragraphs labelled by section (`pipeline.data.text_corpus`)."""

    modality: ClassVar[str] = "text"
    prepare: ClassVar[str] = "pipeline.benchmark.preparation:prepare_bbc_news"
    kind: str = "bbc_news"
    _target_: str = MISSING
    split_seed: int = MISSING
    test_size: int | None = MISSING


@dataclass
class HumanEvalDataset:
    """The embedded code data set: HumanEval problems with their tests (`pipeline.data.humaneval`), each
    prompt held `variants` times in D (ReCode's s perturbed variants per problem of RP_s@1)."""

    modality: ClassVar[str] = "code"
    prepare: ClassVar[str] = "pipeline.benchmark.preparation:prepare_humaneval"
    kind: str = "humaneval"
    _target_: str = MISSING
    problems: int | None = MISSING          # `problems` HumanEval problems from index `first` (null = all from `first`)
    first: int = 0                          # index of the first problem of D (0 = HumanEval/0)
    variants: int = MISSING                 # s of RP_s@1: perturbed variants (seeds) per problem
    fidelity_variants: int | None = MISSING  # the first k variants of each problem that φ scores (null = all)
    timeout_s: float = MISSING              # sandbox wall-clock limit of one test run


@dataclass
class QQPDataset:
    """Quora Question Pairs read from a local GLUE copy or `datasets` folder at `root` (`pipeline.data.qqp`):
    the first `limit` dev pairs (null = all)."""

    modality: ClassVar[str] = "text"
    prepare: ClassVar[str] = "pipeline.benchmark.preparation:prepare_qqp"
    kind: str = "qqp"
    _target_: str = MISSING
    root: str | None = MISSING
    limit: int | None = MISSING


@dataclass
class ImageFolderDataset:
    """Images in torchvision's ImageFolder layout (`root/<class>/<image>`), any size (`pipeline.data.image_folder`)."""

    modality: ClassVar[str] = "vision"
    kind: str = "image_folder"
    _target_: str = MISSING
    root: str = MISSING
    size: int | None = MISSING     # resize to size x size (null: every image must share one size)
    limit: int | None = MISSING    # a seeded random subset of this many images (null: all)
    seed: int = MISSING


@dataclass
class TextCSVDataset:
    """Texts and labels from a CSV, TSV or JSONL file (`pipeline.data.text_table`)."""

    modality: ClassVar[str] = "text"
    kind: str = "text_csv"
    _target_: str = MISSING
    path: str = MISSING
    text_column: str = MISSING
    label_column: str = MISSING
    limit: int | None = MISSING
    seed: int = MISSING
    labels: list[str] | None = MISSING   # class order of string labels (null: sorted)


@dataclass
class ExternalDataset:
    """A user's data set: `_target_` names it, every other key is passed to it (`pipeline.plugins.protocols.DataSet`)."""

    modality: ClassVar[str | None] = None
    open: ClassVar[bool] = True
    kind: str = "external"
    _target_: str = MISSING


DATASET_KINDS: dict[str, type] = {"digits": DigitsDataset, "tiny_imagenet": TinyImagenetDataset, "bbc_news": BBCNewsDataset,
                                  "humaneval": HumanEvalDataset, "qqp": QQPDataset, "image_folder": ImageFolderDataset,
                                  "text_csv": TextCSVDataset, "external": ExternalDataset}


def check_dataset(ds: dict[str, Any], task_metric: str) -> int | None:
    """The ranges of each data set kind; returns how many inputs D keeps when the config says (else None)."""
    limit = None
    if ds["kind"] == "digits":
        at_least("benchmark.dataset.size", ds["size"], 8, " (the digits' native resolution is 8)")
        at_least("benchmark.dataset.split_seed", ds["split_seed"], 0)
        optional_at_least("benchmark.dataset.test_limit", ds["test_limit"], 1, "all images")
        limit = ds["test_limit"]
    elif ds["kind"] == "bbc_news":
        at_least("benchmark.dataset.split_seed", ds["split_seed"], 0)
        optional_at_least("benchmark.dataset.test_size", ds["test_size"], 5, "the full test split; one lead per section at least")
        limit = ds["test_size"]
    elif ds["kind"] == "humaneval":
        if not 0 <= ds["first"] < HUMANEVAL_SIZE:
            raise ConfigError("benchmark.dataset.first", ds["first"], f"an integer in 0..{HUMANEVAL_SIZE - 1} (a HumanEval index)")
        left = HUMANEVAL_SIZE - ds["first"]
        if ds["problems"] is not None and not 1 <= ds["problems"] <= left:
            raise ConfigError("benchmark.dataset.problems", ds["problems"], f"null (all {left} from benchmark.dataset.first) or "
                              f"an integer in 1..{left}")
        at_least("benchmark.dataset.variants", ds["variants"], 1, " (RP5@1: 5)")
        if ds["fidelity_variants"] is not None and not 1 <= ds["fidelity_variants"] <= ds["variants"]:
            raise ConfigError("benchmark.dataset.fidelity_variants", ds["fidelity_variants"], f"null (all) or an integer in "
                              f"1..{ds['variants']} (benchmark.dataset.variants)")
        positive("benchmark.dataset.timeout_s", ds["timeout_s"], " (seconds)")
        choice("benchmark.task_metric", task_metric, ["robust_pass"], " (a code benchmark's model answers pass or fail "
               "per variant)")
        limit = (ds["problems"] or left) * ds["variants"]
    elif ds["kind"] == "qqp":
        if ds["root"] is None or not ds["root"].strip():
            raise ConfigError("benchmark.dataset.root", ds["root"], "a local QQP copy: a GLUE folder (QQP/dev.tsv or dev.tsv) or a "
                              "`datasets` save_to_disk folder; set the environment variable QQP_ROOT (read by "
                              "conf/benchmark/qqp.yaml) or pass benchmark.dataset.root=<folder>")
        optional_at_least("benchmark.dataset.limit", ds["limit"], 1, "the whole dev split")
        limit = ds["limit"]
    elif ds["kind"] == "text_csv":
        if not ds["path"].strip():
            raise ConfigError("benchmark.dataset.path", ds["path"], "a CSV, TSV or JSONL file with a text and a label column")
        optional_at_least("benchmark.dataset.limit", ds["limit"], 1, "every row")
        limit = ds["limit"]
    elif ds["kind"] == "external":
        if not is_import_path(ds["_target_"]):
            raise ConfigError("benchmark.dataset._target_", ds["_target_"], "the import path of the data set's class or factory in "
                              "your own package, e.g. my_pkg.data.MyTestSet")
    else:
        if not ds["root"].strip():
            raise ConfigError("benchmark.dataset.root", ds["root"], "a non-empty folder path")
        optional_at_least("benchmark.dataset.limit", ds["limit"], 1, "all images")
        optional_at_least("benchmark.dataset.size", ds["size"], 1, "keep the native size")
        limit = ds["limit"]
    return limit
