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
seed. Parameter names are the algorithm's (see ``anonbandits simulate --algorithm NAME --help``). The only
top-level keys are ``seeds``, ``seed_offset`` (first seed when ``seeds`` is a count), ``defaults`` and
``runs``; values are checked against each parameter's type (``horizon = 1.5`` is refused, not truncated).

A grid is counted before it is expanded (:func:`count_runs`: exact integers, no task built): one of more
than :data:`MAX_RUNS` runs is refused unless the caller raises the limit (``max_runs``; on the command line
``anonbandits simulate --max-runs N``), so a grid that would fill the memory is one line instead.
"""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from anonbandits import registry
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import BOOL, COUNT, PATH, Rule, check_seed, checks, optional


@filled_dataclass(frozen=True)
class Task:
    """One run: an algorithm, its fully resolved parameters, and a seed.

    Parameters
    ----------
    algorithm : str
        A registered algorithm's name.
    params : Mapping of str to object
        Every parameter of the algorithm, converted and checked (``AlgorithmSpec.resolve``).
    seed : int
        The run's seed.
    allow_large : bool, optional
        Run it with sizes past the documented limits of :mod:`anonbandits.core.limits` confirmed (the command
        line's ``--allow-large``); not a parameter of the run, so not in its table row. Default False.

    Raises
    ------
    ConfigError
        For an ``algorithm`` that is not a str, ``params`` that are not a mapping of names (str), a ``seed``
        that is not a non-negative integer, or an ``allow_large`` that is not a bool (the parameters' values are
        checked by ``resolve``, which gives them).

    {{refs_experiments}}

    Examples
    --------
    >>> from anonbandits.registry import get
    >>> task = Task("dp-se", get("dp-se").resolve({"horizon": 1000}), seed=0)
    >>> task.params["horizon"], task.params["epsilon"], task.seed
    (1000, 0.5, 0)
    """

    algorithm: str
    params: Mapping[str, Any]
    seed: int
    allow_large: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.algorithm, str):
            raise ConfigError(f"algorithm must be an algorithm's name (a str), got {_shown(self.algorithm)}")
        if not isinstance(self.params, Mapping) or not all(isinstance(name, str) for name in self.params):
            raise ConfigError(f"params must be a mapping of parameter names to values, got {_shown(self.params)}")
        check_seed(self.seed)
        BOOL.check("allow_large", self.allow_large)


GRID_SUFFIXES = (".toml", ".json")
#: a grid: a mapping of its top-level keys (``runs``, ``seeds``, ...), as :func:`load_grid` returns it
GRID = Rule(lambda v: isinstance(v, Mapping), "a grid: a mapping with a non-empty list 'runs' (see load_grid)")
_TOP_LEVEL = ("seeds", "seed_offset", "defaults", "runs")
#: more seeds than this is a typo, not an experiment (the seed list alone would fill memory)
MAX_SEEDS = 1_000_000
#: default limit on the runs of one grid (configurations x seeds); larger grids need an explicit, higher limit
MAX_RUNS = 1_000_000


@fill
@checks(path=PATH)
def load_grid(path: str | Path) -> dict[str, Any]:
    """Read a grid file (``.toml`` or ``.json``; format in the module docstring).

    Parameters
    ----------
    path : str or pathlib.Path
        The grid file.

    Returns
    -------
    dict
        The grid: a non-empty list ``runs`` and only the keys ``seeds``, ``seed_offset``, ``defaults`` and
        ``runs``, for :func:`count_runs` and :func:`tasks_from_grid` (which check the values).

    Raises
    ------
    ConfigError
        On any problem: a ``path`` that is not a str or a path object, wrong extension, unreadable, not UTF-8,
        not valid TOML/JSON, nested too deeply, or not shaped like a grid.

    {{refs_experiments}}

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "grid.json"
    >>> _ = path.write_text(json.dumps({"seeds": 2, "runs": [{"algorithm": "dp-se", "horizon": [1000, 2000]}]}))
    >>> load_grid(path)["runs"]
    [{'algorithm': 'dp-se', 'horizon': [1000, 2000]}]
    >>> load_grid(Path(tmp.name) / "grid.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: --config ...: a grid file must end in .toml or .json; this path ends in '.yaml'
    >>> tmp.cleanup()
    """
    path = Path(path)
    shown = str(path) if str(path).isprintable() else repr(str(path))  # a name with a newline: one line still
    suffix = path.suffix.lower()
    if suffix not in GRID_SUFFIXES:
        ends = f"ends in {path.suffix!r}" if path.suffix else "has no suffix"
        raise ConfigError(f"--config {shown}: a grid file must end in .toml or .json; this path {ends}")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read grid file {shown}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"grid file {shown} is not UTF-8 text (byte {exc.start})") from None
    try:
        data = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"grid file {shown} is not valid {suffix.lstrip('.').upper()}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"grid file {shown} nests too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        raise ConfigError(f"grid file {shown} needs a non-empty list 'runs' of algorithm entries")
    unknown = sorted(set(data) - set(_TOP_LEVEL))
    if unknown:
        raise ConfigError(
            f"grid file {shown} has unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(_TOP_LEVEL)}"
        )
    if not isinstance(data.get("defaults", {}), dict):
        raise ConfigError(f"grid file {shown}: 'defaults' must be a table of parameter values")
    return data


def seed_list(seeds: int | Sequence[int], offset: int = 0) -> list[int]:
    """``n`` -> ``[offset, ..., offset + n - 1]``; a list is taken as is. :class:`ConfigError` for a count
    below 1, a negative offset or seed, or anything that is not an integer."""
    require(
        isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0,
        "the seed offset",
        "a non-negative integer",
        offset,
    )
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        require(1 <= seeds <= MAX_SEEDS, "'seeds'", f"at least 1 and at most {MAX_SEEDS}", seeds)
        return list(range(offset, offset + seeds))
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
    ):
        raise ConfigError(
            f"'seeds' must be a positive integer or a non-empty list of non-negative integers, got {seeds!r}"
        )
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"'seeds' lists a seed twice: {seeds!r}")
    return list(seeds)


def _entries(grid: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each ``runs`` entry merged over ``defaults``; :class:`ConfigError` for a grid without a non-empty list
    ``runs`` or with ``defaults`` that are not a table, an entry that is not a table with an ``algorithm`` key or
    that holds an empty list."""
    runs, defaults = grid.get("runs"), grid.get("defaults", {})
    if not isinstance(runs, list) or not runs:
        raise ConfigError(f"grid needs a non-empty list 'runs' of algorithm entries, got {_shown(runs)}")
    if not isinstance(defaults, Mapping):
        raise ConfigError(f"grid 'defaults' must be a table of parameter values, got {_shown(defaults)}")
    defaults = dict(defaults)
    merged = []
    for k, entry in enumerate(runs):
        if not isinstance(entry, Mapping) or "algorithm" not in entry:
            raise ConfigError(f"runs[{k}] must be a table with an 'algorithm' key")
        values = {**defaults, **entry}
        empty = [key for key, v in values.items() if isinstance(v, list) and not v]
        if empty:
            raise ConfigError(f"runs[{k}].{empty[0]} is an empty list, so the grid expands to no runs")
        merged.append(values)
    return merged


def _configurations(entry: Mapping[str, Any]) -> int:
    return math.prod(len(v) for v in entry.values() if isinstance(v, list))


@fill
@checks(grid=GRID)
def count_runs(grid: Mapping[str, Any]) -> int:
    """The number of runs ``grid`` expands to (configurations x seeds).

    Computed from the list lengths alone: exact however large, and without building a single task.

    Parameters
    ----------
    grid : Mapping of str to object
        A grid, as returned by :func:`load_grid`.

    Returns
    -------
    int
        The number of runs.

    Raises
    ------
    ConfigError
        As in :func:`tasks_from_grid`, for a ``grid`` that is not a mapping, without a non-empty list ``runs``,
        a bad ``seeds`` or ``seed_offset`` or a malformed entry (one without ``algorithm``, or with an empty
        list).

    {{refs_experiments}}

    Examples
    --------
    >>> count_runs({"seeds": 10**6, "runs": [{"algorithm": "dp-se", "horizon": list(range(1, 1001))}]})
    1000000000
    >>> count_runs({"seeds": 0, "runs": [{"algorithm": "dp-se"}]})
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: 'seeds' must be at least 1 and at most 1000000, got 0
    """
    seeds = seed_list(grid.get("seeds", 1), grid.get("seed_offset", 0))
    return len(seeds) * sum(map(_configurations, _entries(grid)))


@fill
@checks(grid=GRID, max_runs=optional(COUNT))
def tasks_from_grid(grid: Mapping[str, Any], *, max_runs: int | None = MAX_RUNS) -> list[Task]:
    """Expand a grid into tasks, configuration-major, seed-minor.

    Parameters
    ----------
    grid : Mapping of str to object
        A grid, as returned by :func:`load_grid`.
    max_runs : int or None, optional
        The largest number of runs allowed; default ``MAX_RUNS`` (one million); ``None``: no limit. The runs
        are counted before any task is built.

    Returns
    -------
    list of Task
        One task per configuration and seed, each with every parameter resolved and checked.

    Raises
    ------
    ConfigError
        For a ``grid`` that is not a mapping or has no non-empty list ``runs``, a ``max_runs`` that is neither
        ``None`` nor a positive integer, more than ``max_runs`` runs (naming the count); naming the entry and
        key, for an empty list, an unknown algorithm or parameter, or a bad value; for bad ``seeds``.

    {{refs_experiments}}

    Examples
    --------
    >>> grid = {"seeds": 2, "runs": [{"algorithm": "dp-se", "horizon": [1000, 2000]}]}
    >>> [(task.params["horizon"], task.seed) for task in tasks_from_grid(grid)]
    [(1000, 0), (1000, 1), (2000, 0), (2000, 1)]
    >>> tasks_from_grid(grid, max_runs=3)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: the grid expands to 4 runs (2 configurations x 2 seeds), more than max_runs=3
    """
    seeds = seed_list(grid.get("seeds", 1), grid.get("seed_offset", 0))
    entries = _entries(grid)
    configurations = sum(map(_configurations, entries))
    if max_runs is not None and configurations * len(seeds) > max_runs:
        raise ConfigError(
            f"the grid expands to {configurations * len(seeds)} runs ({configurations} "
            f"configurations x {len(seeds)} seeds), more than max_runs={max_runs}"
        )
    tasks: list[Task] = []
    for k, merged in enumerate(entries):
        keys = list(merged)
        values = [v if isinstance(v, list) else [v] for v in merged.values()]
        for combo in itertools.product(*values):
            params = dict(zip(keys, combo, strict=True))
            name = params.pop("algorithm")
            require(isinstance(name, str), f"runs[{k}].algorithm", "a name", name)
            spec = registry.get(name)
            tasks.extend(Task(spec.name, spec.resolve(params), s) for s in seeds)
    return tasks
