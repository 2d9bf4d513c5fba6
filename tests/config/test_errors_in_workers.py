"""Every error kind of `pipeline.config.errors`, raised in a real worker process (a spawned
`ProcessPoolExecutor` and joblib's loky backend, the two pools the stages use), reaches the parent as
the same error: same type, same attributes, same one-line message."""
from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from joblib import Parallel, delayed

from pipeline.front.columns import require_columns
from pipeline.config import ConfigError, InputError
from pipeline.config.errors import MISSING_VALUE, Text, yaml_error
from pipeline.config.rules import in_range


def _plain(path: str) -> None:
    raise ConfigError("search.seeds", 1.5, "an integer")


def _missing(path: str) -> None:
    raise ConfigError("model.num_classes", MISSING_VALUE, "a value is required: an integer")


def _rule(path: str) -> None:
    in_range("search.tune.threshold", 2.0, 0, 1)


def _yaml(path: str) -> None:
    try:
        yaml.safe_load("seed: 0\nsearch: {budget: [oops\n")
    except yaml.YAMLError as err:
        raise yaml_error(err, "params.yaml") from None


def _input_cell(path: str) -> None:
    raise InputError("outputs/search/tiny/ssim/random/seed=0.parquet", np.int64(19), "18: u counts distinct configurations",
                     row=3, column="u")


def _input_columns(path: str) -> None:
    require_columns(pd.DataFrame({"theta": [0]}), ["theta", "pareto_ssim"], "outputs/groundtruth/tiny.parquet")


def _input_column_only(path: str) -> None:
    raise InputError("t.parquet", Text("18 proposals"), "exactly B = 45 proposals", column="b")


def _plugin(path: str) -> None:
    """The live-search case: a data set plug-in that refuses its keys, built in the worker."""
    from pipeline.benchmark.plugin_code import build

    build({"_target_": "pipeline.data.text_table.TextTableDataSet", "path": path, "label_column": "lable"}, "benchmark.dataset")


CASES: dict[str, Callable[[str], None]] = {f.__name__.strip("_"): f for f in (
    _plain, _missing, _rule, _yaml, _input_cell, _input_columns, _input_column_only, _plugin)}


def raise_case(name: str, path: str) -> None:
    CASES[name](path)


@pytest.fixture
def csv(tmp_path: Path) -> str:
    path = tmp_path / "reviews.csv"
    path.write_text("text,label\ngood,1\nbad,0\n")
    return str(path)


def expected(name: str, path: str) -> ConfigError:
    """The error as this process raises it."""
    with pytest.raises(ConfigError) as raised:
        raise_case(name, path)
    return raised.value


def assert_same(got: BaseException, want: ConfigError) -> None:
    assert type(got) is type(want)
    assert str(got) == str(want) and "\n" not in str(got)
    assert {k: v for k, v in vars(got).items() if k != "__notes__"} == vars(want)


@pytest.mark.parametrize("name", CASES)
def test_an_error_pickles_whole(name, csv):
    want = expected(name, csv)
    assert_same(pickle.loads(pickle.dumps(want)), want)


def test_a_missing_value_stays_the_one_marker():
    err = pickle.loads(pickle.dumps(ConfigError("model.num_classes", MISSING_VALUE, "a value is required")))
    assert err.value is MISSING_VALUE


def test_each_error_reaches_the_parent_of_a_spawned_process_pool(csv):
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(raise_case, name, csv) for name in CASES}
        for name, future in futures.items():
            assert_same(future.exception(timeout=120), expected(name, csv))


@pytest.mark.parametrize("name", CASES)
def test_each_error_reaches_the_parent_of_joblib_loky_workers(name, csv):
    with pytest.raises(Exception) as raised:
        Parallel(n_jobs=2, backend="loky")(delayed(raise_case)(n, csv) for n in (name, name))
    assert_same(raised.value, expected(name, csv))
