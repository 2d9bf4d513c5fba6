"""The ImageNet-ES loader through the recapture and screening stages on a fixture tree built here
(slow tier): references, two lightings x three camera settings of recaptures, a training folder in
Tiny-ImageNet's `<wnid>/images/` layout, and the three quick models of `paired=tiny`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from PIL import Image

from pipeline.config import ConfigError, validate_config
from pipeline.paired import read_records

ROOT = Path(__file__).resolve().parents[2]
WNIDS = ["n01443537", "n01629819", "n01641577"]
PARAMS = (1, 14, 27)


def _image(label: int, rng: np.random.Generator, noise: float, dim: float = 1.0) -> np.ndarray:
    """A 16x16 image whose class is a bright band at rows 5 * label .. 5 * label + 4, plus noise."""
    img = rng.uniform(0, 60, (16, 16, 3))
    img[5 * label: 5 * label + 5] += 150
    return np.clip(dim * img + rng.normal(0, noise, img.shape), 0, 255).astype(np.uint8)


def _save(path: Path, img: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(img).save(path)


def _fixture(root: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    es = root / "ImageNet-ES" / "es-test"
    for y, wnid in enumerate(WNIDS):
        for i in range(20):
            _save(root / "train" / wnid / "images" / f"{wnid}_{i}.JPEG", _image(y, rng, 10))
        for i in range(8):
            stem = f"val_{y}{i}"
            _save(es / "sampled_tin_no_resize2" / wnid / f"{stem}.JPEG", _image(y, np.random.default_rng(100 * y + i), 10))
            for lighting, dim in (("l1", 0.35), ("l5", 1.0)):
                for param in PARAMS:
                    shot = _image(y, np.random.default_rng(100 * y + i), 10 + 8 * param, dim)
                    _save(es / "param_control" / lighting / f"param_{param}" / wnid / f"{stem}.png", shot)
    (root / "wnids.txt").write_text("\n".join(WNIDS) + "\n")
    return {"root": root / "ImageNet-ES", "wnids": root / "wnids.txt", "train": root / "train"}


def _cfg(tmp: Path, tree: dict[str, Path], extra: list[str] = ()):
    overrides = [f"paths.outputs={tmp}/outputs", f"paths.data={tmp}/data", "paired.source=es_fixture",
                 "paired.recapture.source=es", f"paired.recapture.root={tree['root']}",
                 f"paired.recapture.wnids={tree['wnids']}", f"paired.recapture.train_root={tree['train']}",
                 f"paired.recapture.params=[{','.join(map(str, PARAMS))}]", "paired.screening.group_draws=100",
                 "paired.screening.class_draws=10", "paired.screening.prediction.draws=100", *extra]
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        choose = "paired=tiny" if "paired" in compose("config") else "+paired=tiny"
        return validate_config(compose("config", overrides=[choose, *overrides]))


@pytest.mark.slow
def test_es_tree_through_recapture_and_screening(tmp_path):
    from scripts import recapture, screening

    tree = _fixture(tmp_path / "data_es")
    cfg = _cfg(tmp_path, tree)
    recapture.main(cfg)
    screening.main(cfg)
    out = tmp_path / "outputs"
    real = read_records(out / "records/es_fixture-recapture.parquet")
    synb = read_records(out / "records/es_fixture-recapture.synb.parquet")
    assert len(real) == 3 * 6 * 24 and real["condition"].nunique() == 6
    assert set(real["image_id"]) == {f"{w}/val_{y}{i}" for y, w in enumerate(WNIDS) for i in range(8)}
    assert (real.groupby("image_id")["y"].first() == [WNIDS.index(i.split("/")[0]) for i in sorted(set(real["image_id"]))]).all()
    assert set(synb["condition"]) == {"gaussian_noise-4", "contrast-4"}
    meta = json.loads((out / "records/es_fixture-recapture.json").read_text())
    assert meta["source"] == "es" and meta["conditions"]["l5-param_14"]["setting"] == "ISO 2000, 1/60 s, f/9"
    assert sum(meta["tier_counts"].values()) == 6
    metrics = json.loads((out / "paired/es_fixture/screening/metrics.json").read_text())
    assert metrics["tier_counts"] == meta["tier_counts"] and metrics["n_conditions"] == 6
    cells = pd.read_parquet(out / "paired/es_fixture/screening/cells.parquet")
    evals = real[(real["split"] == "eval") & (real["clean_pred"] == real["y"])].drop_duplicates(["model", "image_id"])
    u = cells[cells["score"] == "neg_U"]
    assert (u["n"].to_numpy() <= evals.groupby("model").size().loc[u["model"]].to_numpy()).all()


def test_es_source_needs_its_paths(tmp_path):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["paired.recapture.source=es"])
    with pytest.raises(ConfigError, match=r"^paired\.recapture\.root: null — a path"):
        validate_config(cfg)
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["paired.recapture.root=/x"])
    with pytest.raises(ConfigError, match=r"^paired\.recapture\.root: '/x' — null for the embedded source"):
        validate_config(cfg)


@pytest.mark.slow
def test_dvc_exp_run_screens_the_es_fixture_tree(tmp_path):
    """`dvc exp run -S …` with the ES loader in a fresh clone: DVC composes conf/ with the overrides and runs
    records, recapture and screening on the fixture tree."""
    import os
    import subprocess

    tree = _fixture(tmp_path / "data_es")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    sets = ["paired=tiny", "paired_suite=[]", "paired.source=es_fixture", "paired.recapture.source=es",
            f"paired.recapture.root={tree['root']}", f"paired.recapture.wnids={tree['wnids']}",
            f"paired.recapture.train_root={tree['train']}", f"paired.recapture.params=[{','.join(map(str, PARAMS))}]",
            "paired.screening.group_draws=100", "paired.screening.class_draws=10", "paired.screening.prediction.draws=100"]
    args = [a for s in sets for a in ("-S", s)]
    done = subprocess.run(["dvc", "exp", "run", "screening", *args], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=3000)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    metrics = json.loads((clone / "outputs/paired/es_fixture/screening/metrics.json").read_text())
    assert metrics["n_conditions"] == 6 and sum(metrics["tier_counts"].values()) == 6
    assert (clone / "outputs/paired/es_fixture/screening/table16.md").read_text().startswith("Table 16")
