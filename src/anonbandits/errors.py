"""Exception family of the bandit layer; the CLI turns each into one line and exit code 2."""


class AnonBanditsError(Exception):
    """Base class of every error the bandit layer raises on purpose."""


class ConfigError(AnonBanditsError, ValueError):
    """An experiment, algorithm parameter or instance description is invalid."""


class AnonymityViolation(AnonBanditsError):
    """An algorithm asked to observe a group smaller than the anonymity parameter C."""


def require(ok: bool, name: str, requirement: str, value: object) -> None:
    """Raise the one-line :class:`ConfigError` ``"{name} must be {requirement}, got {value!r}"`` unless ``ok``."""
    if not ok:
        raise ConfigError(f"{name} must be {requirement}, got {value!r}")
