"""Algorithms the simulator knows, by name: each family package exposes ``ALGORITHMS``, a tuple of
:class:`AlgorithmSpec` (adding a family means adding its module path to ``_FAMILIES``).

A spec's ``run(params, seed)`` is a module-level function or a ``functools.partial`` of one (so it pickles
to worker processes and Dask workers) that draws all its randomness from ``numpy.random.default_rng(seed)``
and returns a :class:`Result`. :func:`simulate` is the one library call on top.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from anonbandits.errors import ConfigError
from anonbandits.results import check_metrics
from anonbandits.validation import RULES, Rule, check_seed

# One line per family package; each exports ALGORITHMS.
_FAMILIES: tuple[str, ...] = (
    "anonbandits.anonymous",
    "anonbandits.dp.distributed",
    "anonbandits.dp",
    "anonbandits.multiagent.mase",
    "anonbandits.multiagent.decentralized",
)


def parse_bool(value: str | bool) -> bool:
    """``true/false``, ``yes/no``, ``1/0``, ``on/off`` (case-insensitive; a bool from a TOML grid is taken as
    is) -> bool; ``ValueError`` for any other text."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "yes", "1", "on", "false", "no", "0", "off"):
        raise ValueError(f"expected true or false, got {value!r}")
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
    elif isinstance(value, int | float) and not isinstance(value, bool) and \
            (kind is float or isinstance(value, int) or value.is_integer()):
        return kind(value)
    raise ValueError(f"expected {dict([(int, 'an integer'), (float, 'a number'), (str, 'text')])[kind]}, "
                     f"got {value!r}")


@dataclass(frozen=True)
class Param:
    """One algorithm parameter; becomes the flag ``--name`` (underscores as dashes) of ``simulate``.

    ``unit`` is what the docs' parameter table says it counts (``rounds``, ``users``; empty: a plain number
    or a choice). ``aliases`` are deprecated earlier names, still accepted for one release with a warning
    (:meth:`AlgorithmSpec.resolve`). ``rule`` checks a given value (default: the rule of the name in
    :data:`anonbandits.validation.RULES`, the same check the library functions apply).
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
        """Apply :attr:`rule` (or the vocabulary's rule of :attr:`name`) to an already converted value."""
        rule = self.rule or RULES.get(self.name)
        if rule is not None:
            rule.check(called, value)


class DeprecatedParameterWarning(FutureWarning):
    """A parameter was given under its deprecated name (it still works, for one release)."""


@dataclass(frozen=True)
class Result:
    """What one run of any algorithm reports (the one result type of :func:`simulate`).

    Attributes
    ----------
    metrics : the run's numbers by name (regret, samples, ...): the columns of the results table. Every name,
        kind and meaning is in :data:`anonbandits.results.METRICS` (docs/parameters.md), checked when the
        result is built: numbers only, never NaN or infinite, ``None`` only where the schema says "not
        applicable" (an empty cell in a table).
    curve : an optional ``(x, y)`` pair of 1-D arrays, e.g. rounds and cumulative regret (drawn by ``--plot``).
    label : the name of the line the curve belongs to (the registry sets the algorithm's name when an
        algorithm gives none).
    records : one mapping per batch (paper 000's demand, assignments, rounds, eliminations); empty where an
        algorithm reports none (paper 004's blocks stay on ``run_elimination(...).blocks``: cheaper).
    info : what a run reports that is not a number: text (``methods_used``, ``instance``) and vectors (MASE's
        per-arm ``votes``).
    curve_axes : the names of the curve's x and y (the algorithm's ``AlgorithmSpec.curve_axes``); ``None``
        without a curve.
    """

    metrics: Mapping[str, Any]
    curve: tuple[np.ndarray, np.ndarray] | None = None
    label: str | None = None
    records: tuple[Mapping[str, Any], ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)
    curve_axes: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", check_metrics(self.metrics))


def _finish(run: Callable[[Mapping[str, Any], int], Result], name: str, axes: tuple[str, str],
            params: Mapping[str, Any], seed: int) -> Result:
    """Every registered run goes through here: the seed checked, the label and curve axes filled in."""
    result = run(params, check_seed(seed))
    return dataclasses.replace(result, label=result.label or name,
                               curve_axes=(result.curve_axes or axes) if result.curve is not None else None)


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm as the simulator sees it."""

    name: str
    run: Callable[[Mapping[str, Any], int], Result]
    params: tuple[Param, ...]
    summary: str
    family: str = ""
    curve_axes: tuple[str, str] = ("round", "cumulative pseudo-regret")

    def __post_init__(self) -> None:
        # one path for every algorithm's result (a module-level partial, so the spec still pickles)
        if not (isinstance(self.run, partial) and self.run.func is _finish):
            object.__setattr__(self, "run", partial(_finish, self.run, self.name, self.curve_axes))

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, given: Mapping[str, Any], *, as_flags: bool = False,
                deprecated: list[str] | None = None) -> dict[str, Any]:
        """Every parameter: its default overlaid with ``given`` (flag text or scalars from a grid file), converted
        to the parameter's type and checked by its rule; unknown names and bad values raise
        :class:`ConfigError`, which names parameters as command-line flags (``--best-effort``) with
        ``as_flags``, else as grid keys (``'best_effort'``).

        A deprecated name (a :attr:`Param.aliases` entry) counts as its new name. Its one-line notice
        (``--agents is deprecated, use --users``) is appended to ``deprecated`` when a list is given (the CLI
        prints them once the runs went through), else issued as a :class:`DeprecatedParameterWarning`; either
        way only after every check passed, so a refused call says only why it is refused.
        """
        known = {p.name: p for p in self.params}
        alias_of = {alias: p.name for p in self.params for alias in p.aliases}

        def called(name: str) -> str:
            return f"--{name.replace('_', '-')}" if as_flags else f"parameter {name!r}"

        unknown = sorted(set(given) - set(known) - set(alias_of))
        if unknown:
            names = ", ".join(called(n) for n in unknown)
            raise ConfigError(f"algorithm {self.name!r} has no {names}; "
                              f"known: {', '.join(called(n) for n in sorted(known))}")
        notes: list[str] = []
        canonical: dict[str, Any] = {}
        for name, value in given.items():
            new = alias_of.get(name, name)
            if new in canonical:
                old = next(a for a in known[new].aliases if a in given)
                raise ConfigError(f"{called(old)} is the deprecated name of {called(new)} of {self.name!r}; "
                                  f"give {called(new)} only")
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
                raise ConfigError(f"{called(name)} of {self.name!r} must be one of "
                                  f"{', '.join(map(str, p.choices))}, got {value!r}")
            p.check(f"--{name.replace('_', '-')}" if as_flags else name, value)  # the library's words
            out[name] = value
        if deprecated is not None:
            deprecated.extend(n for n in notes if n not in deprecated)
        else:
            for note in notes:
                warnings.warn(note, DeprecatedParameterWarning, stacklevel=3)
        return out


def all_algorithms() -> dict[str, AlgorithmSpec]:
    """Every registered algorithm, by name."""
    found: dict[str, AlgorithmSpec] = {}
    for module_name in _FAMILIES:
        module = importlib.import_module(module_name)
        for spec in module.ALGORITHMS:
            if spec.name in found:
                raise RuntimeError(f"algorithm name {spec.name!r} registered twice")
            found[spec.name] = spec
    return found


def get(name: str) -> AlgorithmSpec:
    """The spec registered under ``name``; :class:`ConfigError` naming the known ones otherwise."""
    algorithms = all_algorithms()
    if name not in algorithms:
        raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(sorted(algorithms))}")
    return algorithms[name]


def simulate(name: str, *, seed: int, **params: Any) -> Result:
    """Run the registered algorithm ``name`` once: the library's one call for every algorithm.

    Parameters
    ----------
    name : a registered algorithm (listed by ``anonbandits simulate --help``), e.g. ``"dp-se"``.
    seed : seed of the run's ``numpy.random.default_rng``, a non-negative integer; the same seed gives the same
        result.
    **params : the algorithm's parameters by name (defaults for the others); values may be given as text.
        A deprecated name (``agents`` for ``users``) still works and issues a
        :class:`DeprecatedParameterWarning`.

    Returns
    -------
    Result
        The run's metrics, its curve and its per-batch records.

    Raises
    ------
    ConfigError
        For an unknown algorithm, an unknown parameter, a bad value or a seed that is not a non-negative
        integer.

    Examples
    --------
    >>> from anonbandits import simulate
    >>> r = simulate("dp-se", seed=1, means="0.9,0.5", horizon=20_000, epsilon=1.0)
    >>> bool(r.metrics["regret"] > 0), int(r.curve[0][-1])
    (True, 20000)
    """
    seed = check_seed(seed)
    spec = get(name)
    return spec.run(spec.resolve(params), seed)
