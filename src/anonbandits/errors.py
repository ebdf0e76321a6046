"""Exception family of the bandit layer; the CLI turns each into one line and exit code 2."""

import numpy as np

from anonbandits._docstrings import fill


class AnonBanditsError(Exception):
    """Base class of every error the bandit layer raises on purpose.

    Catch it to handle any of them; the command line prints its message as one line and exits with code 2.

    Examples
    --------
    >>> issubclass(ConfigError, AnonBanditsError) and issubclass(AnonymityViolation, AnonBanditsError)
    True
    """


class ConfigError(AnonBanditsError, ValueError):
    """An experiment, algorithm parameter or instance description is invalid.

    A ``ValueError`` too, so code that catches bad values in general catches it. Its message is one line
    naming the parameter, what it must be and the value given (see :func:`require`).

    Examples
    --------
    >>> from anonbandits import simulate
    >>> try:
    ...     simulate("se", seed=0, horizon=-5)
    ... except ConfigError as exc:
    ...     print("refused")
    refused
    """


@fill
class AnonymityViolation(AnonBanditsError):
    """An algorithm asked to observe a group smaller than the anonymity parameter C.

    Raised by the anonymous channel's auditor: no result of a run that raised it exists, so no group of C
    or fewer users was ever observed.

    {{refs_paper000}}

    Examples
    --------
    >>> raise AnonymityViolation("a group of 2 users, C = 3")
    Traceback (most recent call last):
    ...
    anonbandits.errors.AnonymityViolation: a group of 2 users, C = 3
    """


def require(ok: bool, name: str, requirement: str, value: object) -> None:
    """Raise the one-line :class:`ConfigError` ``"{name} must be {requirement}, got {value!r}"`` unless ``ok``.

    Parameters
    ----------
    ok : bool
        Whether the requirement holds.
    name : str
        The parameter's name, as the user wrote it.
    requirement : str
        What the value must be, e.g. ``"a positive integer"``.
    value : object
        The value given.

    Raises
    ------
    ConfigError
        If ``ok`` is false; or if ``ok`` is not a bool (a Python or numpy bool: ``0``, ``None`` or an array
        would be a check that tests something else than what it says).

    Examples
    --------
    >>> require(3 > 0, "horizon", "a positive integer", 3)
    >>> require(-3 > 0, "horizon", "a positive integer", -3)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: horizon must be a positive integer, got -3
    """
    if ok is not True and ok is not False and not isinstance(ok, np.bool_):
        raise ConfigError(f"ok must be a bool (the requirement's outcome), got {_shown(ok)}")
    if not ok:
        raise ConfigError(f"{name} must be {requirement}, got {_shown(value)}")


def _shown(value: object) -> str:
    """``repr(value)`` on one line, at most 200 characters (an array's repr spans lines).

    Parameters
    ----------
    value : object
        The value an error message quotes.

    Returns
    -------
    str
        Its ``repr``, whitespace runs collapsed, cut to 200 characters with ``...``.

    Examples
    --------
    >>> import numpy as np
    >>> _shown(np.zeros((2, 2)))
    'array([[0., 0.], [0., 0.]])'
    """
    text = " ".join(repr(value).split())
    return text if len(text) <= 200 else text[:197] + "..."
