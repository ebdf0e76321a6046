"""anonbandits: anonymous and private multi-user bandits on top of the ``anondecomp`` solver layer."""

from anonbandits._version import __version__
from anonbandits.errors import AnonBanditsError, AnonymityViolation, ConfigError
from anonbandits.registry import simulate
from anonbandits.results import Result

__all__ = ["AnonBanditsError", "AnonymityViolation", "ConfigError", "Result", "__version__", "simulate"]
