"""The version of the anonbandits distribution (solver and bandit layers): written here only; pyproject.toml
reads it."""

__version__ = "0.1.0"
