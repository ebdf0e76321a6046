"""The front door of the simulator: :func:`simulate`, the one library call for every algorithm, and the index of the
algorithms by name (:func:`get`, :func:`all_algorithms`, :func:`channel_algorithms`).

The registry is the top of the bandit layer: it imports the families, none imports it. Each family package in
``_FAMILIES`` exports ``ALGORITHMS``, a tuple of :class:`~anonbandits.spec.AlgorithmSpec` (the shared types are in
:mod:`anonbandits.spec` and :mod:`anonbandits.results`, below the families), and lists their names in its light
``names`` module; adding a family means adding its package to ``_FAMILIES``. The name index is read from those
``names`` modules without importing any family, so ``get(name)`` and ``simulate(name)`` import the one family
registering ``name`` (importing every family costs a second and loads numba).

A spec's ``run(params, seed)`` is a module-level function or a ``functools.partial`` of one (so it pickles
to worker processes and Dask workers) that draws all its randomness from ``numpy.random.default_rng(seed)``
and returns a :class:`~anonbandits.results.Result`.

``Param``, ``AlgorithmSpec``, ``parse_bool``, ``DeprecatedParameterWarning`` (now in :mod:`anonbandits.spec`) and
``Result`` (now in :mod:`anonbandits.results`; ``from anonbandits import Result``) are still found here for one
release, with a ``DeprecationWarning`` naming their new path.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonbandits import results as _results
from anonbandits import spec as _spec
from anonbandits._deprecated import moved
from anonbandits._docstrings import fill
from anonbandits.channels import CHANNELS
from anonbandits.errors import ConfigError, _shown
from anonbandits.validation import check_seed, trusted

if TYPE_CHECKING:
    from anonbandits.results import Result
    from anonbandits.spec import AlgorithmSpec

# One line per family package; each exports ALGORITHMS and lists their names in its module ``names``.
_FAMILIES: tuple[str, ...] = (
    "anonbandits.anonymous",
    "anonbandits.dp.distributed",
    "anonbandits.dp",
    "anonbandits.multiagent.mase",
    "anonbandits.multiagent.decentralized",
)

#: The names this module held before they moved below the families (old paths, for one release).
__getattr__ = moved(
    __name__,
    {
        **dict.fromkeys(("AlgorithmSpec", "DeprecatedParameterWarning", "Param", "parse_bool"), _spec),
        "Result": _results,
    },
)


def _names(family: str) -> tuple[str, ...]:
    """``NAMES`` of the family's ``names`` module, read as a literal without importing the family (importing a
    submodule runs its package's ``__init__``: the whole family); empty when the file is not there (a family
    installed without its sources is then found by importing every family)."""
    path = Path(__file__).parent.joinpath(*family.split(".")[1:], "names.py")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except OSError:
        return ()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "NAMES" for t in targets):
            return tuple(ast.literal_eval(value))
    return ()


@functools.cache
def _index() -> dict[str, str]:
    """The family package registering each algorithm, by name, from the families' ``names`` modules (a test
    checks them against what the families' ``ALGORITHMS`` register; a name missing there is still found, by
    importing every family)."""
    return {name: family for family in _FAMILIES for name in _names(family)}


def channel_algorithms() -> list[str]:
    """The algorithms whose ``channel`` parameter offers a channel that groups users (``anonymous``), by name.

    Every other algorithm refuses a ``channel`` (:meth:`~anonbandits.spec.AlgorithmSpec.resolve`) in one line
    naming these.

    Returns
    -------
    list of str
        Their names, sorted.

    Raises
    ------
    RuntimeError
        When two family packages register the same name (:func:`all_algorithms`).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (the anonymous
    channel).

    Examples
    --------
    >>> {"anon-bai", "se", "dp-se"} <= set(channel_algorithms())
    True
    >>> get("ftnl").resolve({"channel": "anonymous"}, as_flags=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: algorithm 'ftnl' has no --channel: --channel anonymous is taken by ...
    """
    return sorted(
        name
        for name, spec in all_algorithms().items()
        if any(p.name == "channel" and _offers_grouping(p.choices) for p in spec.params)
    )


def _offers_grouping(choices: tuple[Any, ...] | None) -> bool:
    """Whether the channel names ``choices`` hold one that groups users (the anonymous channel)."""
    return any(CHANNELS[c].requires_decomposition for c in choices or () if c in CHANNELS)


@fill
def all_algorithms() -> dict[str, AlgorithmSpec]:
    """Every registered algorithm, by name.

    Returns
    -------
    dict of str to AlgorithmSpec
        The spec of each registered algorithm, in the order of the family packages.

    Raises
    ------
    RuntimeError
        When two family packages register the same name (a bug of the registry, not a user's mistake).

    {{refs_registered}}

    Examples
    --------
    >>> specs = all_algorithms()
    >>> "anon-batched" in specs, specs["mase"].family
    (True, 'multi-agent BAI (paper 003)')
    """
    found: dict[str, AlgorithmSpec] = {}
    for module_name in _FAMILIES:
        module = importlib.import_module(module_name)
        for spec in module.ALGORITHMS:
            if spec.name in found:
                raise RuntimeError(f"algorithm name {spec.name!r} registered twice")
            found[spec.name] = spec
    return found


def get(name: str) -> AlgorithmSpec:
    """The spec registered under ``name``.

    Parameters
    ----------
    name : str
        A registered algorithm's name, e.g. ``"anon-etc"``.

    Returns
    -------
    AlgorithmSpec
        Its spec.

    Raises
    ------
    ConfigError
        For a name that is not a str, or an unknown name (the message lists the known ones).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (``anon-etc`` is
    its Algorithm 2).

    Examples
    --------
    >>> get("anon-etc").family
    'anonymous'
    >>> get("anon-ect")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: unknown algorithm 'anon-ect'; known: anon-bai, anon-batched, ...
    """
    if not isinstance(name, str):
        raise ConfigError(f"name must be an algorithm's name (a str), got {_shown(name)}")
    family = _index().get(name)
    if family is not None:
        for spec in importlib.import_module(family).ALGORITHMS:
            if spec.name == name:
                return spec
    algorithms = all_algorithms()
    if name not in algorithms:
        raise ConfigError(f"unknown algorithm {name!r}; known: {', '.join(sorted(algorithms))}")
    return algorithms[name]


@fill
def simulate(name: str, *, seed: int, **params: Any) -> Result:
    """Run the registered algorithm ``name`` once: the library's one call for every algorithm.

    Parameters
    ----------
    name : str
        A registered algorithm (listed by ``anonbandits simulate --help``), e.g. ``"dp-se"``.
    seed : int
        Seed of the run's ``numpy.random.default_rng``, a non-negative integer; the same seed gives the same
        result.
    **params : object
        The algorithm's parameters by name (defaults for the others); values may be given as text. A
        deprecated name (``agents`` for ``users``) still works and issues a
        :class:`~anonbandits.spec.DeprecatedParameterWarning`.

    Returns
    -------
    Result
        The run's metrics, its curve and its per-batch records.

    Raises
    ------
    ConfigError
        For an unknown algorithm, an unknown parameter, a bad value or a seed that is not a non-negative
        integer.

    {{refs_registered}}

    Examples
    --------
    >>> from anonbandits import simulate
    >>> r = simulate("dp-se", seed=1, means="0.9,0.5", horizon=20_000, epsilon=1.0)
    >>> bool(r.metrics["regret"] > 0), int(r.curve[0][-1])
    (True, 20000)
    """
    seed = check_seed(seed)
    spec = get(name)
    resolved = spec.resolve(params)  # every parameter checked here: the run's own library calls are trusted
    with trusted():
        return spec.run(resolved, seed)


# AlgorithmSpec.resolve names these when another algorithm is given a channel (the spec module, below the
# families, cannot ask the registry)
_spec.channel_takers = channel_algorithms
