"""Algorithms the simulator knows, by name: each family package exposes ``ALGORITHMS``, a tuple of
:class:`AlgorithmSpec` (adding a family means adding its module path to ``_FAMILIES`` and its algorithms' names
to ``_INDEX``).

A spec's ``run(params, seed)`` is a module-level function or a ``functools.partial`` of one (so it pickles
to worker processes and Dask workers) that draws all its randomness from ``numpy.random.default_rng(seed)``
and returns a :class:`Result`. :func:`simulate` is the one library call on top.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from anonbandits.errors import ConfigError

# One line per family package; each exports ALGORITHMS.
_FAMILIES: tuple[str, ...] = (
    "anonbandits.anonymous",
    "anonbandits.dp.distributed",
    "anonbandits.dp",
    "anonbandits.multiagent.mase",
    "anonbandits.multiagent.decentralized",
)

# The family module registering each algorithm, so that get(name) and simulate(name) import that family alone
# (importing every family costs a second and loads numba). A test checks it against what the families'
# ALGORITHMS register; a name missing here is still found, by importing every family.
_INDEX: dict[str, str] = {
    **dict.fromkeys(("anon-batched", "anon-etc"), "anonbandits.anonymous"),
    **dict.fromkeys(("cdp-se", "ldp-se", "dist-dp-se", "dist-rdp-se", "dist-cdp-se", "shuffle-dp-se"),
                    "anonbandits.dp.distributed"),
    **dict.fromkeys(("se", "dp-se", "anytime-lazy-ucb", "hybrid-ucb", "ftnl", "naive-ftnl"), "anonbandits.dp"),
    **dict.fromkeys(("mase", "dp-mase", "corrupted-elimination", "feraud", "central", "independent"),
                    "anonbandits.multiagent.mase"),
    **dict.fromkeys(("decentralized-elimination", "no-sharing", "full-sharing"),
                    "anonbandits.multiagent.decentralized"),
}


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
    """One algorithm parameter; becomes the flag ``--name`` (underscores as dashes) of ``simulate``."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class Result:
    """What one run of any algorithm reports (the one result type of :func:`simulate`).

    Attributes
    ----------
    metrics : the run's numbers by name (regret, pulls, ...): the columns of the results table.
    curve : an optional ``(x, y)`` pair of 1-D arrays, e.g. rounds and cumulative regret (drawn by ``--plot``).
    label : the name of the line the curve belongs to (default: the algorithm's name).
    records : one mapping per batch (paper 000's demand, assignments, rounds, eliminations); empty where an
        algorithm reports none (paper 004's blocks stay on ``run_elimination(...).blocks``: cheaper).
    """

    metrics: Mapping[str, Any]
    curve: tuple[np.ndarray, np.ndarray] | None = None
    label: str | None = None
    records: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm as the simulator sees it."""

    name: str
    run: Callable[[Mapping[str, Any], int], Result]
    params: tuple[Param, ...]
    summary: str
    family: str = ""
    curve_axes: tuple[str, str] = ("round", "cumulative pseudo-regret")

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, given: Mapping[str, Any], *, as_flags: bool = False) -> dict[str, Any]:
        """Every parameter: its default overlaid with ``given`` (flag text or scalars from a grid file), converted
        to the parameter's type; unknown names and bad values raise :class:`ConfigError`, which names
        parameters as command-line flags (``--best-effort``) with ``as_flags``, else as grid keys
        (``'best_effort'``)."""
        known = {p.name: p for p in self.params}

        def called(name: str) -> str:
            return f"--{name.replace('_', '-')}" if as_flags else f"parameter {name!r}"

        unknown = sorted(set(given) - set(known))
        if unknown:
            names = ", ".join(called(n) for n in unknown)
            raise ConfigError(f"algorithm {self.name!r} has no {names}; "
                              f"known: {', '.join(called(n) for n in sorted(known))}")
        out = self.defaults()
        for name, value in given.items():
            p = known[name]
            try:
                value = _convert(p.type, value)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ConfigError(f"{called(name)} of {self.name!r}: {exc}") from None
            if p.choices is not None and value not in p.choices:
                raise ConfigError(f"{called(name)} of {self.name!r} must be one of "
                                  f"{', '.join(map(str, p.choices))}, got {value!r}")
            out[name] = value
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
    if name in _INDEX:
        for spec in importlib.import_module(_INDEX[name]).ALGORITHMS:
            if spec.name == name:
                return spec
    algorithms = all_algorithms()
    if name not in algorithms:
        raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(sorted(algorithms))}")
    return algorithms[name]


def simulate(name: str, *, seed: int, **params: Any) -> Result:
    """Run the registered algorithm ``name`` once: the library's one call for every algorithm.

    Parameters
    ----------
    name : a registered algorithm (listed by ``anonbandits simulate --help``), e.g. ``"dp-se"``.
    seed : seed of the run's ``numpy.random.default_rng``; the same seed gives the same result.
    **params : the algorithm's parameters by name (defaults for the others); values may be given as text.

    Returns
    -------
    Result
        The run's metrics, its curve and its per-batch records.

    Raises
    ------
    ConfigError
        For an unknown algorithm, an unknown parameter or a bad value.

    Examples
    --------
    >>> from anonbandits import simulate
    >>> r = simulate("dp-se", seed=1, means="0.9,0.5", horizon=20_000, epsilon=1.0)
    >>> bool(r.metrics["regret"] > 0), int(r.curve[0][-1])
    (True, 20000)
    """
    spec = get(name)
    return spec.run(spec.resolve(params), int(seed))
