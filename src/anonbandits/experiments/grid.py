"""Experiment grids from TOML or JSON.

A grid file::

    seeds = 10                 # an int n means seeds 0..n-1; a list gives them explicitly
    [defaults]                 # optional: parameters shared by every entry
    horizon = 200000
    [[runs]]
    algorithm = "anon-batched"
    decomposer = ["polytope", "greedy", "randomized"]   # a list expands into one entry per value
    users = 300
    [[runs]]
    algorithm = "anon-etc"
    users = 300

Every combination of list values in a ``runs`` entry is one configuration; each configuration runs once per
seed. Parameter names are the algorithm's (see ``anonbandits simulate --algorithm NAME --help``).
"""

from __future__ import annotations

import itertools
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonbandits import registry
from anonbandits.errors import ConfigError


@dataclass(frozen=True)
class Task:
    """One run: an algorithm, its fully resolved parameters, and a seed."""

    algorithm: str
    params: Mapping[str, Any]
    seed: int


def load_grid(path: str | Path) -> dict[str, Any]:
    """Read a grid file (``.toml`` or ``.json``); :class:`ConfigError` on any problem."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read grid file {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"grid file {path} is not valid {path.suffix.lstrip('.').upper()}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        raise ConfigError(f"grid file {path} needs a non-empty list 'runs' of algorithm entries")
    return data


def seed_list(seeds: int | Sequence[int], offset: int = 0) -> list[int]:
    """``n`` -> ``[offset, ..., offset + n - 1]``; a list is taken as is."""
    if isinstance(seeds, bool):
        raise ConfigError("'seeds' must be a positive integer or a list of integers")
    if isinstance(seeds, int):
        if seeds < 1:
            raise ConfigError(f"'seeds' must be at least 1, got {seeds}")
        return list(range(offset, offset + seeds))
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise ConfigError("'seeds' must be a positive integer or a list of non-negative integers")
    return list(seeds)


def tasks_from_grid(grid: Mapping[str, Any]) -> list[Task]:
    """Expand a grid (as returned by :func:`load_grid`) into tasks, configuration-major, seed-minor."""
    seeds = seed_list(grid.get("seeds", 1), int(grid.get("seed_offset", 0)))
    defaults = dict(grid.get("defaults", {}))
    tasks: list[Task] = []
    for k, entry in enumerate(grid["runs"]):
        if not isinstance(entry, Mapping) or "algorithm" not in entry:
            raise ConfigError(f"runs[{k}] must be a table with an 'algorithm' key")
        merged = {**defaults, **entry}
        keys = list(merged)
        values = [v if isinstance(v, list) else [v] for v in merged.values()]
        for combo in itertools.product(*values):
            params = dict(zip(keys, combo, strict=True))
            spec = registry.get(params.pop("algorithm"))
            resolved = spec.resolve(params)
            tasks.extend(Task(spec.name, resolved, s) for s in seeds)
    return tasks
