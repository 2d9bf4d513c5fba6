"""The one plug-in mechanism: the registry of named parts, the built-in catalog and the protocols a user's
part implements."""
