"""The package version, in one place (the package, model cards and the REST API report it)."""

__version__ = "0.1.0"
