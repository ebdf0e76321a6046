"""What the simulator knows of an algorithm: :class:`AlgorithmSpec` (a name, a run function and its parameters),
:class:`Param` (one parameter; :func:`parse_bool` is the type of the bool ones) and
:class:`DeprecatedParameterWarning` (a parameter given under its old name); and the parameters several families
define alike: ``--means`` of one learner's arms (:data:`ARM_MEANS`) and of the arms every agent of a multi-agent
family shares (:func:`agent_means`; the anonymous family's means file of N users is
:mod:`anonbandits.channel_params`'s).

The shared types of the bandit layer's families: each family package builds its ``ALGORITHMS`` table of
:class:`AlgorithmSpec` from this module, and the registry (:mod:`anonbandits.registry`, above every family)
indexes those tables by name. This module imports no family and not the registry; a spec's run returns a
:class:`anonbandits.results.Result`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from anonbandits._docstrings import filled_dataclass
from anonbandits.errors import ConfigError, _shown
from anonbandits.results import Result
from anonbandits.validation import BOOL, RULES, Rule, check_seed

__all__ = ["ARM_MEANS", "AlgorithmSpec", "DeprecatedParameterWarning", "Param", "parse_bool", "agent_means"]


def _no_channel_takers() -> list[str]:
    return []


#: The algorithms whose ``channel`` offers ``anonymous``, by name: :meth:`AlgorithmSpec.resolve` names them when
#: another algorithm is given a ``channel``. Only the registry knows every family, and this module is below the
#: families, so the registry sets it to :func:`anonbandits.registry.channel_algorithms` when it is imported (as
#: ``import anonbandits`` does).
channel_takers: Callable[[], list[str]] = _no_channel_takers


def parse_bool(value: str | bool) -> bool:
    """The bool a flag's text means: ``true/false``, ``yes/no``, ``1/0``, ``on/off`` (case-insensitive).

    The type of every bool :class:`Param` (e.g. ``best_effort`` of ``anon-batched``).

    Parameters
    ----------
    value : str or bool
        The text of a flag or a grid file's value; a bool (from a TOML grid) is taken as is.

    Returns
    -------
    bool
        ``True`` for ``true``, ``yes``, ``1`` or ``on``; ``False`` for ``false``, ``no``, ``0`` or ``off``.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For any other text (:meth:`AlgorithmSpec.resolve` names the parameter).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the
    ``best_effort`` flag of its Algorithm 1, ``anon-batched``).

    Examples
    --------
    >>> parse_bool("Yes"), parse_bool("0"), parse_bool(True)
    (True, False, True)
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "yes", "1", "on", "false", "no", "0", "off"):
        raise ConfigError(f"expected true or false, got {_shown(value)}")
    return text in ("true", "yes", "1", "on")


def _convert(kind: Callable[[str], Any], value: Any) -> Any:
    """``value`` (flag text or a TOML/JSON scalar) as ``kind``; ``ValueError`` says what was expected.

    Grid files hand over typed values, so a float where an integer is meant (``horizon = 1.5``) or a bool
    where a number is meant must be refused rather than truncated by ``int()``; a TOML grid may write
    ``problem = 1`` for the text choice "1" (integral floats stay as written).
    """
    if isinstance(value, list | dict):
        raise ValueError(f"expected a single value, got a {'list' if isinstance(value, list) else 'table'}")
    if kind not in (int, float, str):
        return kind(value)
    if kind is str and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return kind(value.strip())
    elif (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and (kind is float or isinstance(value, int) or value.is_integer())
    ):
        return kind(value)
    raise ValueError(
        f"expected {dict([(int, 'an integer'), (float, 'a number'), (str, 'text')])[kind]}, got {_shown(value)}"
    )


@dataclass(frozen=True)
class Param:
    """One algorithm parameter; becomes the flag ``--name`` (underscores as dashes) of ``simulate``.

    Parameters
    ----------
    name : str
        The parameter's name in the vocabulary of docs/parameters.md (``users``, ``horizon``, ...).
    type : callable
        Converts flag text to the value: ``int``, ``float``, ``str`` or :func:`parse_bool`.
    default : object
        The value used when none is given.
    help : str
        One line for ``--help`` and the docs' parameter table.
    choices : tuple, optional
        The only values allowed; ``None`` (default): any value its type and rule accept.
    aliases : tuple of str, optional
        Deprecated earlier names, still accepted for one release with a :class:`DeprecatedParameterWarning`
        (:meth:`AlgorithmSpec.resolve`); default none.
    unit : str, optional
        What the value counts in the docs' parameter table (``rounds``, ``users``); default ``""``: a plain
        number or a choice.
    rule : anonbandits.validation.Rule, optional
        The check of a given value; ``None`` (default): the rule of ``name`` in
        ``anonbandits.validation.RULES``, the same check the library functions apply.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (``users``
    and ``C`` are its N and C).

    Examples
    --------
    >>> p = Param("users", int, 300, "number of users N", unit="users")
    >>> p.is_flag
    False
    >>> p.check("--users", 0)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: --users must be at least 1, got 0
    """

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    aliases: tuple[str, ...] = ()
    unit: str = ""
    rule: Rule | None = None

    @property
    def is_flag(self) -> bool:
        """A bool parameter: ``--name`` alone means true on the command line."""
        return self.type is parse_bool

    def check(self, called: str, value: Any) -> None:
        """Apply :attr:`rule` (or the vocabulary's rule of :attr:`name`) to an already converted value.

        A parameter with neither rule accepts every value.

        Parameters
        ----------
        called : str
            The parameter's name as the error shows it: a flag (``--users``) or a grid key (``'users'``).
        value : object
            The value, already converted by :attr:`type`.

        Raises
        ------
        ConfigError
            If the rule refuses ``value``.

        Examples
        --------
        >>> p = Param("horizon", int, 1000, "number of rounds T", unit="rounds")
        >>> p.check("'horizon'", 50)
        >>> p.check("'horizon'", -1)
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: 'horizon' must be at least 1, got -1
        """
        rule = self.rule or RULES.get(self.name)
        if rule is not None:
            rule.check(called, value)


#: ``--means`` of a single learner's arms (the ``dp`` and ``dp.distributed`` families): one meaning, one definition
ARM_MEANS = Param("means", str, "0.9,0.8,0.7", "comma-separated arm means in [0, 1]")


def agent_means(default: str) -> Param:
    """``--means`` of the multi-agent families: the arm means every agent shares, or a means file of one instance.

    One definition of the one meaning; each family gives its own default.

    Parameters
    ----------
    default : str
        The family's default: its paper's means, comma-separated, or ``""`` (the family's own instance).

    Returns
    -------
    Param
        The ``means`` parameter.

    References
    ----------
    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023
    (its agents share one instance).

    Examples
    --------
    >>> agent_means("0.7,0.5").default, agent_means("").help == agent_means("0.7,0.5").help
    ('0.7,0.5', True)
    """
    return Param(
        "means",
        str,
        default,
        "arm means every agent shares, comma-separated, or a means file (.csv, "
        ".parquet) of one instance, whose count sets the users",
    )


class DeprecatedParameterWarning(FutureWarning):
    """A parameter was given under its deprecated name (it still works, for one release).

    References
    ----------
    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023
    (its agents are the ``users`` of the parameter vocabulary).

    Examples
    --------
    >>> import warnings
    >>> from anonbandits.registry import get
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     params = get("mase").resolve({"agents": 8})
    >>> params["users"], caught[0].category.__name__, str(caught[0].message)
    (8, 'DeprecatedParameterWarning', "parameter 'agents' is deprecated, use parameter 'users'")
    """


def _finish(
    run: Callable[[Mapping[str, Any], int], Result],
    name: str,
    axes: tuple[str, str],
    params: Mapping[str, Any],
    seed: int,
) -> Result:
    """Every registered run goes through here: the seed checked, the label and curve axes filled in."""
    result = run(params, check_seed(seed))
    return dataclasses.replace(
        result, label=result.label or name, curve_axes=(result.curve_axes or axes) if result.curve is not None else None
    )


@filled_dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm as the simulator sees it: a name, a run function and its parameters.

    Parameters
    ----------
    name : str
        The registered name (``simulate --algorithm NAME``), e.g. ``"dp-se"``.
    run : callable
        ``run(params, seed) -> Result``: a module-level function (or a ``functools.partial`` of one, so the
        spec pickles to worker processes) drawing all its randomness from ``numpy.random.default_rng(seed)``.
        The spec wraps it so that every run checks its seed and gets its label and curve axes filled in.
    params : tuple of Param
        Every parameter the algorithm takes.
    summary : str
        One line for ``--help``.
    family : str, optional
        The family the docs group it under (``anonymous``, ``dp``, ...); default ``""``.
    curve_axes : tuple of str, optional
        The names of the x and y of its curve; default ``("round", "cumulative pseudo-regret")``.
    observes : str, optional
        The channel it always observes through when it takes no ``channel`` (``anonymous`` for Algorithms 1
        and 2), named when a ``channel`` is given to it; default ``""``: none.

    {{refs_registered}}

    Examples
    --------
    >>> from anonbandits.registry import get
    >>> spec = get("dp-se")
    >>> spec.family, spec.curve_axes
    ('dp', ('round', 'cumulative pseudo-regret'))
    >>> params = spec.resolve({"horizon": "20000"})
    >>> params["horizon"], spec.run(params, 1).metrics["best_arm_found"]
    (20000, 1)
    """

    name: str
    run: Callable[[Mapping[str, Any], int], Result]
    params: tuple[Param, ...]
    summary: str
    family: str = ""
    curve_axes: tuple[str, str] = ("round", "cumulative pseudo-regret")
    observes: str = ""

    def __post_init__(self) -> None:
        # one path for every algorithm's result (a module-level partial, so the spec still pickles)
        if not (isinstance(self.run, partial) and self.run.func is _finish):
            object.__setattr__(self, "run", partial(_finish, self.run, self.name, self.curve_axes))

    def defaults(self) -> dict[str, Any]:
        """Every parameter's default.

        Returns
        -------
        dict of str to object
            Parameter name -> default value, in the order of :attr:`params`.

        Examples
        --------
        >>> from anonbandits.registry import get
        >>> get("anon-etc").defaults()["C"]
        3
        """
        return {p.name: p.default for p in self.params}

    def resolve(
        self, given: Mapping[str, Any], *, as_flags: bool = False, deprecated: list[str] | None = None
    ) -> dict[str, Any]:
        """Every parameter: its default overlaid with ``given``, converted to the parameter's type and checked.

        A deprecated name (a :attr:`Param.aliases` entry) counts as its new name. Its one-line notice
        (``--agents is deprecated, use --users``) is appended to ``deprecated`` when a list is given (the CLI
        prints them once the runs went through), else issued as a :class:`DeprecatedParameterWarning`; either
        way only after every check passed, so a refused call says only why it is refused.

        Parameters
        ----------
        given : Mapping of str to object
            Parameter values by name: flag text or scalars from a grid file.
        as_flags : bool, optional
            Whether errors name parameters as command-line flags (``--best-effort``); default ``False``: as
            grid keys (``'best_effort'``).
        deprecated : list of str, optional
            Where to append the notices of deprecated names; default ``None``: warn instead.

        Returns
        -------
        dict of str to object
            Every parameter's value, in the order of :attr:`params`.

        Raises
        ------
        ConfigError
            For ``given`` that is not a mapping of parameter names (str) to values, ``as_flags`` that is not a
            bool, ``deprecated`` that is neither ``None`` nor a list; for an unknown name (a ``channel`` for an
            algorithm without one: the message names those of
            :func:`anonbandits.registry.channel_algorithms`), a deprecated name given with its new name, a value
            its type cannot convert, a value outside its choices, or a value its rule refuses.

        Examples
        --------
        >>> from anonbandits.registry import get
        >>> spec = get("anon-batched")
        >>> params = spec.resolve({"users": "60", "best_effort": "yes"})
        >>> params["users"], params["best_effort"]
        (60, True)
        >>> spec.resolve({"users": "0"}, as_flags=True)
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: --users must be at least 1, got 0
        """
        if not isinstance(given, Mapping) or not all(isinstance(name, str) for name in given):
            raise ConfigError(f"given must be a mapping of parameter names (str) to values, got {_shown(given)}")
        BOOL.check("as_flags", as_flags)
        if deprecated is not None and not isinstance(deprecated, list):
            raise ConfigError(f"deprecated must be None or a list, got {_shown(deprecated)}")
        known = {p.name: p for p in self.params}
        alias_of = {alias: p.name for p in self.params for alias in p.aliases}

        def called(name: str) -> str:
            return f"--{name.replace('_', '-')}" if as_flags else f"parameter {name!r}"

        unknown = sorted(set(given) - set(known) - set(alias_of))
        if "channel" in unknown:  # one rule for every algorithm: which ones take the anonymous channel
            takers = ", ".join(channel_takers())
            always = f" (it always observes through the {self.observes} channel)" if self.observes else ""
            raise ConfigError(
                f"algorithm {self.name!r} has no {called('channel')}{always}: {called('channel')} "
                f"anonymous is taken by {takers} only"
            )
        if unknown:
            names = ", ".join(called(n) for n in unknown)
            raise ConfigError(
                f"algorithm {self.name!r} has no {names} (given); known: {', '.join(called(n) for n in sorted(known))}"
            )
        notes: list[str] = []
        canonical: dict[str, Any] = {}
        for name, value in given.items():
            new = alias_of.get(name, name)
            if new in canonical:
                old = next(a for a in known[new].aliases if a in given)
                raise ConfigError(
                    f"{called(old)} is the deprecated name of {called(new)} of {self.name!r}; give {called(new)} only"
                )
            if new != name:
                notes.append(f"{called(name)} is deprecated, use {called(new)}")
            canonical[new] = value
        out = self.defaults()
        for name, value in canonical.items():
            p = known[name]
            try:
                value = _convert(p.type, value)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ConfigError(f"{called(name)} of {self.name!r}: {exc}") from None
            if p.choices is not None and value not in p.choices:
                raise ConfigError(
                    f"{called(name)} of {self.name!r} must be one of {', '.join(map(str, p.choices))}, "
                    f"got {_shown(value)}"
                )
            p.check(f"--{name.replace('_', '-')}" if as_flags else name, value)  # the library's words
            out[name] = value
        if deprecated is not None:
            deprecated.extend(n for n in notes if n not in deprecated)
        else:
            for note in notes:
                warnings.warn(note, DeprecatedParameterWarning, stacklevel=3)
        return out
