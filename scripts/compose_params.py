"""Write params.yaml, the composition of conf/ that DVC tracks (`make params`; tests check it is current)."""
from __future__ import annotations

import sys

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pipeline.runtime.io import write_text
from pipeline.stages.layout import CONF_DIR, PARAMS

if __name__ == "__main__":
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=sys.argv[1:])
    write_text(OmegaConf.to_yaml(cfg, resolve=True), PARAMS)
