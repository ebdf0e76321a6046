"""The results of the anonymous family's library calls as they were read before they became
:class:`~anonbandits.results.Result`: for one release, ``run.regret``, ``run.batches``, ``run.stopped_at``, ...
still answer (with a ``DeprecationWarning`` naming where the value is now), and the old class names
``AnonymousRun`` and ``IdentificationRun`` still import (with a ``DeprecationWarning``).

Both classes are :class:`~anonbandits.results.Result` and add nothing but these old attribute names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from anonbandits.results import Result


def _from(where: str, key: str) -> Callable[[Result], Any]:
    return lambda result: getattr(result, where)[key]


class _Legacy(Result):
    """A :class:`Result` that still answers the old attribute names of its driver's result type."""

    _OLD: Mapping[str, tuple[str, Callable[[Result], Any]]] = {}

    def __getattr__(self, name: str) -> Any:
        found = type(self)._OLD.get(name)
        if found is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        where, get = found
        warnings.warn(
            f"result.{name} is deprecated, read {where} (the library's runs return "
            "anonbandits.results.Result; the old attributes go in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return get(self)


def _batch_records(result: Result) -> tuple[Any, ...]:
    from anonbandits.anonymous.batches import BatchRecord

    return tuple(BatchRecord(**r) for r in result.records)


class RegretResult(_Legacy):
    """The :class:`Result` of ``batched_regret``, ``anon_batched`` and ``anon_etc`` (old name ``AnonymousRun``).

    Examples
    --------
    >>> import warnings
    >>> r = RegretResult({"regret": 2.0}, info={"horizon": 10})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r.regret, r.horizon
    (2.0, 10)
    """

    _OLD = {
        **{
            m: (f'result.metrics["{m}"]', _from("metrics", m))
            for m in ("regret", "observations", "min_group_size", "exploration_rounds", "optimal_fraction")
        },
        **{m: (f'result.info["{m}"]', _from("info", m)) for m in ("horizon", "committed")},
        "batches": ("result.records (one mapping per batch)", _batch_records),
    }


def _error_rate(result: Result) -> Callable[..., float]:
    def error_rate(instance: Any, approx: float) -> float:  # bai.error_rate(result, instance, approx)
        gap = instance.gaps[np.arange(instance.n_users), result.info["recommendation"]]
        return float(np.mean(gap > approx))

    return error_rate


class IdentificationResult(_Legacy):
    """The :class:`Result` of ``identify`` (old name ``IdentificationRun``).

    Examples
    --------
    >>> import warnings
    >>> r = IdentificationResult({"rounds": 30}, info={"stopped_at": [10, 30]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r.rounds, r.stopped_at
    (30, [10, 30])
    """

    _OLD = {
        **{
            m: (f'result.metrics["{m}"]', _from("metrics", m))
            for m in ("rounds", "samples", "surplus", "batches", "assignments", "min_group_size")
        },
        **{m: (f'result.info["{m}"]', _from("info", m)) for m in ("stopped_at", "recommendation", "exposure")},
        "error_rate": ("anonbandits.anonymous.bai.error_rate(result, ...)", _error_rate),
    }


#: The old class names and what they stand for now.
_RENAMED = {"AnonymousRun": RegretResult, "IdentificationRun": IdentificationResult}


def old_names(module: str, names: tuple[str, ...]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``module`` that still finds the old result classes ``names``, with a warning.

    Parameters
    ----------
    module : str
        The module's ``__name__``.
    names : tuple of str
        The old names it held (``AnonymousRun``, ``IdentificationRun``).

    Returns
    -------
    callable
        ``__getattr__(name)``.

    Examples
    --------
    >>> import warnings
    >>> get = old_names("anonbandits.anonymous.regret", ("AnonymousRun",))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     cls = get("AnonymousRun")
    >>> cls is RegretResult, "anonbandits.results.Result" in str(caught[0].message)
    (True, True)
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated: the library's runs return anonbandits.results.Result (the "
            "old fields are in its metrics, info and records; the name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return _RENAMED[name]

    return __getattr__
