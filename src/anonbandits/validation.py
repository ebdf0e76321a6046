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

import contextlib
import contextvars
import functools
import importlib
import inspect
import math
import numbers
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from anonbandits.errors import ConfigError, _shown

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
    then : Rule, optional
        A second rule a value that passes this one must pass too (its own message: a finite positive epsilon
        out of the supported range is told so, not that it is not positive); ``None`` (default): none.

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
    then: Rule | None = None

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
            raise ConfigError(f"{called} must be {self.requirement}, got {_shown(value)}")
        if self.then is not None:
            self.then.check(called, value)


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

#: The privacy levels every mechanism supports: within them, noise scales, variances, the distributed
#: protocols' precision and modulus and the algorithms' epoch lengths are computed exactly in floats and 64-bit
#: integers; outside them (1e300 or 1e-300) they would overflow or underflow, so such a value is refused in
#: one line rather than run with a label its noise does not have (docs/privacy.md).
EPSILON_MIN, EPSILON_MAX = 1e-6, 1e12
#: epsilon of a privacy mechanism: a finite positive number (not a bool), within the supported range
EPSILON = Rule(
    lambda v: _number(v) and 0 < v < math.inf,
    "a finite positive number",
    then=Rule(
        lambda v: EPSILON_MIN <= v <= EPSILON_MAX,
        f"between {EPSILON_MIN:g} and {EPSILON_MAX:g} (the range the privacy mechanisms support)",
    ),
)

#: The most rounds of a horizon: a hard bound (``allow_large`` does not lift it), the value of
#: :data:`anonbandits.channels.feedback.MAX_HORIZON` (the registry's and the channels' bound; docs/limits).
MAX_HORIZON = 10**9
#: The largest number of users, arms or C: the 64-bit arithmetic of the sizes holds 2^62, and
#: :func:`anonbandits.core.limits.check_size` refuses any size above it, confirmed or not.
AT_MOST_2_62 = Rule(lambda v: v <= 2**62, "at most 2^62")

#: The rule of each name of the parameter vocabulary (and of the library's array arguments); a name without
#: a rule is checked by its type and choices only, or by the algorithm where the check needs other parameters.
RULES: dict[str, Rule] = {
    "users": Rule(lambda v: is_integer(v) and v >= 1, "at least 1", then=AT_MOST_2_62),
    "arms": Rule(lambda v: is_integer(v) and v >= 2, "at least 2", then=AT_MOST_2_62),
    "C": Rule(lambda v: is_integer(v) and v >= 1, "at least 1", then=AT_MOST_2_62),
    "horizon": Rule(
        lambda v: is_integer(v) and v >= 1,
        "at least 1",
        then=Rule(lambda v: v <= MAX_HORIZON, f"at most {MAX_HORIZON:.0e} rounds (MAX_HORIZON)"),
    ),
    "max_rounds": int_at_least(1),
    "batch_base": int_at_least(2),
    "checkpoints": int_at_least(2),
    "reward_sigma": POSITIVE_FINITE,
    "epsilon": EPSILON,
    "sensitivity": POSITIVE_FINITE,
    "delta": OPEN_UNIT,
    "dp_delta": OPEN_UNIT,
    "approx": Rule(lambda v: _number(v) and 0 < v <= 1, "in (0, 1]"),
    "beta": OPEN_UNIT,
    "eta": OPEN_UNIT,
    "xi": CLOSED_UNIT,
    # a user misses a block (one assignment, its 2C+2 rounds) with this probability: 1 would be a user never there
    "absence": Rule(lambda v: _number(v) and 0 <= v < 1, "a probability in [0, 1)"),
    # blocks a user may be exposed in beyond its demand, per decomposed batch (anondecomp's max_surplus_exposure)
    "max_exposure": Rule(lambda v: is_integer(v) and v >= 0, "an integer >= 0", then=AT_MOST_2_62),
    "phi": CLOSED_UNIT,
    "crs": POSITIVE,
    "explore_scale": POSITIVE,
    "activity_offset": NONNEGATIVE,
    "means": Rule(_means, "a non-empty list of finite numbers"),
    "probs": Rule(
        _probabilities,
        "a positive probability vector (one entry per agent, summing to 1)",
        lambda v: np.asarray(v, dtype=float),
    ),
    # a seed or None where the generator belongs is the usual mistake; stand-ins (tests' known-noise objects)
    # pass by offering a generator's sampling methods
    "rng": Rule(lambda v: _generator_like(v), "a numpy.random.Generator"),
}


_SAMPLING = ("random", "integers", "laplace", "normal", "standard_normal", "binomial", "poisson")


def _generator_like(value: Any) -> bool:
    return isinstance(value, np.random.Generator) or (
        not isinstance(value, numbers.Number | str | bytes | np.ndarray | Mapping | list | tuple | None)
        and any(callable(getattr(value, m, None)) for m in _SAMPLING)
    )


def instance_of(path: str, what: str) -> Rule:
    """The rule "an instance of the class at dotted ``path``", imported when first checked (the classes this
    module checks for import it).

    Parameters
    ----------
    path : str
        ``"package.module.Class"``.
    what : str
        The requirement as the message says it (``"a MultiUserInstance"``).

    Returns
    -------
    Rule
        A rule passing instances of that class (subclasses included).

    Raises
    ------
    ConfigError
        If ``path`` is not a dotted name or ``what`` not a non-empty str.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the objects its
    algorithms pass around: an instance, its learners and feedback).

    Examples
    --------
    >>> instance_of("fractions.Fraction", "a Fraction").check("x", 0.5)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: x must be a Fraction, got 0.5
    """
    if not isinstance(path, str) or not all(part.isidentifier() for part in path.split(".")) or "." not in path:
        raise ConfigError(f"path must be a dotted name 'package.module.Class', got {_shown(path)}")
    if not isinstance(what, str) or not what:
        raise ConfigError(f"what must be a non-empty str, got {_shown(what)}")
    module, _, name = path.rpartition(".")

    def test(value: Any) -> bool:
        return isinstance(value, getattr(importlib.import_module(module), name))

    return Rule(test, what)


def array_of(kinds: str, what: str, *, ndim: int | None = 1, low: float | None = None, size: int = 0) -> Rule:
    """The rule "an array of finite numbers of the dtype kinds ``kinds``" (``"iu"`` integers, ``"iuf"``
    numbers; never bools or strings), of ``ndim`` dimensions, every entry at least ``low``, at least ``size``
    entries; a list converts.

    Parameters
    ----------
    kinds : str
        numpy dtype kinds allowed.
    what : str
        The requirement as the message says it.
    ndim : int or None, optional
        The number of dimensions (default 1); ``None``: any of 0 to 3.
    low : float or None, optional
        The smallest entry allowed; ``None`` (default): any finite entry.
    size : int, optional
        The fewest entries allowed (default 0).

    Returns
    -------
    Rule
        The rule; its ``convert`` gives the array.

    Raises
    ------
    ConfigError
        From the rule's ``check``: for a value that is not such an array.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the per-arm counts
    and sums its learners update).

    Examples
    --------
    >>> COUNTS.check("counts", [3, -1])
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: counts must be a 1-D array of non-negative integers, got [3, -1]
    """

    def test(value: Any) -> bool:
        a = _array(value, kinds)
        return (
            (ndim is None or a.ndim == ndim)
            and a.size >= size
            and bool(np.all(np.isfinite(a)))
            and (low is None or bool(np.all(a >= low)))
            and (a.dtype.kind == "f" or bool(np.all(np.abs(a) <= 2**62)))
        )

    return Rule(test, what, np.asarray)


def _size(value: Any) -> bool:
    if value is None:
        return True
    shape = (value,) if not isinstance(value, tuple) else value
    return all(is_integer(n) and n >= 0 for n in shape) and math.prod(int(n) for n in shape) <= MAX_DRAWS


def _array(value: Any, kinds: str) -> np.ndarray:
    if isinstance(value, str | bytes | Mapping | bool | np.bool_) or value is None:
        raise TypeError("not an array of numbers")
    a = np.asarray(value)
    if a.dtype.kind not in kinds or a.ndim > 3:
        raise TypeError("not an array of numbers")
    return a


def _finite_array(value: Any) -> bool:
    a = _array(value, "iuf")
    return bool(np.all(np.isfinite(a)))


def _orders(value: Any) -> bool:
    a = _array(value, "iuf")
    return a.size >= 1 and bool(np.all(np.isfinite(a))) and bool(np.all(a > 1))


def int_between(low: int, high: int) -> Rule:
    """The rule "an integer (not a bool) from ``low`` to ``high``" (``high`` a documented size limit).

    Parameters
    ----------
    low : int
        The smallest value allowed.
    high : int
        The largest value allowed.

    Returns
    -------
    Rule
        Its requirement reads ``"an integer from {low} to {high}"``.

    References
    ----------
    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023
    (its protocols' numbers of users, shares and neighbours).

    Examples
    --------
    >>> int_between(1, 10).check("shares", 11)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: shares must be an integer from 1 to 10, got 11
    """
    return Rule(lambda v: is_integer(v) and low <= v <= high, f"an integer from {low} to {high}")


def optional(rule: Rule) -> Rule:
    """``rule``, or ``None``.

    Parameters
    ----------
    rule : Rule
        The rule a value other than ``None`` passes.

    Returns
    -------
    Rule
        Its requirement reads ``"None or {rule.requirement}"``.

    Raises
    ------
    ConfigError
        If ``rule`` is not a :class:`Rule`.

    References
    ----------
    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023
    (its optional numbers of users).

    Examples
    --------
    >>> optional(int_at_least(1)).check("n", None)
    """
    if not isinstance(rule, Rule):
        raise ConfigError(f"rule must be a Rule, got {_shown(rule)}")
    return Rule(lambda v: v is None or rule.test(v), f"None or {rule.requirement}")


def one_of(*choices: str) -> Rule:
    """The rule "one of the names ``choices``": a str among them (a list, an array or a dict is refused, not
    compared).

    Parameters
    ----------
    *choices : str
        The names allowed.

    Returns
    -------
    Rule
        Its requirement reads ``"one of {choices}"``.

    References
    ----------
    Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019 (its grids: minimax, geometric,
    arithmetic).

    Examples
    --------
    >>> one_of("ceil", "floor").check("rounding", "round")
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: rounding must be one of ceil, floor, got 'round'
    """
    return Rule(lambda v: isinstance(v, str) and v in choices, f"one of {', '.join(choices)}")


#: The most draws one call of a sampler makes (``size``): 10^8 doubles are 800 MB.
MAX_DRAWS = 10**8
#: The most users whose every pair a secure aggregation masks (``complete_pairs``): n (n - 1) / 2 pairs.
MAX_PAIRED_USERS = 10**4
#: The rules of the privacy layer's arguments (:func:`checks` applies them by argument name).
FINITE = Rule(lambda v: _number(v) and math.isfinite(v), "a finite number")
NONNEGATIVE_FINITE = Rule(lambda v: _number(v) and 0 <= v < math.inf, "a finite number >= 0")
UNIT_NO_ONE = Rule(lambda v: _number(v) and 0 <= v < 1, "in [0, 1)")
#: a probability that may be 1 but not 0 (a tail or failure probability)
UNIT_NO_ZERO = Rule(lambda v: _number(v) and 0 < v <= 1, "in (0, 1]")
INTEGER = Rule(lambda v: is_integer(v) and abs(v) <= 2**62, "an integer of at most 2^62 in absolute value")
COUNT = int_between(1, 2**62)
NONNEGATIVE_COUNT = int_between(0, 2**62)
SIZE = Rule(_size, f"None or a non-negative integer or tuple of them, at most {MAX_DRAWS:g} draws in all")
FINITE_ARRAY = Rule(_finite_array, "a number or an array of finite numbers")
POSITIVE_ARRAY = Rule(
    lambda v: _finite_array(v) and bool(np.all(np.asarray(v) > 0)), "a positive finite number or an array of them"
)
#: integers of at most 2^62 in absolute value: the int64 arithmetic of the privacy layer (sums, moduli) holds them
INT_ARRAY = Rule(
    lambda v: bool(np.all(np.abs(_array(v, "iu")) <= 2**62)),
    "an integer or an array of integers, each of at most 2^62 in absolute value",
)
POSITIVE_INT_ARRAY = Rule(
    lambda v: bool(np.all((_array(v, "iu") >= 1) & (_array(v, "iu") <= 2**62))),
    "a positive integer or an array of them, each at most 2^62",
)
ORDERS = Rule(_orders, "a Renyi order > 1 or a non-empty array of finite ones")
RNG = RULES["rng"]
#: per-arm pull counts and reward sums of a batch, and a vector of finite numbers (means, gaps)
COUNTS = array_of("iu", "a 1-D array of non-negative integers", low=0)
SUMS = array_of("iuf", "a 1-D array of finite numbers")
VECTOR = array_of("iuf", "a non-empty 1-D array of finite numbers", size=1)
MATRIX = array_of("iuf", "a non-empty 2-D array of finite numbers", ndim=2, size=1)
#: an (N, K) demand or count of samples per learner (user) and arm
COUNT_MATRIX = array_of("iu", "a 2-D array of non-negative integers", ndim=2, low=0)
#: the objects the drivers pass around: an instance of the anonymous and DP families, a batch learner (any
#: object with the members of the protocol) and a feedback channel
INSTANCE = instance_of("anonbandits.envs.MultiUserInstance", "a MultiUserInstance")
LEARNERS = instance_of("anonbandits.core.learners.BatchLearner", "a batch learner (anonbandits.core.learners)")
CHANNEL = Rule(
    lambda v: not isinstance(v, type) and all(callable(getattr(v, m, None)) for m in ("serve_batch", "play", "open")),
    "a feedback channel (anonbandits.channels.FeedbackChannel)",
)
CALLABLE = Rule(callable, "a callable of the Renyi orders")
#: a switch: True or False (a numpy bool too), never 0, 1 or text (a typo must not switch a run's behaviour)
BOOL = Rule(lambda v: isinstance(v, bool | np.bool_), "True or False")
#: a file to read or write: a non-empty str or a path object (bytes and numbers are not paths)
PATH = Rule(
    lambda v: isinstance(os.fspath(v), str) and os.fspath(v).strip() != "",
    "a file path (a non-empty str or a pathlib.Path)",
)
RDP_CURVE = Rule(
    lambda v: callable(v) or _finite_array(v), "a callable of the Renyi orders or an array of finite numbers"
)


def checks(**rules: Rule) -> Callable[[F], F]:
    """A decorator checking, before the function runs, each named argument against its rule.

    The table of a library function's rules, written next to it; the rules themselves are this module's.

    Parameters
    ----------
    **rules : Rule
        Argument name -> its rule.

    Returns
    -------
    callable
        The decorator; the decorated function has the same signature and docstring.

    Raises
    ------
    ConfigError
        From the decorated function: for an argument its rule refuses, or a call that does not bind.

    References
    ----------
    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023
    (its samplers and accounting are checked this way).

    Examples
    --------
    >>> @checks(scale=POSITIVE_FINITE)
    ... def noise_variance(scale):
    ...     return 2 * scale**2
    >>> noise_variance(True)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: scale must be a finite positive number, got True
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        unknown = set(rules) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{function.__name__} has no argument {sorted(unknown)}")

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if _CHECKED.get():
                return function(*args, **kwargs)
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise ConfigError(f"{function.__name__}: {exc}") from None
            for name, rule in rules.items():
                if name in bound.arguments:
                    rule.check(name, bound.arguments[name])
            return _run_trusted(function, args, kwargs)

        return checked  # type: ignore[return-value]

    return decorate


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
        raise ConfigError(f"seed must be a non-negative integer, got {_shown(seed)}")
    return int(seed)


def _checked(vocabulary_name: str | Rule, called: str, value: Any) -> Any:
    rule = vocabulary_name if isinstance(vocabulary_name, Rule) else RULES.get(vocabulary_name)
    if rule is None:
        return value
    rule.check(called, value)
    return rule.convert(value) if rule.convert is not None else value


#: Inside a checked call (or a registry run, whose parameters were checked when it was resolved), the library's
#: own calls are not checked again: the boundary is checked once, and the inner loops pay nothing per call.
_CHECKED = contextvars.ContextVar("anonbandits_checked", default=False)


@contextlib.contextmanager
def trusted() -> Iterator[None]:
    """Within the block, :func:`validated` and :func:`checks` functions run without checking their arguments
    again: for callers whose arguments were checked already (a checked function's body, a registry run).

    Yields
    ------
    None
        Nothing; the block runs trusted.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the library's
    boundary, checked once).

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.privacy.samplers import laplace
    >>> with trusted():  # the caller checked scale and size already
    ...     laplace(1.0, 3, np.random.default_rng(0)).shape
    (3,)
    """
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def _run_trusted(function: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    token = _CHECKED.set(True)
    try:
        return function(*args, **kwargs)
    finally:
        _CHECKED.reset(token)


def validated(function: F, **names: str | Rule) -> F:
    """``function`` checking, before it runs, each argument that has a rule in ``RULES``.

    The rule of an argument is that of its name, or of the vocabulary name ``names`` maps it to
    (``n_agents="users"``), or the rule ``names`` gives it (``instance=INSTANCE``: an argument that is no
    parameter of the vocabulary). The error names the argument as the caller wrote it.

    Parameters
    ----------
    function : callable
        A library function.
    **names : str or Rule
        Argument name -> the vocabulary name whose rule applies to it (``""``: none), or its rule.

    Returns
    -------
    callable
        ``function`` with the same signature and docstring, checking its arguments first (and converting
        those whose rule has a ``convert``). A private ``function`` (``_mase``) gives the public function
        (``mase``): the result takes the name without the underscores, and the docstring, which the private
        body gives up.

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
    if not callable(function) or not all(isinstance(v, str | Rule) for v in names.values()):
        raise ConfigError(f"function must be a callable and names vocabulary names, got {_shown(function)}")
    signature = inspect.signature(function)
    public = function.__name__.lstrip("_")

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if _CHECKED.get():
            return function(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ConfigError(f"{public}: {exc}") from None
        for arg, value in list(bound.arguments.items()):
            kind = signature.parameters[arg].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                for name, v in value.items():
                    value[name] = _checked(names.get(name, name), name, v)
            else:
                bound.arguments[arg] = _checked(names.get(arg, arg), arg, value)
        return _run_trusted(function, bound.args, bound.kwargs)

    if public != function.__name__:
        # the checked function is the public one (``mase = validated(_mase)``): it takes the name, and the
        # docstring, so that help() and errors name it and doctest runs the examples once
        checked.__name__, checked.__qualname__ = public, function.__qualname__.replace(function.__name__, public)
        function.__doc__ = None
    return checked  # type: ignore[return-value]
