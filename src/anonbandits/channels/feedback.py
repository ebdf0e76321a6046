"""What every feedback channel of the multi-user drivers is: :class:`FeedbackChannel`, the protocol a driver
talks to, and what it is built from and answers with.

A driver of N batched learners (:func:`~anonbandits.anonymous.identify`,
:func:`~anonbandits.anonymous.batched_regret`) is given a channel *factory* (a class with :meth:`open`, as
networkx's ``maximum_flow`` is given its ``flow_func``), opens it on the run's instance, horizon and options
(:class:`ChannelOptions`), and then only hands it each batch's demand (:meth:`FeedbackChannel.serve_batch`): the
channel plays the batch, charges its rounds and their pseudo-regret on its own clock, and answers with the reward
sums, the sample counts and the variance proxy of one sample (:class:`Served`). Everything that differs between
channels (how rewards are grouped, what a sample's variance proxy is, how many rounds a batch takes, the smallest
group released) is an attribute or a method of the channel; no driver asks which channel it holds.

The channels are :class:`~anonbandits.channels.DirectFeedback` (exact sums, no anonymity) and
:class:`~anonbandits.channels.AnonymousChannel` (Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for
Multi-User Systems*, NeurIPS 2022, Section 3.1); the one table naming them for the command line is
:data:`anonbandits.channels.CHANNELS`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, Self

import numpy as np

from anonbandits.core.regret import RegretTrace
from anonbandits.errors import ConfigError, _shown
from anonbandits.validation import (
    BOOL,
    COUNT,
    COUNT_MATRIX,
    COUNTS,
    INSTANCE,
    MATRIX,
    NONNEGATIVE_COUNT,
    OPEN_UNIT,
    POSITIVE_FINITE,
    RNG,
    RULES,
    SUMS,
    Rule,
    array_of,
    checks,
    int_between,
    optional,
)
from anonbandits.validation import MAX_HORIZON as _MAX_HORIZON

if TYPE_CHECKING:
    from anonbandits.core.learners import BatchLearner
    from anonbandits.envs.instances import MultiUserInstance
    from anonbandits.privacy.mechanisms import Mechanism
    from anondecomp import DemandGraph


@dataclass(frozen=True)
class ChannelOptions:
    """How a driver configures the channel it opens; a channel ignores what does not concern it.

    Parameters
    ----------
    C : int, optional
        The anonymity parameter: the smallest group a grouping channel releases. Default 1.
    decomposer : str, optional
        The ``anondecomp`` method decomposing a batch's demand (channels that need a decomposition). Default
        ``"auto"``.
    decomposer_rng : numpy.random.Generator or None, optional
        Randomness of randomized decomposers (default: the run's ``rng``).
    mechanism : Mechanism or None, optional
        A privacy mechanism of :mod:`anonbandits.privacy.mechanisms` on every released group sum; a channel that
        releases no group refuses it. Default ``None``.
    noise_rng : numpy.random.Generator or None, optional
        The source of the mechanism's noise (default: the run's ``rng``).
    batch_graph : callable or None, optional
        ``batch_graph(demand, batch) -> anondecomp.DemandGraph``: the graph a batch decomposes (Algorithm 1's
        batched graph); default: every user on its supports.
    use_surplus : bool, optional
        The learners take every estimate, those beyond a pair's demand too (Algorithm 1). Default False.
    best_effort : bool, optional
        Serve what a decomposition can cover instead of refusing the batch. Default False.
    max_elicited : int or None, optional
        A bound on the distinct user-assignments one batch may elicit (identification's memory bound). Default
        none.
    allow_large : bool, optional
        Confirm sizes past the documented limits of :mod:`anonbandits.core.limits` (the anonymous channel's
        (2C+2) x N user-rounds of one elicitation). Default False: refused in one line.
    absence : float, optional
        The probability in [0, 1) that a user misses a block (one assignment, its 2C+2 rounds), drawn once per
        user and block: an absent user gets no reward, is in no sum and adds no regret (a grouping channel
        decomposes its batches with groups robust to it and re-plans what absent users left short; a channel
        without blocks refuses it when above 0). Default 0: every user is always there.
    confidence : float or None, optional
        Q in (0, 1): a robust group keeps C+1 present users with probability at least Q
        (``anondecomp.decompose(confidence=...)``); ``None`` (default) is the solver's 0.95. Read only with an
        ``absence`` above 0, and refused without one (it would have no effect).
    max_exposure : int or None, optional
        S >= 0: each decomposed batch exposes no user (puts it in a released group) in more than S blocks beyond
        its demand (``anondecomp.decompose(max_surplus_exposure=S)``, re-seated); a batch no such decomposition is
        found for stops the run in one line. ``None`` (default): the decomposer's own seating. Not with an
        ``absence`` above 0.

    Raises
    ------
    ConfigError
        For a field of another type or out of range: ``C`` not an integer from 1 to 2^62, ``decomposer`` not
        a str (the anonymous channel checks it is a method when it opens), a generator that is not a
        ``numpy.random.Generator``, ``mechanism`` not ``None`` or a mechanism of
        :mod:`anonbandits.privacy.mechanisms`, ``batch_graph`` not ``None`` or callable, a switch not True or
        False, ``max_elicited`` not ``None`` or a positive integer, ``absence`` not a probability in [0, 1),
        ``confidence`` not ``None`` or in (0, 1), a ``confidence`` without an ``absence``, ``max_exposure`` not
        ``None`` or an integer >= 0, or a ``max_exposure`` with an ``absence``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> ChannelOptions(C=3).decomposer
    'auto'
    >>> ChannelOptions(C=0)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: C must be an integer from 1 to 4611686018427387904, got 0
    >>> ChannelOptions(C=3, absence=0.1).confidence is None  # the solver's Q = 0.95
    True
    >>> ChannelOptions(C=3, confidence=0.9)
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: confidence must be None without absence (it sizes groups for absent users), got 0.9
    """

    C: int = 1
    decomposer: str = "auto"
    decomposer_rng: np.random.Generator | None = None
    mechanism: Mechanism | None = None
    noise_rng: np.random.Generator | None = None
    batch_graph: Callable[[np.ndarray, int], DemandGraph] | None = None
    use_surplus: bool = False
    best_effort: bool = False
    max_elicited: int | None = None
    allow_large: bool = False
    absence: float = 0.0
    confidence: float | None = None
    max_exposure: int | None = None

    def __post_init__(self) -> None:
        # built once per run: every field checked here, so a channel opened with these options trusts them
        for name, rule in _OPTION_RULES.items():
            rule.check(name, getattr(self, name))
        if self.confidence is not None and self.absence == 0:  # a parameter without effect is refused
            raise ConfigError(
                "confidence must be None without absence (it sizes groups for absent users), "
                f"got {_shown(self.confidence)}"
            )
        if self.max_exposure is not None and self.absence > 0:
            raise ConfigError(
                f"max_exposure must be None with an absence above 0 (robust groups keep their spare members), "
                f"got {_shown(self.max_exposure)}"
            )


def _is_mechanism(value: Any) -> bool:
    from anonbandits.privacy.mechanisms import Mechanism  # the privacy layer, loaded when a mechanism is given

    return isinstance(value, Mechanism)


#: a privacy mechanism on released group sums, or none
MECHANISM = Rule(
    lambda v: v is None or _is_mechanism(v),
    "None or a privacy mechanism of anonbandits.privacy.mechanisms (CentralLaplace, Distributed)",
)
_OPTION_RULES: dict[str, Rule] = {
    "C": COUNT,
    "decomposer": Rule(lambda v: isinstance(v, str), "the name of an anondecomp method"),
    "decomposer_rng": optional(RNG),
    "mechanism": MECHANISM,
    "noise_rng": optional(RNG),
    "batch_graph": Rule(lambda v: v is None or callable(v), "None or a callable batch_graph(demand, batch)"),
    "use_surplus": BOOL,
    "best_effort": BOOL,
    "max_elicited": optional(COUNT),
    "allow_large": BOOL,
    "absence": RULES["absence"],
    "confidence": optional(OPEN_UNIT),
    "max_exposure": optional(RULES["max_exposure"]),
}
#: the options a channel opens with
OPTIONS = Rule(lambda v: isinstance(v, ChannelOptions), "a ChannelOptions (anonbandits.channels.ChannelOptions)")


class _Served(NamedTuple):
    sums: np.ndarray | None
    counts: np.ndarray
    sigma2: float
    rounds: int
    size: int
    assignments: int
    distinct: int
    method: str
    uncovered: int
    surplus: int


class Served(_Served):
    """What a channel answers for one batch's demand (:meth:`FeedbackChannel.serve_batch`).

    Parameters
    ----------
    sums : numpy.ndarray or None
        (N, K) the sums of the samples each learner gets; ``None`` when the horizon cut the batch (its rounds
        were played and charged, but it gives no update).
    counts : numpy.ndarray
        (N, K) int64, the number of samples in each sum (the demand, or with ``use_surplus`` every estimate).
    sigma2 : float
        The variance proxy of one sample of this batch, for the learners' update.
    rounds : int
        The rounds the batch was charged.
    size : int
        The batch's demand as the records report it (a decomposed batch: its graph's demand D; otherwise the
        most samples one user takes).
    assignments : int
        Assignments R run (0 when nothing was decomposed).
    distinct : int
        How many of them differ.
    method : str
        How the batch was served (the decomposition method, or the channel's name).
    uncovered : int
        (user, arm) pairs a best-effort decomposition left uncovered.
    surplus : int
        Samples served beyond a pair's demand and discarded (0 for a channel that discards nothing).

    Raises
    ------
    ConfigError
        However built (``Served(...)``, ``_make``, ``_replace``): for ``sums`` not ``None`` or a 2-D array of
        finite numbers of the shape of ``counts``, ``counts`` not a 2-D array of non-negative integers,
        ``sigma2`` not a finite positive number, a count (``rounds`` to ``uncovered``, ``surplus``) not an
        integer from 0 to 2^62, or ``method`` not a non-empty str.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> served = Served(np.ones((1, 2)), np.ones((1, 2), np.int64), 0.25, 1, 1, 0, 0, "direct", 0, 0)
    >>> served.sigma2, served.method
    (0.25, 'direct')
    >>> served._replace(sigma2=float("nan"))
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: sigma2 must be a finite positive number, got nan
    """

    __slots__ = ()

    @checks(
        sums=optional(MATRIX),
        counts=COUNT_MATRIX,
        sigma2=POSITIVE_FINITE,
        rounds=NONNEGATIVE_COUNT,
        size=NONNEGATIVE_COUNT,
        assignments=NONNEGATIVE_COUNT,
        distinct=NONNEGATIVE_COUNT,
        method=Rule(lambda v: isinstance(v, str) and v != "", "a non-empty str"),
        uncovered=NONNEGATIVE_COUNT,
        surplus=NONNEGATIVE_COUNT,
    )
    def __new__(
        cls,
        sums: np.ndarray | None,
        counts: np.ndarray,
        sigma2: float,
        rounds: int,
        size: int,
        assignments: int,
        distinct: int,
        method: str,
        uncovered: int,
        surplus: int,
    ) -> Served:
        # the one relation of the fields: each sum has its count (the rules above are skipped inside the channels)
        if sums is not None and np.shape(sums) != np.shape(counts):
            raise ConfigError(f"sums must be None or of the shape of counts {np.shape(counts)}, got {_shown(sums)}")
        return super().__new__(
            cls, sums, counts, sigma2, rounds, size, assignments, distinct, method, uncovered, surplus
        )

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Self:  # type: ignore[override]  # checked, however built
        return cls(*iterable)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**self._asdict(), **changes})


class FeedbackChannel(Protocol):
    """A channel between N users' batched learners and their rewards: a batch's demand in, sums, counts, the
    variance proxy and the rounds charged out.

    A protocol: any class with these members is a channel (:class:`~anonbandits.channels.DirectFeedback`,
    :class:`~anonbandits.channels.AnonymousChannel`); a driver is given the class and opens it.

    The learner's view: a channel exposes its clock and its audited feedback only. The simulator's books (the
    means, the pseudo-regret charged) live in its private ``_ledger``, a :class:`ChannelLedger` that only the
    drivers' result-building code reads (:class:`RoundBooks` provides both); ``regret`` and ``regret_curve``,
    read on the channel before, give NaN with a ``DeprecationWarning`` for one release.

    Parameters
    ----------
    *args : object
        None accepted: a protocol is not instantiated (``typing.Protocol`` raises ``TypeError``).
    **kwargs : object
        None accepted, as ``*args``.

    Attributes
    ----------
    name : str
        The channel's name in results (``direct``, ``anonymous``).
    requires_decomposition : bool
        Whether it answers only for groups of users who play one arm: a batch's demand is then decomposed into
        anonymous assignments, so N users run together (a single user's run means nothing on it).
    variance_proxy : float
        The variance proxy of one sample served so far (raised by a mechanism's noise).
    t, horizon : int
        Rounds charged so far, and the most it charges.
    done : bool
        Whether the horizon is reached.
    observations : int
        The samples (or aggregate observations) it served.
    min_group_size : int or None
        The smallest group whose sum it released (1: every user sees its own rewards; ``None``: none yet).
    exposure : dict
        Its privacy exposure (:func:`~anonbandits.privacy.mechanisms.guarantee`); empty without a mechanism.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.channels import CHANNELS
    >>> from anonbandits.envs import MultiUserInstance
    >>> channel = CHANNELS["direct"].open(MultiUserInstance(np.array([[0.9, 0.1]] * 2)), 100,
    ...                                   np.random.default_rng(0), ChannelOptions())
    >>> channel.requires_decomposition, channel.variance_proxy, channel.min_group(3)
    (False, 0.25, 1)
    """

    name: str
    requires_decomposition: bool
    variance_proxy: float
    horizon: int
    _ledger: ChannelLedger

    @classmethod
    def open(
        cls, instance: MultiUserInstance, horizon: int, rng: np.random.Generator, options: ChannelOptions
    ) -> FeedbackChannel:
        """The channel of one run: ``instance``'s rewards from ``rng``, at most ``horizon`` rounds.

        Parameters
        ----------
        instance : anonbandits.envs.instances.MultiUserInstance
            The N x K means and reward model.
        horizon : int
            The most rounds the channel charges.
        rng : numpy.random.Generator
            The source of every reward.
        options : ChannelOptions
            The driver's options (a channel refuses those it cannot honour, e.g. a mechanism).

        Returns
        -------
        FeedbackChannel
            The channel, its clock at 0.

        Raises
        ------
        ConfigError
            For an argument of another type or out of range (``horizon`` past :data:`MAX_HORIZON`), or options
            the channel cannot honour.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.channels import DirectFeedback
        >>> from anonbandits.envs import MultiUserInstance
        >>> DirectFeedback.open(MultiUserInstance(np.array([[0.9, 0.1]])), 10, np.random.default_rng(0),
        ...                     ChannelOptions()).t
        0
        """
        ...

    @staticmethod
    def sample_variance(C: int) -> float:
        """The variance proxy of one sample before any privacy noise (learners are sized with it).

        Parameters
        ----------
        C : int
            The anonymity parameter.

        Returns
        -------
        float
            The proxy.

        Raises
        ------
        ConfigError
            If ``C`` is not an integer the channel takes (from 1, or from 0 where C plays no part, to 2^62).

        Examples
        --------
        >>> from anonbandits.channels import AnonymousChannel, DirectFeedback
        >>> DirectFeedback.sample_variance(3), AnonymousChannel.sample_variance(3)
        (0.25, 3.25)
        """
        ...

    @staticmethod
    def min_group(C: int) -> int:
        """The smallest group whose aggregate the channel (or a vote board on it) releases, for anonymity ``C``.

        Parameters
        ----------
        C : int
            The anonymity parameter.

        Returns
        -------
        int
            1 when every reward (or vote) reaches its reader alone, C when aggregates group C users.

        Raises
        ------
        ConfigError
            If ``C`` is not an integer the channel takes (from 1, or from 0 where C plays no part, to 2^62).

        Examples
        --------
        >>> from anonbandits.channels import AnonymousChannel, DirectFeedback
        >>> DirectFeedback.min_group(3), AnonymousChannel.min_group(3)
        (1, 3)
        """
        ...

    @property
    def t(self) -> int: ...

    @property
    def done(self) -> bool: ...

    @property
    def observations(self) -> int: ...

    @property
    def min_group_size(self) -> int | None: ...

    @property
    def exposure(self) -> dict[Any, Any]: ...

    def serve_batch(self, learners: BatchLearner, demand: np.ndarray, batch: int, *, partial: bool) -> Served | None:
        """Play one batch of ``learners``' ``demand`` and answer with its samples.

        Parameters
        ----------
        learners : BatchLearner
            The N learners (their supports and recommendations, for the users' plays).
        demand : numpy.ndarray
            (N, K) int64 samples wanted.
        batch : int
            The batch's number (1-based), for the error messages.
        partial : bool
            Play a batch the horizon cuts to the horizon (its regret counts), answered with ``sums=None``;
            otherwise a batch that does not fit in the rounds left is not played and ``None`` is returned.

        Returns
        -------
        Served or None
            The sums and counts, the variance proxy, the rounds charged and the batch's figures.

        Raises
        ------
        ConfigError
            If ``learners`` is not a batch learner of the channel's N users and K arms, ``demand`` not an (N, K)
            array of non-negative integers, ``batch`` not a positive integer or ``partial`` not True or False.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.channels import DirectFeedback
        >>> from anonbandits.core.learners import EpochElimination
        >>> from anonbandits.envs import MultiUserInstance
        >>> channel = DirectFeedback(MultiUserInstance(np.array([[0.9, 0.1]] * 2)), 4, np.random.default_rng(0))
        >>> channel.serve_batch(EpochElimination(2, 2, confidence=0.1), np.array([[3, 3], [3, 3]]), 1,
        ...                     partial=False) is None  # 6 rounds do not fit in 4
        True
        """
        ...

    def play(self, arms: np.ndarray, rounds: int | None = None) -> int:
        """Every user i plays ``arms[i]`` for ``rounds`` rounds (default: to the horizon), with no feedback.

        Parameters
        ----------
        arms : numpy.ndarray
            (N,) arm index of each user.
        rounds : int or None, optional
            Number of rounds to play; ``None`` (default): every round left to the horizon.

        Returns
        -------
        int
            The number of rounds played (cut at the horizon).

        Raises
        ------
        ConfigError
            If ``arms`` is not an (N,) array of arm indices from 0 to K - 1, or ``rounds`` not ``None`` or an
            integer from 0 to 2^62.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.channels import DirectFeedback
        >>> from anonbandits.envs import MultiUserInstance
        >>> channel = DirectFeedback(MultiUserInstance(np.array([[0.9, 0.1]] * 2)), 30, np.random.default_rng(0))
        >>> channel.play(np.array([0, 1]))
        30
        """
        ...


#: The longest simulated horizon: Algorithm 2 keeps one entry per exploration phase (about T^(2/3)). The one
#: value of :data:`anonbandits.validation.MAX_HORIZON`, whose ``horizon`` rule the channels apply.
MAX_HORIZON = _MAX_HORIZON
#: the most intervals of a regret curve (each is a point of the returned arrays)
MAX_CURVE_POINTS = 10**7
_POINTS = int_between(1, MAX_CURVE_POINTS)
#: arms played, one per user (their upper bound, the channel's K, is checked by the channel)
ARMS = array_of("iu", "a 1-D array of arm indices (integers >= 0)", low=0)


#: What a driver is given: a channel class (or any object with ``open``, ``sample_variance`` and ``min_group``).
ChannelFactory = type[FeedbackChannel]


class ChannelLedger:
    """The simulator's books of one run: the instance (its means), the rounds charged and their pseudo-regret.

    Kept apart from what a learner holds: a channel (the learner's view) charges its rounds here and reads the
    means it draws from here, but exposes only its clock and its audited feedback; the ledger is the channel's
    private ``_ledger``, read by the drivers' result-building code alone
    (:func:`~anonbandits.anonymous.regret.finish_run`). Charges may be deferred (:meth:`defer`: the direct
    channel's batches are entered when the regret is read); they count on the clock at once.

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The N x K means and reward model.
    horizon : int
        The most rounds charged, between 1 and :data:`MAX_HORIZON` (10^9).

    Raises
    ------
    ConfigError
        If ``instance`` is not a :class:`~anonbandits.envs.MultiUserInstance` or ``horizon`` not an integer
        between 1 and :data:`MAX_HORIZON`.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.envs.instances import MultiUserInstance
    >>> ledger = ChannelLedger(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 30)
    >>> ledger.charge(np.array([20]), np.array([1.6]))
    >>> ledger.rounds, ledger.regret, [v.tolist() for v in ledger.curve(2)]
    (20, 32.0, [[0, 10, 20], [0.0, 16.0, 32.0]])
    """

    @checks(instance=INSTANCE, horizon=RULES["horizon"])
    def __init__(self, instance: MultiUserInstance, horizon: int) -> None:
        self.instance = instance
        self.horizon = int(horizon)
        self._trace = RegretTrace()  # one block per played stretch
        self._deferred: list[Callable[[], tuple[np.ndarray, np.ndarray]]] = []
        self._deferred_rounds = 0

    @property
    def rounds(self) -> int:
        """Rounds charged so far (deferred charges included)."""
        return self._trace.rounds + self._deferred_rounds

    @property
    def regret(self) -> float:
        """Cumulative pseudo-regret so far, summed over users."""
        self._settle()
        return self._trace.regret

    @checks(lengths=COUNTS, rates=SUMS)
    def charge(self, lengths: np.ndarray, rates: np.ndarray) -> None:
        """Charge stretches of ``lengths`` rounds, each of per-round pseudo-regret ``rates`` (summed over users).

        Parameters
        ----------
        lengths : numpy.ndarray
            (m,) int rounds of each stretch, in the order played.
        rates : numpy.ndarray
            (m,) pseudo-regret of one round of each stretch.

        Raises
        ------
        ConfigError
            If ``lengths`` are not (m,) integers >= 0 with ``rates`` (m,) finite numbers, or would pass the
            horizon.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> ledger = ChannelLedger(MultiUserInstance(np.array([[0.9, 0.1]] * 2)), 100)
        >>> ledger.charge(np.array([10, 5]), np.array([0.0, 0.8]))
        >>> ledger.rounds, ledger.regret
        (15, 4.0)
        """
        lengths, rates = np.asarray(lengths), np.asarray(rates)
        if lengths.shape != rates.shape:
            raise ConfigError(f"rates must be one per stretch of lengths {lengths.shape}, got {_shown(rates)}")
        # a length past the horizon is refused before the sum, which then stays exact in 64 bits
        left = self.horizon - self.rounds
        if (lengths.size and int(lengths.max()) > left) or int(lengths.sum()) > left:
            raise ConfigError(f"lengths must fit in the {left} rounds left of the horizon, got {_shown(lengths)}")
        self._settle()
        self._trace.charge(lengths, rates)

    @checks(rounds=NONNEGATIVE_COUNT, stretches=Rule(callable, "a callable stretches() -> (lengths, rates)"))
    def defer(self, rounds: int, stretches: Callable[[], tuple[np.ndarray, np.ndarray]]) -> None:
        """Count ``rounds`` on the clock now and charge ``stretches()`` (lengths, rates) when the books are read.

        Parameters
        ----------
        rounds : int
            The rounds the stretches span.
        stretches : callable
            ``stretches() -> (lengths, rates)``, as :meth:`charge` takes them, summing to ``rounds``.

        Raises
        ------
        ConfigError
            If ``rounds`` is not an integer >= 0 within the horizon, or ``stretches`` is not callable.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> ledger = ChannelLedger(MultiUserInstance(np.array([[0.9, 0.1]] * 2)), 100)
        >>> ledger.defer(10, lambda: (np.array([10]), np.array([1.6])))
        >>> ledger.rounds, ledger.regret  # on the clock at once, charged when read
        (10, 16.0)
        """
        if self.rounds + rounds > self.horizon:
            raise ConfigError(f"rounds must be at most the {self.horizon - self.rounds} rounds left, got {rounds}")
        self._deferred.append(stretches)
        self._deferred_rounds += int(rounds)

    def _settle(self) -> None:
        if self._deferred:
            deferred, self._deferred, self._deferred_rounds = self._deferred, [], 0
            for stretches in deferred:
                self._trace.charge(*stretches())

    @checks(points=_POINTS)
    def curve(self, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Cumulative pseudo-regret (summed over users) at ``points + 1`` evenly spaced rounds of [0, rounds].

        Exact, as regret is linear within each played stretch; rounds that coincide after rounding to integers
        appear once.

        Parameters
        ----------
        points : int, optional
            Number of intervals between the curve's rounds (default 200).

        Returns
        -------
        rounds : numpy.ndarray
            The ``int64`` rounds, increasing from 0 to :attr:`rounds`.
        regret : numpy.ndarray
            The cumulative pseudo-regret after each of ``rounds``.

        Raises
        ------
        ConfigError
            If ``points`` is not an integer from 1 to :data:`MAX_CURVE_POINTS` (10^7).

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> ledger = ChannelLedger(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 100)
        >>> ledger.charge(np.array([10, 10]), np.array([0.0, 3.2]))
        >>> [v.tolist() for v in ledger.curve(4)]
        [[0, 5, 10, 15, 20], [0.0, 0.0, 0.0, 16.0, 32.0]]
        """
        self._settle()
        x = np.unique(np.linspace(0, self.rounds, points + 1).round().astype(np.int64))
        return x, self._trace.curve(x)


def _removed(name: str, instead: str) -> None:
    warnings.warn(
        f"a channel's {name} is deprecated and gives NaN: the simulator's books are not the learner's to "
        f"read ({instead}); the name goes in the next release",
        DeprecationWarning,
        stacklevel=3,
    )


class RoundBooks:
    """The clock of a channel on N users (rounds charged, never past the horizon), its books kept in a private
    :class:`ChannelLedger`: the learner's view exposes the clock, never the regret or the means.

    Parameters
    ----------
    instance : anonbandits.envs.instances.MultiUserInstance
        The N x K means (private: kept in the ledger; a learner sees only what the channel answers).
    horizon : int
        The most rounds the channel charges.

    Raises
    ------
    ConfigError
        If ``horizon`` is not between 1 and :data:`MAX_HORIZON` (10^9) rounds.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.envs.instances import MultiUserInstance
    >>> books = RoundBooks(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 30)
    >>> books.play(np.array([0, 0, 1, 1]), 20), books.t, books.play(np.zeros(4, dtype=int)), books.done
    (20, 20, 10, True)
    >>> books._ledger.regret  # the driver's books, not the learner's
    32.0
    """

    def __init__(self, instance: MultiUserInstance, horizon: int) -> None:
        self._ledger = ChannelLedger(instance, horizon)
        self.n_users, self.n_arms = instance.n_users, instance.n_arms
        self.horizon = self._ledger.horizon

    @property
    def t(self) -> int:
        """Rounds played so far."""
        return self._ledger.rounds

    @property
    def done(self) -> bool:
        """Whether the horizon is reached."""
        return self.t >= self.horizon

    def _check_batch(self, learners: BatchLearner, demand: np.ndarray) -> None:
        """Refuse learners or a demand of another size than the channel's N users x K arms (O(1): every batch)."""
        if (learners.n_learners, learners.n_arms) != (self.n_users, self.n_arms):
            raise ConfigError(
                f"learners must be {self.n_users} learners of {self.n_arms} arms (the channel's), got "
                f"{learners.n_learners} x {learners.n_arms}"
            )
        if np.shape(demand) != (self.n_users, self.n_arms):
            raise ConfigError(
                f"demand must be a ({self.n_users}, {self.n_arms}) array (users x arms), got {_shown(demand)}"
            )

    @property
    def regret(self) -> float:
        """Deprecated: NaN, with a ``DeprecationWarning`` (the regret is the driver's, in the run's ``Result``)."""
        _removed("regret", "the run's Result reports it")
        return math.nan

    @checks(points=_POINTS)
    def regret_curve(self, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
        """Deprecated: the rounds of the curve and NaN regret, with a ``DeprecationWarning`` (the run's
        ``Result.curve`` holds it).

        Parameters
        ----------
        points : int, optional
            Number of intervals between the curve's rounds (default 200).

        Returns
        -------
        tuple of numpy.ndarray
            The rounds, and NaN for each.

        Raises
        ------
        ConfigError
            If ``points`` is not an integer from 1 to :data:`MAX_CURVE_POINTS` (10^7).
        """
        _removed("regret_curve", "the run's Result.curve holds it")
        x = np.unique(np.linspace(0, self.t, points + 1).round().astype(np.int64))
        return x, np.full(x.size, np.nan)

    @checks(arms=ARMS, rounds=optional(NONNEGATIVE_COUNT))
    def play(self, arms: np.ndarray, rounds: int | None = None) -> int:
        """Every user i plays ``arms[i]`` for ``rounds`` rounds (default: to the horizon), with no feedback.

        Parameters
        ----------
        arms : numpy.ndarray
            (N,) arm index of each user.
        rounds : int or None, optional
            Number of rounds to play; ``None`` (default): every round left to the horizon.

        Returns
        -------
        int
            The number of rounds played (cut at the horizon; 0 once :attr:`done`).

        Raises
        ------
        ConfigError
            If ``arms`` is not an (N,) array of arm indices from 0 to K - 1, or ``rounds`` not ``None`` or an
            integer from 0 to 2^62.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> books = RoundBooks(MultiUserInstance(np.array([[0.9, 0.1]] * 4)), 30)
        >>> books.play(np.array([0, 0, 1, 1]), 20), books.t
        (20, 20)
        >>> books.play(np.array([0, 0, 2, 1]))
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: arms must be an array of 4 arm indices from 0 to 1, got array([0, 0, 2, 1])
        """
        arms = np.asarray(arms)
        # the shape and the upper bound relate arms to the channel: checked at every call (O(N), as the charge)
        if arms.shape != (self.n_users,) or (arms.size and arms.max() >= self.n_arms):
            raise ConfigError(
                f"arms must be an array of {self.n_users} arm indices from 0 to {self.n_arms - 1}, got {_shown(arms)}"
            )
        n = self.horizon - self.t if rounds is None else min(int(rounds), self.horizon - self.t)
        if n > 0:
            self._ledger.charge(*self._stretches(arms, n))
        return n

    def _stretches(self, arms: np.ndarray, rounds: int) -> tuple[np.ndarray, np.ndarray]:
        """What :meth:`play` charges for ``rounds`` > 0 rounds of ``arms`` (checked): the stretches' lengths and
        per-round pseudo-regret. Here one stretch, every user there; a channel with absent users charges the
        present ones only."""
        return np.array([rounds]), np.array([self._ledger.instance.round_regret(arms)])
