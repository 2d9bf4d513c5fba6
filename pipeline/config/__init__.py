"""The configuration contract: one module per config group (`benchmark`, `dataset`, `model`, `search`,
`paired`, `fuzz`; `run` the root and `validate_config`), each with its typed nodes and its own rules,
merged through OmegaConf (`merge`), and the one-line `ConfigError` every rejected setting or input file
raises. It imports no domain module: the names a config may choose come from `pipeline.plugins.catalog`."""
from pipeline.config.errors import ConfigError, InputError
from pipeline.config.run import (
    Config,
    apply_overrides,
    derive_defaults,
    derived_mu,
    derived_tune_mu,
    search_budget,
    space_size,
    validate_config,
)

__all__ = [
    "Config",
    "ConfigError",
    "InputError",
    "apply_overrides",
    "derive_defaults",
    "derived_mu",
    "derived_tune_mu",
    "search_budget",
    "space_size",
    "validate_config",
]
