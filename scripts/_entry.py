"""How every stage script gets its configuration.

Run with no arguments (as `dvc repro` does), a stage reads `params.yaml`, the committed composition of
`conf/` that DVC tracks (and rewrites on `dvc exp run -S ...`); `--params key=value …` reads params.yaml
and sets those keys (how one script serves several DVC stages). Run with arguments, it is a Hydra app over
`conf/`: `python scripts/groundtruth.py benchmark=digits shard=0 num_shards=4`, or `-m` for a multirun
sweep with any launcher (`hydra/launcher=joblib`, `hydra/launcher=submitit_slurm`).
Every stage runs in the pinned numerical environment of `pipeline.numerics` (same bits on any AVX2
machine), whoever starts it: `dvc repro`, `dvc exp run`, Hydra multirun jobs or a plain `python` call.
A ValueError (bad input) is reported as one line naming the bad value, with exit status 2.
"""
from __future__ import annotations

from pipeline.numerics import configure_torch, ensure_pinned

ensure_pinned()  # before numpy or torch load (re-executes the script if needed)

import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

from omegaconf import DictConfig, OmegaConf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONF_DIR = ROOT / "conf"
PARAMS = ROOT / "params.yaml"


def run_stage(task: Callable[[DictConfig], Any]) -> None:
    """Call `task(cfg)` with params.yaml (no CLI arguments) or with Hydra's composition of conf/."""
    configure_torch()
    try:
        if len(sys.argv) == 1 or sys.argv[1] == "--params":
            cfg = OmegaConf.load(PARAMS)
            cfg.merge_with_dotlist(sys.argv[2:])
            task(cfg)
            return
        import hydra

        hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(task)()
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def plain(cfg: Any) -> Any:
    """A config node as plain Python containers (what the library accepts)."""
    return OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else cfg
