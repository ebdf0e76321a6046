"""The checks every parameter of the bandit layer passes, written once for the registry and the library.

A :class:`Rule` is a test on one (already converted) value and the requirement it states. :data:`RULES` holds
the rule of each name of the one parameter vocabulary (``users``, ``horizon``, ``reward_sigma``, ...; see
docs/parameters.md), so that ``--horizon 0``, ``horizon = 0`` in a grid file,
``simulate("dp-se", seed=0, horizon=0)`` and a library call such as ``run_elimination(..., horizon=0)`` all
fail with the same one line. :class:`anonbandits.spec.Param` takes its rule from here by name (or its own
``rule``); :func:`validated` wraps the library functions that the family packages export, checking every
argument whose name (or mapped name) has a rule before the function runs.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from anonbandits.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Rule:
    """A test of one value and the requirement it states.

    Parameters
    ----------
    test : callable
        ``test(value) -> bool``; a ``TypeError``, ``ValueError`` or ``OverflowError`` it raises counts as false.
    requirement : str
        What a value must be, as the error message says it (``"a positive integer"``).
    convert : callable, optional
        Library arguments only: turns an accepted value into the form the function expects (a list into an
        array); ``None`` (default): the value is passed as given.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
    (its anonymity parameter C must be at least 1).

    Examples
    --------
    >>> rule = int_at_least(1)
    >>> rule.check("C", 3)
    >>> rule.check("C", 0)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: C must be at least 1, got 0
    """

    test: Callable[[Any], bool]
    requirement: str
    convert: Callable[[Any], Any] | None = None

    def check(self, called: str, value: Any) -> None:
        """Raise :class:`ConfigError` ``"{called} must be {requirement}, got {value!r}"`` unless the value passes.

        Parameters
        ----------
        called : str
            How the error message names the argument (``"C"``, ``"--users"``).
        value : object
            The value to test.

        Raises
        ------
        ConfigError
            If ``test(value)`` is false or raises ``TypeError``, ``ValueError`` or ``OverflowError``.

        Examples
        --------
        >>> rule = Rule(lambda v: v > 0, "positive")
        >>> rule.check("horizon", 5)
        >>> rule.check("horizon", "five")
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: horizon must be positive, got 'five'
        """
        try:
            ok = bool(self.test(value))
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise ConfigError(f"{called} must be {self.requirement}, got {value!r}")


def is_integer(value: Any) -> bool:
    """Whether ``value`` is a Python or numpy integer, not a bool (``True`` is not the integer 1 here).

    Parameters
    ----------
    value : object
        Any value.

    Returns
    -------
    bool
        True for an ``int`` or a numpy integer that is not a bool.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
    (the integer parameters N, K and C).

    Examples
    --------
    >>> import numpy as np
    >>> is_integer(3), is_integer(np.int64(3)), is_integer(3.0), is_integer(True)
    (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_) and not math.isnan(value)


def int_at_least(low: int) -> Rule:
    """The rule "an integer (not a bool) of at least ``low``".

    Parameters
    ----------
    low : int
        The smallest value allowed.

    Returns
    -------
    Rule
        Its requirement reads ``"at least {low}"``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (K >= 2 arms, C >= 1).

    Examples
    --------
    >>> int_at_least(2).check("arms", 1)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: arms must be at least 2, got 1
    """
    return Rule(lambda v: is_integer(v) and v >= low, f"at least {low}")


def _vector(value: Any) -> np.ndarray:
    if isinstance(value, str | bytes | Mapping):
        raise TypeError("not a vector")
    return np.asarray(value, dtype=float)


def _means(value: Any) -> bool:
    if isinstance(value, str):  # the registry's text form, parsed by the algorithm
        return True
    v = _vector(value)
    return v.ndim == 1 and v.size >= 1 and bool(np.all(np.isfinite(v)))


def _probabilities(value: Any) -> bool:
    v = _vector(value)
    return v.ndim == 1 and v.size >= 1 and bool(np.all(v > 0)) and bool(np.isclose(v.sum(), 1.0))


POSITIVE = Rule(lambda v: _number(v) and v > 0, "positive")
POSITIVE_FINITE = Rule(lambda v: _number(v) and 0 < v < math.inf, "a finite positive number")
NONNEGATIVE = Rule(lambda v: _number(v) and v >= 0, ">= 0")
OPEN_UNIT = Rule(lambda v: _number(v) and 0 < v < 1, "in (0, 1)")
CLOSED_UNIT = Rule(lambda v: _number(v) and 0 <= v <= 1, "in [0, 1]")

#: The rule of each name of the parameter vocabulary (and of the library's array arguments); a name without
#: a rule is checked by its type and choices only, or by the algorithm where the check needs other parameters.
RULES: dict[str, Rule] = {
    "users": int_at_least(1),
    "arms": int_at_least(2),
    "C": int_at_least(1),
    "horizon": int_at_least(1),
    "max_rounds": int_at_least(1),
    "batch_base": int_at_least(2),
    "checkpoints": int_at_least(2),
    "reward_sigma": POSITIVE_FINITE,
    "epsilon": POSITIVE_FINITE,
    "delta": OPEN_UNIT,
    "dp_delta": OPEN_UNIT,
    "approx": Rule(lambda v: _number(v) and 0 < v <= 1, "in (0, 1]"),
    "beta": OPEN_UNIT,
    "eta": OPEN_UNIT,
    "xi": CLOSED_UNIT,
    "phi": CLOSED_UNIT,
    "crs": POSITIVE,
    "explore_scale": POSITIVE,
    "activity_offset": NONNEGATIVE,
    "means": Rule(_means, "a non-empty list of finite numbers"),
    "probs": Rule(_probabilities, "a positive probability vector (one entry per agent, summing to 1)",
                  lambda v: np.asarray(v, dtype=float)),
    # a seed or None where the generator belongs is the usual mistake; stand-ins (tests' known-noise objects) pass
    "rng": Rule(lambda v: not isinstance(v, numbers.Number | str | bytes | None), "a numpy.random.Generator"),
}


def check_seed(seed: Any) -> int:
    """A run's seed as an ``int``.

    Parameters
    ----------
    seed : int
        A non-negative Python or numpy integer.

    Returns
    -------
    int
        The seed as a Python ``int``.

    Raises
    ------
    ConfigError
        For anything else: ``1.7`` and ``True`` are not seeds (silently truncating them would run another
        experiment).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
    (every run of its algorithms draws from ``numpy.random.default_rng(seed)``).

    Examples
    --------
    >>> import numpy as np
    >>> check_seed(np.int64(7))
    7
    >>> check_seed(1.7)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: seed must be a non-negative integer, got 1.7
    """
    if not is_integer(seed) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _checked(vocabulary_name: str, called: str, value: Any) -> Any:
    rule = RULES.get(vocabulary_name)
    if rule is None:
        return value
    rule.check(called, value)
    return rule.convert(value) if rule.convert is not None else value


def validated(function: F, **names: str) -> F:
    """``function`` checking, before it runs, each argument that has a rule in ``RULES``.

    The rule of an argument is that of its name, or of the vocabulary name ``names`` maps it to
    (``n_agents="users"``). The error names the argument as the caller wrote it.

    Parameters
    ----------
    function : callable
        A library function.
    **names : str
        Argument name -> the vocabulary name whose rule applies to it.

    Returns
    -------
    callable
        ``function`` with the same signature and docstring, checking its arguments first (and converting
        those whose rule has a ``convert``).

    Raises
    ------
    ConfigError
        From the returned function: for an argument its rule refuses, or a call that does not bind (a missing
        or unknown argument).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
    (its Algorithms 1 and 2 are exported checked this way).

    Examples
    --------
    >>> def batches(n_users, horizon):
    ...     return horizon // n_users
    >>> checked = validated(batches, n_users="users")
    >>> checked(10, horizon=1000)
    100
    >>> checked(0, horizon=1000)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: n_users must be at least 1, got 0
    """
    signature = inspect.signature(function)

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ConfigError(f"{function.__name__}: {exc}") from None
        for arg, value in list(bound.arguments.items()):
            kind = signature.parameters[arg].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                for name, v in value.items():
                    value[name] = _checked(names.get(name, name), name, v)
            else:
                bound.arguments[arg] = _checked(names.get(arg, arg), arg, value)
        return function(*bound.args, **bound.kwargs)

    return checked  # type: ignore[return-value]
