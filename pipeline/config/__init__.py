"""The configuration contract: the typed schema of conf/ (= params.yaml), `validate_config`, and the
one-line `ConfigError` every rejected setting or input file raises."""
from pipeline.config.errors import ConfigError, InputError
from pipeline.config.schema import (
    Config,
    apply_overrides,
    derive_defaults,
    derived_mu,
    derived_tune_mu,
    register_schema,
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
    "register_schema",
    "space_size",
    "validate_config",
]
