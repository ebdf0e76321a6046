"""What a run reports: :class:`Result`, the one result type of every algorithm, and the schema of its metrics,
every metric any algorithm reports, once.

A metric has one name, one kind and one meaning in every family:

* ``int``: a count or an index (a Python ``int`` in the result);
* ``float``: a finite real number;
* ``flag``: 0 or 1 (a Python ``int``; ``True``/``False`` are stored as 1/0 so tables and means agree).

Metrics are numbers and never NaN or infinite. A metric is empty (``None`` in the result, an empty cell in a
CSV table, ``null`` in JSON lines) only where its entry says when it is "not applicable"; e.g.
``min_group_size`` when no group was observed, or ``dp_epsilon`` of a run without privacy (no guarantee to
report: the schema writes "no privacy" as empty rather than as an infinite epsilon). No metric has the name of a
parameter (the parameter ``dp_delta`` is the delta asked for, the metric ``privacy_delta`` the delta a run's
guarantee has), so a table row holds both. Text and vectors are
not metrics: they go to ``Result.info`` (e.g. ``methods_used``, ``instance``, MASE's ``votes`` vector).

:func:`check_metrics` is called by :class:`Result` itself, which therefore lives here, next to the schema it
enforces: every result of every family (and of the library functions that return a ``Result``) is checked in
this one place. ``from anonbandits import Result`` is its public path. docs/parameters.md renders
:data:`METRICS` (``python -m anonbandits.results`` prints the table) and a test keeps the two equal.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, NamedTuple, Self

import numpy as np

from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.errors import ConfigError, _shown

KINDS = ("int", "float", "flag")


class _MetricFields(NamedTuple):
    name: str
    kind: str
    unit: str
    meaning: str
    empty: str = ""
    families: str = ""


@fill
class Metric(_MetricFields):
    """One metric of the schema: its name, kind, unit, meaning and when it is empty.

    Parameters
    ----------
    name : str
        The metric's name (a column of the results table); ``<k>`` stands for a batch number 1, 2, ...
    kind : str
        ``"int"``, ``"float"`` or ``"flag"`` (0 or 1).
    unit : str
        What it counts (``rounds``, ``pulls``, ...); ``"-"`` for a plain number.
    meaning : str
        One line for docs/parameters.md.
    empty : str, optional
        When it is "not applicable" (``None`` in a result); default ``""``: never.
    families : str, optional
        The families (or algorithms) that report it; default ``""``.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For a field that is not a str, or a ``kind`` outside ``KINDS``; however the metric is
        built (``Metric(...)``, ``_make``, ``_replace``).

    {{refs_metrics}}

    Examples
    --------
    >>> m = metric("regret")
    >>> m.kind, m.unit, m.empty
    ('float', 'reward', '')
    >>> Metric("regret", "real", "reward", "meaning")
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: kind must be one of int, float, flag, got 'real'
    """

    __slots__ = ()

    def __new__(cls, name: str, kind: str, unit: str, meaning: str, empty: str = "", families: str = "") -> Metric:
        fields = {"name": name, "kind": kind, "unit": unit, "meaning": meaning, "empty": empty, "families": families}
        for field_name, value in fields.items():
            if not isinstance(value, str):
                raise ConfigError(f"{field_name} must be a str, got {_shown(value)}")
        if kind not in KINDS:
            raise ConfigError(f"kind must be one of {', '.join(KINDS)}, got {_shown(kind)}")
        return super().__new__(cls, name, kind, unit, meaning, empty, families)

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Self:  # type: ignore[override]  # checked, however built
        return cls(*iterable)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**self._asdict(), **changes})


_ALL = "all"
#: The schema's rows: name, kind, unit, when empty, families, then the meaning on the row's next lines.
_ROWS: tuple[tuple[str, str, str, str, str, str], ...] = (
    # what every regret-minimising family reports
    (
        "regret",
        "float",
        "reward",
        "",
        "anonymous, dp, distributed-dp",
        "cumulative pseudo-regret at the horizon (summed over users where there are several; the experts' regret for "
        "ftnl, naive-ftnl)",
    ),
    (
        "best_arm_found",
        "flag",
        "-",
        "",
        "dp, distributed-dp, mase, decentralized",
        "1 when the run's answer is an arm of largest mean: the recommended arm (multi-agent), the only arm left "
        "(distributed DP) or the most-played arm (dp)",
    ),
    # privacy spent
    (
        "privacy_epsilon",
        "float",
        "-",
        "the run has no privacy mechanism",
        "anonymous, distributed-dp, se/dp-se anonymous",
        "epsilon of the (epsilon, privacy_delta)-DP guarantee the run's releases give, with respect to one reward",
    ),
    (
        "privacy_epsilon_per_user",
        "float",
        "-",
        "the run has no privacy mechanism",
        "anonymous, se/dp-se anonymous",
        "epsilon with respect to all of one user's rewards over the whole run (composition over the releases the "
        "user is in)",
    ),
    (
        "privacy_delta",
        "float",
        "-",
        "the run has no privacy mechanism",
        "anonymous, distributed-dp, se/dp-se anonymous",
        "delta of the reported guarantees (0: pure DP)",
    ),
    # anonymous bandits (paper 000)
    (
        "observations",
        "int",
        "rewards",
        "",
        "anonymous, se/dp-se anonymous",
        "rewards observed (inside released group sums)",
    ),
    (
        "min_group_size",
        "int",
        "users",
        "no group was observed",
        "anonymous, se/dp-se anonymous, mase, dp-mase, decentralized",
        "smallest group whose sum was released (at least C: the anonymous channel's auditor refuses a smaller one); "
        "the multi-agent boards: smallest aggregate released "
        "(agents; at least C with --channel anonymous, 1 on the direct channel)",
    ),
    ("exploration_rounds", "int", "rounds", "", "anonymous, se/dp-se anonymous", "rounds before the last commitment"),
    (
        "assignments",
        "int",
        "assignments",
        "",
        "anonymous, se/dp-se anonymous",
        "user-to-arm assignments of the decompositions used",
    ),
    (
        "optimal_fraction",
        "float",
        "fraction",
        "",
        "anonymous, se/dp-se anonymous",
        "users (all of them) committed to a best arm; if the horizon came first, whose recommendation is one",
    ),
    ("alpha_used", "float", "-", "", "anon-batched", "decomposer ratio alpha setting T' = T / (alpha (2C+2))"),
    ("distinct_assignments", "int", "assignments", "", "anon-batched", "distinct assignments over all batches"),
    ("exploration_batches", "int", "batches", "", "anon-batched", "BaSE batches run before commitment"),
    (
        "thin_arm_users",
        "int",
        "users",
        "",
        "anon-batched",
        "users whose best arm is best for fewer than U users (--best-effort: served without a guarantee)",
    ),
    ("R_over_D_b<k>", "float", "-", "", "anon-batched", "batch k: assignments R over the demand lower bound D"),
    (
        "eliminated_before_b<k>",
        "float",
        "fraction",
        "",
        "anon-batched",
        "batch k: (user, arm) pairs eliminated before it",
    ),
    # single-learner private bandits (paper 001)
    ("releases", "int", "releases", "", "dp", "private releases (noisy statistics published)"),
    ("epochs", "int", "epochs", "", "dp", "completed epochs"),
    ("survivors", "int", "arms", "", "dp", "arms left at the horizon"),
    ("events", "int", "events", "", "dp", "Anytime-Lazy-UCB's crossing events"),
    ("stored_values", "int", "values", "", "dp", "values Anytime-Lazy-UCB keeps"),
    ("laplace_draws", "int", "draws", "", "dp", "Laplace noise draws"),
    # distributed DP (paper 004)
    ("batches", "int", "batches", "", "distributed-dp, anon-bai, se/dp-se anonymous", "batches run"),
    ("active_arms", "int", "arms", "", "distributed-dp", "arms left at the horizon"),
    ("best_pulls", "int", "pulls", "", "distributed-dp", "pulls of the best arm"),
    ("bits", "int", "bits", "", "distributed-dp", "largest message size of the secure aggregation"),
    ("wrap_errors", "int", "blocks", "", "distributed-dp", "blocks whose modular sum wrapped around"),
    # best-arm identification (papers 002, 003)
    (
        "samples",
        "int",
        "pulls",
        "",
        "mase, decentralized, anon-bai, se/dp-se anonymous",
        "sample complexity: pulls over all users until the stop (se/dp-se: the samples their learners used)",
    ),
    (
        "rounds",
        "int",
        "rounds",
        "",
        "mase, anon-bai",
        "iterations of the main loop (paper 003's T); anon-bai: rounds until the last user stopped",
    ),
    (
        "surplus",
        "int",
        "samples",
        "",
        "anon-bai, se/dp-se anonymous",
        "informative samples discarded: a decomposition gave a pair more than its learner asked for",
    ),
    (
        "users_stopped",
        "float",
        "fraction",
        "",
        "se/dp-se anonymous, anon-bai",
        "users whose learner stopped exploring (one arm left) before the horizon; anon-bai: before --max-rounds "
        "(the others are censored and scored on their current recommendation)",
    ),
    ("messages", "int", "messages", "", "mase, decentralized", "messages sent (the paper's convention)"),
    (
        "released_aggregates",
        "int",
        "aggregates",
        "",
        "mase, dp-mase, decentralized",
        "aggregates the vote or message board released (one per vote or shared pull on the direct channel; with "
        "--channel anonymous one per tally or per-arm reward sum over at least C agents)",
    ),
    ("recommended", "int", "arm index", "no user holds an arm", "mase, decentralized", "the arm the run recommends"),
    (
        "vote_threshold",
        "int",
        "votes",
        "no vote board (no sharing, full sharing, central, independent)",
        "mase, decentralized",
        "votes M that remove an arm from the shared set",
    ),
    ("truncated", "flag", "-", "", "mase, decentralized", "1 when max_rounds stopped the run"),
    ("stalled", "flag", "-", "", "mase", "1 when every user finished without a single arm left"),
    ("arms", "int", "arms", "", "mase", "number of arms K of the instance"),
    ("local_eliminations", "int", "eliminations", "", "mase (voting)", "arms eliminated locally by users"),
    ("best_eliminated_locally", "int", "eliminations", "", "mase (voting)", "local eliminations of the best arm"),
    ("dropped_votes", "int", "votes", "", "mase (voting)", "votes lost (corruption)"),
    (
        "users_best_arm_found",
        "float",
        "fraction",
        "",
        "independent, mase, dp-mase",
        "finished users whose own answer is the best arm",
    ),
    ("approx_optimal", "flag", "-", "", "decentralized", "1 when the recommended arm is approx-optimal at the stop"),
    ("users_approx_optimal", "float", "fraction", "", "decentralized, anon-bai", "users holding an approx-optimal arm"),
    ("broadcasts", "int", "messages", "", "decentralized", "broadcasts (one per vote or per shared pull)"),
    ("p2p_messages", "int", "messages", "", "decentralized", "point-to-point messages: broadcasts x (users - 1)"),
    (
        "t_consensus",
        "int",
        "steps",
        "never reached, or no vote board",
        "decentralized",
        "global step at which the shared set became one arm",
    ),
    ("suboptimal_pulls", "int", "pulls", "", "decentralized", "pulls of arms that are not the best at their step"),
    ("resets", "int", "resets", "", "decentralized", "DSER4's global resets"),
    ("guard_fired", "int", "times", "", "decentralized", "times the kernel's step guard stopped a player"),
)
METRICS: tuple[Metric, ...] = tuple(
    Metric(name, kind, unit, meaning, empty, families) for name, kind, unit, empty, families, meaning in _ROWS
)

#: The metrics that are never negative whatever the run (a privacy guarantee's epsilon and delta)
NONNEGATIVE = frozenset({"privacy_epsilon", "privacy_epsilon_per_user", "privacy_delta"})

#: Old metric names and their names in this schema (the results of earlier releases used them).
RENAMED: dict[str, str] = {
    "identified": "best_arm_found (distributed-dp)",
    "found_best": "best_arm_found (decentralized)",
    "correct": "best_arm_found (mase); approx_optimal (decentralized)",
    "privacy_epsilon_per_reward": "privacy_epsilon (anonymous)",
    "dp_epsilon": "privacy_epsilon (distributed-dp)",
    "dp_delta": "privacy_delta (distributed-dp)",
    "threshold": "vote_threshold (-1 is now empty)",
    "agents_correct": "users_approx_optimal",
    "agent_accuracy": "users_best_arm_found",
    "votes": "Result.info['votes'] (a list of int; no longer a metric)",
    "instance": "Result.info['instance'] (text; no longer a metric)",
    "methods_used": "Result.info['methods_used'] (text; no longer a metric)",
}

_BY_NAME = {m.name: m for m in METRICS if "<k>" not in m.name}
_PATTERNS = [(re.compile(re.escape(m.name).replace("<k>", r"[1-9]\d*") + "$"), m) for m in METRICS if "<k>" in m.name]


def metric(name: str) -> Metric | None:
    """The schema entry of a metric name.

    Parameters
    ----------
    name : str
        A metric's name as a result reports it; a batch number matches ``<k>`` (``R_over_D_b3`` finds
        ``R_over_D_b<k>``).

    Returns
    -------
    Metric or None
        Its entry of ``METRICS``; ``None`` for an unknown name.

    Raises
    ------
    ConfigError
        If ``name`` is not a str.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
    (the per-batch ratio R/D of its Algorithm 1).

    Examples
    --------
    >>> metric("R_over_D_b3").name, metric("no_such_metric") is None
    ('R_over_D_b<k>', True)
    """
    if not isinstance(name, str):
        raise ConfigError(f"name must be a metric name (a str), got {_shown(name)}")
    found = _BY_NAME.get(name)
    if found is None:
        found = next((m for pattern, m in _PATTERNS if pattern.match(name)), None)
    return found


def _is_real(value: object) -> bool:
    """Whether ``value`` is a real number (a Python or numpy int or float; not text). A function rather than an
    ``isinstance`` in :func:`_value`, so that the value keeps its own type there: ``numbers.Real`` does not tell
    the type checker that ``int()`` and ``float()`` accept it."""
    return isinstance(value, numbers.Real) and not isinstance(value, str)


def _value(m: Metric, name: str, value: Any) -> int | float | None:
    where = f"metrics: metric {name!r}"
    if value is None:
        if not m.empty:
            raise ConfigError(f"{where} is never empty, got None")
        return None
    if isinstance(value, bool | np.bool_):
        if m.kind != "flag":
            raise ConfigError(f"{where} is a {m.kind}, got the bool {_shown(value)}")
        return int(value)
    if not _is_real(value):
        raise ConfigError(f"{where} must be a number, got {_shown(value)} (text belongs in Result.info)")
    if not math.isfinite(value):
        raise ConfigError(f"{where} must be finite, got {_shown(value)} (empty is None, where the schema allows)")
    if name in NONNEGATIVE and value < 0:
        raise ConfigError(
            f"{where} is never negative, got {_shown(value)} (a conversion to (epsilon, delta) reports "
            "the tightest valid epsilon, max(., 0))"
        )
    if m.kind == "float":
        return value.item() if isinstance(value, np.generic) else value
    if float(value) != int(value):
        raise ConfigError(f"{where} is an {m.kind}, got {_shown(value)}")
    if m.kind == "flag" and int(value) not in (0, 1):
        raise ConfigError(f"{where} is a flag (0 or 1), got {_shown(value)}")
    return int(value)


@fill
def check_metrics(metrics: Mapping[str, Any]) -> dict[str, int | float | None]:
    """``metrics`` checked against ``METRICS`` and normalised (numpy scalars and bools to ``int``/``float``).

    Parameters
    ----------
    metrics : Mapping of str to object
        A run's metrics by name.

    Returns
    -------
    dict of str to int, float or None
        The same metrics: ``int`` for the kinds ``int`` and ``flag``, ``float`` for ``float``, ``None`` where
        empty.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For an unknown name, a value of the wrong kind, text, NaN or an infinity, a
        negative privacy epsilon or delta (:data:`NONNEGATIVE`), or an empty value where the schema has no "not
        applicable": each is a bug of the algorithm's adapter, not a user's mistake.

    {{refs_metrics}}

    Examples
    --------
    >>> import numpy as np
    >>> check_metrics({"samples": np.int64(5), "truncated": False, "recommended": None})
    {'samples': 5, 'truncated': 0, 'recommended': None}
    >>> check_metrics({"samples": 2.5})
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: metrics: metric 'samples' is an int, got 2.5
    """
    if not isinstance(metrics, Mapping):
        raise ConfigError(f"metrics must be a mapping of metric names to numbers, got {_shown(metrics)}")
    out: dict[str, int | float | None] = {}
    for name, value in metrics.items():
        m = metric(name)
        if m is None:
            raise ConfigError(
                f"metrics: unknown metric {_shown(name)}: add it to anonbandits.results.METRICS (with its meaning)"
            )
        out[name] = _value(m, name, value)
    return out


@filled_dataclass(frozen=True)
class Result:
    """What one run of any algorithm reports (the one result type of :func:`anonbandits.simulate`).

    Parameters
    ----------
    metrics : Mapping of str to int, float or None
        The run's numbers by name (regret, samples, ...): the columns of the results table. Every name, kind
        and meaning is in :data:`METRICS` (docs/parameters.md), checked when the result is
        built (:func:`check_metrics`, which also turns numpy scalars and bools into
        ``int``/``float``): numbers only, never NaN or infinite, ``None`` only where the schema says "not
        applicable" (an empty cell in a table).
    curve : tuple of numpy.ndarray, optional
        An ``(x, y)`` pair of 1-D arrays, e.g. rounds and cumulative regret (drawn by ``--plot``); default
        ``None``.
    label : str, optional
        The name of the line the curve belongs to (the registry sets the algorithm's name when an algorithm
        gives none); default ``None``.
    records : tuple of Mapping, optional
        One mapping per batch (paper 000's demand, assignments, rounds, eliminations); empty (default) where
        an algorithm reports none.
    info : Mapping of str to object, optional
        What a run reports that the schema cannot say: text (``methods_used``, ``instance``), vectors (MASE's
        per-arm ``votes``, the pulls of each arm of :mod:`anonbandits.dp`'s library functions) and records
        (their release ``ledger``; paper 004's ``blocks`` of ``run_elimination``, an array: cheaper than one
        record per block); default empty.
    curve_axes : tuple of str, optional
        The names of the curve's x and y (the algorithm's ``AlgorithmSpec.curve_axes``); ``None`` (default)
        without a curve.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) For a metric the schema does not know or a value it does not allow (a bug of the
        algorithm's adapter, not a user's mistake), a curve that is not a pair of numeric 1-D arrays of equal
        length, or a field of the wrong type. The curve's arrays are stored as read-only copies.

    {{refs_registered}}

    Examples
    --------
    >>> r = Result({"regret": 12.5, "best_arm_found": True})
    >>> r.metrics, r.curve is None
    ({'regret': 12.5, 'best_arm_found': 1}, True)
    >>> Result({"regret": float("nan")})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: metrics: metric 'regret' must be finite, got nan (empty is None, ...)
    """

    metrics: Mapping[str, Any]
    curve: tuple[np.ndarray, np.ndarray] | None = None
    label: str | None = None
    records: tuple[Mapping[str, Any], ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)
    curve_axes: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.metrics, Mapping):
            raise ConfigError(f"metrics must be a mapping of metric names to numbers, got {_shown(self.metrics)}")
        object.__setattr__(self, "metrics", check_metrics(self.metrics))
        object.__setattr__(self, "curve", _curve(self.curve))
        if self.label is not None and not isinstance(self.label, str):
            raise ConfigError(f"label must be a str or None, got {_shown(self.label)}")
        if not isinstance(self.records, tuple | list) or not all(isinstance(r, Mapping) for r in self.records):
            raise ConfigError(f"records must be a tuple of mappings, got {_shown(self.records)}")
        object.__setattr__(self, "records", tuple(self.records))
        if not isinstance(self.info, Mapping):
            raise ConfigError(f"info must be a mapping, got {_shown(self.info)}")
        axes = self.curve_axes
        if axes is not None and not (
            isinstance(axes, tuple | list) and len(axes) == 2 and all(isinstance(a, str) for a in axes)
        ):
            raise ConfigError(f"curve_axes must be a pair of str or None, got {_shown(axes)}")


def _curve(curve: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """A result's curve as a pair of read-only 1-D arrays of equal length (copies: the caller's stay its own)."""
    if curve is None:
        return None
    if not isinstance(curve, tuple | list) or len(curve) != 2:
        raise ConfigError(f"curve must be a pair (x, y) of 1-D arrays or None, got {_shown(curve)}")
    out = []
    for array in curve:
        if isinstance(array, str | bytes):
            raise ConfigError(f"curve must be a pair (x, y) of 1-D numeric arrays, got {_shown(array)}")
        a = np.array(array)
        if a.ndim != 1 or a.dtype.kind not in "iuf" or len(a) != len(np.asarray(curve[0])):
            raise ConfigError(f"curve must be a pair (x, y) of numeric 1-D arrays of equal length, got {_shown(curve)}")
        a.setflags(write=False)
        out.append(a)
    return out[0], out[1]


@fill
def markdown_table() -> str:
    """The schema as the Markdown tables of docs/parameters.md.

    Returns
    -------
    str
        The table of ``METRICS`` (one row per metric), then the table of the old names in ``RENAMED``.

    {{refs_metrics}}

    Examples
    --------
    >>> markdown_table().splitlines()[0]
    '| metric | kind | unit | meaning | empty when | reported by |'
    """
    lines = ["| metric | kind | unit | meaning | empty when | reported by |", "| --- | --- | --- | --- | --- | --- |"]
    for m in METRICS:
        lines.append(f"| `{m.name}` | {m.kind} | {m.unit} | {m.meaning} | {m.empty or '-'} | {m.families} |")
    lines += ["", "| old metric name | now |", "| --- | --- |"]
    lines += [f"| `{old}` | {new} |" for old, new in RENAMED.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
