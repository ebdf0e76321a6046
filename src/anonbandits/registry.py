"""Algorithms the simulator knows, by name.

Each algorithm family (a subpackage) exposes ``ALGORITHMS``: a tuple of :class:`AlgorithmSpec`. The
simulator, the experiment runner and the CLI only ever look algorithms up here, so adding a family means
adding its module path to ``_FAMILIES``.

A spec's ``run(params, seed)`` is a module-level function (so it pickles to worker processes and Dask
workers) that draws all its randomness from ``numpy.random.default_rng(seed)`` and returns a
:class:`RunOutput`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Param:
    """One algorithm parameter; becomes the flag ``--name`` (underscores as dashes) of ``simulate``."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class RunOutput:
    """What one run reports.

    ``metrics`` become columns of the results table. ``curve`` is an optional ``(x, y)`` pair of 1-D arrays
    (e.g. rounds and cumulative regret) drawn by ``--plot``; ``label`` names the line it belongs to.
    """

    metrics: Mapping[str, Any]
    curve: tuple[np.ndarray, np.ndarray] | None = None
    label: str | None = None


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm as the simulator sees it."""

    name: str
    run: Callable[[Mapping[str, Any], int], RunOutput]
    params: tuple[Param, ...]
    summary: str
    family: str = ""
    curve_axes: tuple[str, str] = ("round", "cumulative pseudo-regret")
    extra: Mapping[str, Any] = field(default_factory=dict)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with ``given``; unknown names and bad values raise :class:`ConfigError`."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ConfigError(f"algorithm {self.name!r} has no parameter(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(known))}")
        out = self.defaults()
        for name, value in given.items():
            p = known[name]
            try:
                value = p.type(value) if isinstance(value, str) or p.type in (int, float) else value
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"parameter {name!r} of {self.name!r}: {exc}") from None
            if p.choices is not None and value not in p.choices:
                raise ConfigError(f"parameter {name!r} of {self.name!r} must be one of "
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
    algorithms = all_algorithms()
    if name not in algorithms:
        raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(sorted(algorithms))}")
    return algorithms[name]
