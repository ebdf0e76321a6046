"""anonbandits: anonymous and private multi-user bandits on top of the ``anondecomp`` solver layer."""

from anonbandits.errors import AnonBanditsError, AnonymityViolation, ConfigError

__all__ = ["AnonBanditsError", "AnonymityViolation", "ConfigError"]
__version__ = "0.1.0"
