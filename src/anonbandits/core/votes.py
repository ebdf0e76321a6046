"""The multi-agent vote board: agents vote against the arms they eliminate locally, and an arm leaves the
shared set at its M-th vote, ``M = ceil(log(delta) / log(local failure probability))``, which makes
``local_failure^M <= delta``: paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed
Bandits", ICML 2019) and paper 003 (Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private
Communications", ICML 2023, Algorithms 1-3; the threshold counts votes "at least M", as the proof of its
Proposition 5.2 does).

The k-anonymous board, whose *release size* is C (what MASE, DP-MASE, Decentralized Elimination and full sharing
post to with ``--channel anonymous``; with ``--channel direct`` their board's release size is 1, every contribution
released at once; the feedback channel sets it, :meth:`~anonbandits.channels.FeedbackChannel.min_group`):
agents post their contributions (votes, or for full sharing rewards) to *slots* (an arm); the board publishes a
slot's aggregate (the number of votes, or the sum of rewards) only once at least C distinct agents have
contributed to it since the slot's last release, and then releases every contribution buffered since, at once.
Contributions wait in the buffer until then; an aggregate still short of C agents when the run ends is never
released. Nobody, the agents included, sees anything else of the board: a decision (a global elimination, a
shared learner's test) reads released aggregates only. :func:`board_releases` is this rule on a time-ordered
stream of contributions, :func:`first_release` its joint form (a release of every slot at once, full sharing)
and :func:`anonymous_threshold` its effect on a vote board: since an agent votes against an arm at most once,
the buffer of an arm holds as many distinct agents as votes, so it is released at every C-th vote and the
released tally first reaches the threshold M at vote ``C ceil(M/C)``.
"""

import math
import warnings
from typing import Any

import numpy as np

from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.core._rules import INDICES, MASK
from anonbandits.core.indices import vote_ratio
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import (
    COUNTS,
    NONNEGATIVE_COUNT,
    OPEN_UNIT,
    RULES,
    SUMS,
    Rule,
    array_of,
    checks,
    one_of,
    optional,
)

VOTE_ROUNDINGS = ("ceil", "floor")


def _votes(value: Any) -> bool:
    if isinstance(value, str | bytes | dict | bool | np.bool_) or value is None:
        return False
    a = np.asarray(value)
    return a.ndim in (1, 2) and (a.dtype.kind == "b" or (a.dtype.kind in "iu" and bool(np.all((a == 0) | (a == 1)))))


#: votes cast, one row per event (a 1-D array: one event): bools, or integers 0 and 1
_CAST = Rule(_votes, "a 2-D array of bools (or of 0 and 1), one row per event, or a 1-D one of a single event")
#: agent ids in time order: one stream, or one stream per column (slot)
_AGENT_IDS = {ndim: array_of("iu", "", ndim=ndim, low=0) for ndim in (1, 2)}
_AGENTS = Rule(
    lambda v: np.ndim(v) in _AGENT_IDS and _AGENT_IDS[np.ndim(v)].test(v),
    "a 1-D or 2-D array of non-negative integer agent ids",
)


def __getattr__(name: str) -> Any:
    """``CHANNELS``, the tuple of feedback channel names this module held: for one release, with a warning (the
    board knows only its release size C, which the feedback channel's
    :meth:`~anonbandits.channels.FeedbackChannel.min_group` gives)."""
    if name != "CHANNELS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from anonbandits.channels import CHANNELS

    warnings.warn(
        f"{__name__}.CHANNELS is deprecated, the channels are the table anonbandits.channels.CHANNELS "
        "(the old name goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    return tuple(CHANNELS)


def _release_size(C: Any) -> int:
    """``C`` checked: a board releases aggregates of at least C >= 1 agents (0, -1, 2.5 or True would release
    single agents' votes under a k-anonymous label)."""
    RULES["C"].check("C", C)
    return int(C)


@checks(delta=OPEN_UNIT, local_failure=OPEN_UNIT, rounding=one_of(*VOTE_ROUNDINGS))
@fill
def vote_threshold(delta: float, local_failure: float, rounding: str = "ceil") -> int:
    """``M = ceil(log(delta) / log(local_failure))`` votes remove an arm, so that ``local_failure^M <= delta``.

    ``rounding="floor"`` gives paper 002's printed 28 for delta = 0.05 and eta = 0.9 (its Section 5.2). The 1e-9
    keeps a ratio that is an integer up to rounding error at that integer. The callers check M against their
    own limits (M >= 2 in paper 002, M <= N in paper 003).

    Parameters
    ----------
    {{vote_failures}}
    rounding : str, optional
        ``"ceil"`` (the default) or ``"floor"``.

    Returns
    -------
    int
        M, the votes that remove an arm.

    Raises
    ------
    ConfigError
        If ``delta`` or ``local_failure`` is not a number in (0, 1), or ``rounding`` is not one of
        :data:`VOTE_ROUNDINGS` (``"ceil"``, ``"floor"``).

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> vote_threshold(0.05, 0.9), vote_threshold(0.05, 0.9, "floor"), vote_threshold(0.25, 0.5)
    (29, 28, 2)
    """
    # trusted callers (the decentralized runs) skip the checks above: their vote_rounding is checked here
    require(rounding in VOTE_ROUNDINGS, "vote_rounding", f"one of {', '.join(VOTE_ROUNDINGS)}", rounding)
    ratio = vote_ratio(delta, local_failure)
    return math.ceil(ratio - 1e-9) if rounding == "ceil" else math.floor(ratio + 1e-9)


@checks(votes_before=COUNTS, cast=_CAST, threshold=NONNEGATIVE_COUNT, alive=MASK)
@fill
def removal_steps(votes_before: np.ndarray, cast: np.ndarray, threshold: int, alive: np.ndarray) -> np.ndarray:
    """For each arm, the row of ``cast`` whose vote brings it to ``threshold`` votes (``len(cast)`` if none).

    Parameters
    ----------
    votes_before : numpy.ndarray
        (K,) votes each arm held before this batch.
    cast : numpy.ndarray
        (n, K) bool (or 0 and 1), row i the votes of the i-th event in time order; a (K,) array is one event.
    threshold : int
        M, the votes that remove an arm.
    alive : numpy.ndarray
        (K,) bool, the arms still in the shared set (others are never removed again).

    Returns
    -------
    numpy.ndarray
        (K,) int: the index of the removing event of each arm, ``len(cast)`` for the arms not removed.

    Raises
    ------
    ConfigError
        If ``votes_before`` is not a 1-D array of non-negative integers, ``cast`` not a 2-D (or 1-D) array of
        bools or of 0 and 1, ``alive`` not a 1-D bool array, ``threshold`` not an integer >= 0, or the three
        arrays disagree on K.

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> cast = np.array([[True, True, False], [True, False, True]])
    >>> removal_steps(np.array([0, 1, 0]), cast, 2, np.ones(3, bool)).tolist()
    [1, 0, 2]
    """
    cast = np.asarray(cast)
    if cast.ndim == 1:  # one event (cumsum along a 1-D array would add up the arms instead)
        cast = cast[None, :]
    # one column of cast per arm: another K would broadcast into a tally of other arms
    if not np.shape(votes_before) == np.shape(alive) == cast.shape[1:]:
        raise ConfigError(
            f"votes_before, cast and alive must agree on the arms K, got shapes {np.shape(votes_before)}, "
            f"{np.shape(cast)} and {np.shape(alive)}"
        )
    tally = votes_before + np.cumsum(cast, axis=0)
    crossing = cast & (tally >= threshold) & alive[None, :]
    return np.where(crossing.any(axis=0), crossing.argmax(axis=0), cast.shape[0])


@checks(threshold=NONNEGATIVE_COUNT, C=RULES["C"])
@fill
def anonymous_threshold(threshold: int, C: int) -> int:
    """The vote on an arm at which a k-anonymous board's released tally first reaches ``threshold`` M.

    Every agent votes against an arm at most once, so the buffer of an arm holds as many distinct agents as
    votes: the board releases C votes at every C-th vote, and the released tally ``C floor(v/C)`` after v votes
    first reaches M at ``v = C ceil(M/C)``. With C = 1 this is M (a board of release size 1); with C > M the arm needs C
    votes; with more than the N agents it never leaves the shared set (no aggregate is ever released about it).

    Parameters
    ----------
    threshold : int
        M, the votes that remove an arm, at least 1 (0: none, a board without threshold).
    C : int
        The anonymity parameter: every released aggregate combines at least C agents, at least 1.

    Returns
    -------
    int
        ``C ceil(M/C)``.

    Raises
    ------
    ConfigError
        If ``C`` is not an integer >= 1 (a bool, 2.5 or NaN included): a smaller release would carry single
        agents' values under a k-anonymous label; or if ``threshold`` is not an integer from 0 to 2^62.

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> anonymous_threshold(5, 1), anonymous_threshold(5, 3), anonymous_threshold(29, 10), anonymous_threshold(5, 60)
    (5, 6, 30, 60)
    """
    C = _release_size(C)
    return C * -(-threshold // C)


@filled_dataclass(frozen=True)
class Releases:
    """The aggregates a k-anonymous board released, one entry per release, and where each contribution went.

    Parameters
    ----------
    slot : numpy.ndarray
        (R,) int, the slot (arm) of each released aggregate.
    time : numpy.ndarray
        (R,) int, when it was released: the time of the contribution that completed it.
    size : numpy.ndarray
        (R,) int, the distinct agents it combines (at least C).
    total : numpy.ndarray
        (R,) float, the aggregate: the sum of its contributions' values (votes count 1 each).
    group : numpy.ndarray
        (n,) int, for each contribution (in the stream's order), the index of the release holding it, -1 for a
        contribution never released.

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> rel = board_releases(np.array([0, 0, 1, 1, 2, 2]), np.zeros(6, int), np.arange(6), 2)
    >>> rel.size.tolist(), rel.total.tolist(), rel.group.tolist(), rel.metrics()
    ([2, 2], [3.0, 2.0], [0, 0, 0, 1, 1, -1], {'min_group_size': 2, 'released_aggregates': 2})
    """

    slot: np.ndarray
    time: np.ndarray
    size: np.ndarray
    total: np.ndarray
    group: np.ndarray

    def metrics(self) -> dict[str, int | None]:
        """``min_group_size`` (the smallest aggregate released; ``None`` if none was) and
        ``released_aggregates``.

        Returns
        -------
        dict of str to int or None
            The two metrics of :mod:`anonbandits.results`.

        Examples
        --------
        >>> import numpy as np
        >>> board_releases(np.array([0, 1]), np.zeros(2, int), np.arange(2), 3).metrics()
        {'min_group_size': None, 'released_aggregates': 0}
        """
        return {
            "min_group_size": int(self.size.min()) if self.size.size else None,
            "released_aggregates": int(self.size.size),
        }


@checks(agents=_AGENTS)
def running_distinct(agents: np.ndarray) -> np.ndarray:
    """Along axis 0 of ``agents`` (a stream, or one stream per column), the distinct agents seen so far.

    Parameters
    ----------
    agents : numpy.ndarray
        (n,) or (n, s) int agent ids in time order.

    Returns
    -------
    numpy.ndarray
        int, of the shape of ``agents``: entry ``[i, j]`` counts the distinct agents of ``agents[:i + 1, j]``.

    Raises
    ------
    ConfigError
        If ``agents`` is not a 1-D or 2-D array of non-negative integers.

    References
    ----------
    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023.

    Examples
    --------
    >>> import numpy as np
    >>> running_distinct(np.array([4, 4, 7, 4, 1])).tolist()
    [1, 1, 2, 2, 3]
    """
    agents = np.asarray(agents)
    cols = agents if agents.ndim == 2 else agents[:, None]  # (reshape cannot infer a column of no rows)
    first = np.zeros(cols.shape, np.int64)
    for j in range(cols.shape[1]):  # a handful of slots (arms)
        first[np.unique(cols[:, j], return_index=True)[1], j] = 1
    return np.cumsum(first, axis=0).reshape(agents.shape)


@checks(agents=array_of("iu", "a 2-D array of non-negative integer agent ids", ndim=2, low=0), C=RULES["C"])
@fill
def first_release(agents: np.ndarray, C: int) -> int:
    """The first row of ``agents`` at which every column holds at least C distinct agents (-1 if none).

    The joint release of a k-anonymous board whose slots (the columns: an arm each) are released together:
    full sharing's per-arm reward sums, over whole rounds of the shared learner.

    Parameters
    ----------
    agents : numpy.ndarray
        (n, s) int, the agent of each contribution, row by row in time order since the last release.
    C : int
        The anonymity parameter, at least 1.

    Returns
    -------
    int
        The row completing the release, or -1.

    Raises
    ------
    ConfigError
        If ``C`` is not an integer >= 1 (a bool, 2.5 or NaN included): a smaller release would carry single
        agents' values under a k-anonymous label; or if ``agents`` is not a 2-D array of non-negative integers.

    {{refs_paper002}}

    Examples
    --------
    >>> import numpy as np
    >>> first_release(np.array([[0, 1], [0, 2], [1, 2]]), 2), first_release(np.array([[0, 1]]), 2)
    (2, -1)
    """
    C, agents = _release_size(C), np.asarray(agents)
    enough = np.flatnonzero((running_distinct(agents) >= C).all(axis=1)) if agents.size else np.empty(0, int)
    return int(enough[0]) if enough.size else -1


@checks(agents=INDICES, slots=INDICES, times=INDICES, C=RULES["C"], values=optional(SUMS))
@fill
def board_releases(
    agents: np.ndarray, slots: np.ndarray, times: np.ndarray, C: int, values: np.ndarray | None = None
) -> Releases:
    """The k-anonymous board on a time-ordered stream of contributions: what it releases, and when.

    Each slot's contributions are buffered until at least C distinct agents have contributed since the slot's
    last release; the aggregate of the buffer (its contributions' ``values`` summed) is then released at the
    time of the contribution that completed it. A buffer short of C agents at the end is never released.

    Parameters
    ----------
    agents : numpy.ndarray
        (n,) int, the agent of each contribution, in time order.
    slots : numpy.ndarray
        (n,) int, the slot (arm) each contribution goes to.
    times : numpy.ndarray
        (n,) int, the time of each contribution (non-decreasing).
    C : int
        The anonymity parameter, at least 1.
    values : numpy.ndarray or None, optional
        (n,) float, what each contribution adds to its aggregate (default: 1, a vote).

    Returns
    -------
    Releases
        The released aggregates in time order (by slot within a time), and each contribution's release.

    Raises
    ------
    ConfigError
        If ``C`` is not an integer >= 1 (a bool, 2.5 or NaN included): a smaller release would carry single
        agents' values under a k-anonymous label; or if ``agents``, ``slots`` or ``times`` is not a 1-D array of
        non-negative integers, ``values`` not ``None`` or a 1-D array of finite numbers, the arrays differ in
        length, or ``times`` decreases.

    {{refs_paper002_paper003}}

    Examples
    --------
    >>> import numpy as np
    >>> rel = board_releases(np.array([0, 1, 2, 3, 4]), np.array([0, 1, 0, 0, 1]), np.arange(5), 2)
    >>> rel.slot.tolist(), rel.time.tolist(), rel.total.tolist(), rel.group.tolist()
    ([0, 1], [2, 4], [2.0, 2.0], [0, 1, 0, -1, 1])
    """
    C = _release_size(C)
    agents, slots, times = np.asarray(agents), np.asarray(slots), np.asarray(times)
    values = np.ones(agents.size) if values is None else np.asarray(values, float)
    # one slot, time and value per contribution, in time order: the releases follow the stream's order
    if not agents.shape == slots.shape == times.shape == values.shape:
        raise ConfigError(
            f"agents, slots, times and values must have one entry per contribution, got lengths {agents.size}, "
            f"{slots.size}, {times.size} and {values.size}"
        )
    if np.any(np.diff(times) < 0):
        raise ConfigError(f"times must be non-decreasing (the stream in time order), got {_shown(times)}")
    group, found = np.full(agents.size, -1, np.int64), []
    for s in np.unique(slots):
        idx = np.flatnonzero(slots == s)
        start = 0
        while start < idx.size:  # one release per pass
            end = int(np.searchsorted(running_distinct(agents[idx[start:]]), C)) + start
            if end >= idx.size:
                break
            part = idx[start : end + 1]
            found.append((times[idx[end]], s, np.unique(agents[part]).size, values[part].sum(), part))
            start = end + 1
    found.sort(key=lambda r: (r[0], r[1]))
    for j, (*_, part) in enumerate(found):
        group[part] = j
    cols = [
        np.array([r[i] for r in found], dtype) for i, dtype in ((1, np.int64), (0, np.int64), (2, np.int64), (3, float))
    ]
    return Releases(cols[0], cols[1], cols[2], cols[3], group)
