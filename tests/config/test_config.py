from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[2]


def composed(overrides=()):
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return OmegaConf.to_container(compose("config", overrides=list(overrides)), resolve=True)


def test_params_yaml_is_the_composition_of_conf():
    committed = OmegaConf.to_container(OmegaConf.load(ROOT / "params.yaml"), resolve=True)
    assert committed == composed(), "params.yaml differs from conf/: regenerate it with `make params`"


def test_tiny_overrides_compose():
    cfg = composed(["benchmark=tiny"])
    assert cfg["benchmark"]["name"] == "tiny" and cfg["benchmark"]["levels"] == 3
    assert cfg["benchmark"]["perturbations"] == ["brightness", "pixelate"]


def test_launcher_configs_compose_for_local_and_slurm_sweeps():
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        local = compose("config", overrides=["hydra/launcher=local"], return_hydra_config=True).hydra.launcher
        slurm = compose("config", overrides=["hydra/launcher=slurm"], return_hydra_config=True).hydra.launcher
    assert local["_target_"].endswith("JoblibLauncher") and local["n_jobs"] == -1
    assert slurm["_target_"].endswith("SlurmLauncher") and slurm["cpus_per_task"] == 8
