"""What the two multi-agent papers share: the agent-activity distribution, the vote threshold, the message log.

Paper 002 (Féraud, Alami and Laroche, *Decentralized Exploration in Multi-Armed Bandits*, ICML 2019) and paper
003 (Rio, Barlier, Colin and Soare, *Multi-Agent Best Arm Identification with Private Communications*, ICML
2023) both let agents vote against the arms they eliminate locally; an arm leaves the shared set at its M-th
vote (:func:`anonbandits.core.votes.vote_threshold`, re-exported here). Both draw the active agent i.i.d. from a
fixed distribution over the N agents, uniform or skewed, with different skewed distributions
(:func:`activity_probabilities`).

:class:`MessageLog` holds the messages an algorithm sends, as columns so that privacy can be checked after a
run: algorithms append one block of messages per epoch (vectorised over agents), never one Python object per
message, so a run with millions of messages stays cheap. ``content`` holds one number per message; what it
means (an arm index, a vote, a noisy count) is the algorithm's to document, with ``kind`` telling apart
message types of one algorithm.

:data:`CHANNEL_PARAMS` are the ``--channel`` and ``--C`` of the four schemes that take a k-anonymous board
(MASE, DP-MASE, Decentralized Elimination, full sharing); the board's rule is
:mod:`anonbandits.core.votes`'s, and :func:`board_size` turns the two into the C the board uses: the channel's
(:data:`anonbandits.channels.CHANNELS`) smallest released aggregate, 1 on the direct channel.
"""

from dataclasses import dataclass, field

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels import CHANNELS, channel_named
from anonbandits.core.limits import MAX_INSTANCE_CELLS, check_size
from anonbandits.core.votes import VOTE_ROUNDINGS, vote_threshold  # noqa: F401 (re-exported: both papers)
from anonbandits.errors import ConfigError, require
from anonbandits.spec import Param
from anonbandits.validation import validated

ACTIVITIES = ("uniform", "skewed")
SKEWS = ("power", "halves")
SKEWED_SHARE = 0.8  # paper 002, Problem 2: the first half of the players generates this share of the events
#: ``--channel`` and ``--C`` of the schemes with a k-anonymous board (C is read with ``--channel anonymous`` only)
CHANNEL_PARAMS = (
    Param(
        "channel",
        str,
        "direct",
        "how votes and messages reach the board: direct (each at once) or anonymous "
        "(aggregates over at least C agents)",
        choices=tuple(CHANNELS),
    ),
    Param("C", int, 3, "anonymity parameter: every observed group has at least C users", unit="users"),
)


def board_size(channel: str, C: int) -> int:
    """The smallest group the board releases, the channel's
    :meth:`~anonbandits.channels.FeedbackChannel.min_group`: 1 on the direct channel (every vote or message at
    once), C on the anonymous one; :class:`ConfigError` for an unknown channel or (where it counts) a C below 1.

    >>> board_size("direct", 0), board_size("anonymous", 3)
    (1, 3)
    """
    return channel_named(channel).min_group(C)


@fill
def _activity_probabilities(
    agents: int, activity: str | np.ndarray = "uniform", *, skew: str = "power", gamma: float = 0.8, offset: float = 0.0
) -> np.ndarray:
    """The activity distribution as a probability vector over ``agents`` agents.

    Parameters
    ----------
    agents : int
        Number of agents N (at least 1).
    activity : str or numpy.ndarray, optional
        ``"uniform"`` (default), ``"skewed"`` or a positive probability vector of length N.
    skew : str, optional
        Which paper's skewed distribution ``"skewed"`` means: ``"power"`` (default), paper 003's App. C.4,
        ``P(n) ∝ (n + offset)^(-gamma)`` for agents n = 1..N; or ``"halves"``, paper 002's Problem 2, the first
        half of the players generating 80% of the events, uniformly within each half (N even).
    gamma : float, optional
        Exponent of the power law (default 0.8; ``skew="power"`` only), positive.
    offset : float, optional
        Offset of the power law (default 0; ``skew="power"`` only), non-negative.

    Returns
    -------
    numpy.ndarray
        Probabilities of agents 0..N-1, summing to one.

    Raises
    ------
    ConfigError
        If ``agents`` is below 1 (or above ``MAX_INSTANCE_CELLS``, 10^8, without an enclosing
        :func:`~anonbandits.core.limits.allowing_large`), ``activity`` or ``skew`` is unknown, a given vector is
        not a positive probability vector over the N agents, N is odd with ``skew="halves"``, or ``gamma`` or
        ``offset`` is out of range.

    {{refs_paper003_paper002}}

    Examples
    --------
    >>> activity_probabilities(4, "skewed", skew="halves").round(12).tolist()
    [0.4, 0.4, 0.1, 0.1]
    >>> bool(np.isclose(activity_probabilities(3, "skewed", gamma=1.0)[0], 6 / 11))
    True
    """
    require(agents >= 1, "agents", "at least 1", agents)
    check_size("agents", agents, MAX_INSTANCE_CELLS, "MAX_INSTANCE_CELLS", "agents of one activity distribution")
    if not isinstance(activity, str):
        p = np.asarray(activity, dtype=float)
        if p.shape != (agents,) or np.any(p <= 0) or not np.isclose(p.sum(), 1.0):
            raise ConfigError(
                f"activity must be a positive probability vector over the {agents} agents (every agent is active)"
            )
        return p / p.sum()
    if activity == "uniform":
        return np.full(agents, 1.0 / agents)
    require(activity == "skewed", "activity", f"one of {', '.join(ACTIVITIES)}", activity)
    if skew == "halves":
        require(agents % 2 == 0, "agents", "even for activity 'skewed' (two groups of N/2)", agents)
        half = agents // 2
        return np.concatenate([np.full(half, SKEWED_SHARE / half), np.full(half, (1 - SKEWED_SHARE) / half)])
    require(skew == "power", "skew", f"one of {', '.join(SKEWS)}", skew)
    if not gamma > 0 or not offset >= 0:
        raise ConfigError(f"skewed activity needs gamma > 0 and activity_offset >= 0, got {gamma}, {offset}")
    weights = (np.arange(1, agents + 1) + offset) ** (-gamma)
    return weights / weights.sum()


# the library function, checking its arguments by the registry's rules (anonbandits.validation.validated; agents
# by the rule of users); the registry entries and the drivers call the unchecked body, their values checked already
activity_probabilities = validated(_activity_probabilities, agents="users")


@dataclass
class MessageLog:
    """Columns ``sender``, ``time``, ``kind``, ``content``, each a 1-D array of one entry per message.

    ``record=False`` keeps only the count (for large benchmark runs).
    """

    record: bool = True
    count: int = 0
    _blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def add(self, sender, time, content, kind: int | np.ndarray = 0) -> None:
        """Append messages; the arguments broadcast against each other."""
        sender, time, content, kind = np.broadcast_arrays(sender, time, content, kind)
        self.count += sender.size
        if self.record and sender.size:
            s, t, k, c = (x.ravel().copy() for x in (sender, time, kind, content))
            self._blocks.append((s, t, k, c))

    def _column(self, k: int) -> np.ndarray:
        if not self.record:
            raise ValueError("this log was created with record=False and kept only the count")
        return np.concatenate([b[k] for b in self._blocks]) if self._blocks else np.empty(0)

    sender = property(lambda self: self._column(0), doc="The agent who sent each message.")
    time = property(lambda self: self._column(1), doc="The round (or step) of each message.")
    kind = property(lambda self: self._column(2), doc="The message type, the algorithm's to define.")
    content = property(lambda self: self._column(3), doc="The number each message carries.")

    def of_sender(self, agent: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(time, kind, content) of every message ``agent`` sent: what an observer of that agent sees."""
        mask = self.sender == agent
        return self.time[mask], self.kind[mask], self.content[mask]
