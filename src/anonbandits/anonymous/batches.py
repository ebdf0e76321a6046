"""The one batch loop of N batched learners over a feedback channel: the loop every multi-user driver runs.

Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000). All users
run their learners (:class:`~anonbandits.core.learners.BatchLearner`) in lock-step batches: :func:`run_batches`
hands each batch's demand to the channel (:meth:`~anonbandits.channels.FeedbackChannel.serve_batch`: on the
anonymous channel the demand graph, its C-anonymous decomposition, the 2C+2-round sub-algorithm and the auditor;
on the direct one exact sums), updates the learners with the sums, the counts and the channel's variance proxy, and
records the batch (:class:`BatchRecord`). What ends the loop is its :class:`StoppingRule`:
:data:`EVERY_LEARNER_STOPPED` (best-arm identification, :func:`~anonbandits.anonymous.identify`: a batch that
would pass the cap on the rounds is not run) or :data:`HORIZON` (regret,
:func:`~anonbandits.anonymous.batched_regret`: the batch the horizon cuts is played to it, with no update).

The steps of the anonymous channel's batch (:func:`supports`, :func:`demand_graph`, :func:`decompose_demand`,
:func:`elicit_demand`, :func:`noisy_variance`) live with the channel in :mod:`anonbandits.channels.anonymous` and
are found here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Self

import numpy as np

import anondecomp
from anonbandits._docstrings import fill
from anonbandits.channels import CHANNELS, ChannelFactory, FeedbackChannel, channel_named
from anonbandits.channels.anonymous import (
    MAX_ELICITED,
    decompose_demand,
    demand_graph,
    elicit_demand,
    is_decomposer,
    noisy_variance,
    supports,
)
from anonbandits.channels.feedback import MECHANISM
from anonbandits.core.learners import BatchLearner
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError, require
from anonbandits.privacy.mechanisms import CentralLaplace
from anonbandits.validation import (
    BOOL,
    CHANNEL,
    INSTANCE,
    LEARNERS,
    OPEN_UNIT,
    RNG,
    RULES,
    Rule,
    checks,
    instance_of,
    optional,
)

__all__ = [
    "EVERY_LEARNER_STOPPED",
    "HORIZON",
    "MAX_ELICITED",
    "BatchRecord",
    "StoppingRule",
    "channel_variance",
    "decompose_demand",
    "demand_graph",
    "elicit_demand",
    "noisy_variance",
    "run_batches",
    "supports",
]


#: the ``channel`` of a driver: a name of :data:`anonbandits.channels.CHANNELS` or a channel class
CHANNEL_NAME = Rule(
    lambda v: (
        (isinstance(v, str) and v in CHANNELS)
        or (
            isinstance(v, type) and all(callable(getattr(v, m, None)) for m in ("open", "sample_variance", "min_group"))
        )
    ),
    f"one of {', '.join(CHANNELS)} or a channel class (anonbandits.channels.FeedbackChannel)",
)
#: the ``decomposer`` of a driver: an ``anondecomp.METHODS`` name
DECOMPOSER = Rule(is_decomposer, f"one of {', '.join(anondecomp.METHODS)}")
#: an optional generator (the decomposer's, the noise's)
OPTIONAL_RNG = optional(RNG)
#: the rules of the arguments every driver over a feedback channel shares (identify, batched_regret)
DRIVER_RULES: dict[str, Rule] = {
    "instance": INSTANCE,
    "learners": LEARNERS,
    "channel": CHANNEL_NAME,
    "C": RULES["C"],
    "decomposer": DECOMPOSER,
    "rng": RNG,
    "decomposer_rng": OPTIONAL_RNG,
    "mechanism": MECHANISM,
    "noise_rng": OPTIONAL_RNG,
    "allow_large": BOOL,
    "absence": RULES["absence"],
    "confidence": optional(OPEN_UNIT),
    "max_exposure": optional(RULES["max_exposure"]),
}


def checked_arms(called: str, given: Any, instance: MultiUserInstance, requirement: str) -> np.ndarray:
    """``given`` as each user's arm of ``instance``: (N,) integers in ``0 .. K-1`` (-1 would wrap to the last
    arm); a one-line :class:`ConfigError` ``"{called} must be {requirement}, got ..."`` for anything else."""

    def test(value: Any) -> bool:
        arms = np.asarray(value) if not isinstance(value, str | bytes | Mapping) else np.asarray(None)
        return (
            arms.shape == (instance.n_users,)
            and arms.dtype.kind in "iu"
            and bool(np.all((arms >= 0) & (arms < instance.n_arms)))
        )

    Rule(test, requirement).check(called, given)
    return np.asarray(given)


@fill
@checks(channel=CHANNEL_NAME, C=RULES["C"], learners=optional(LEARNERS))
def channel_variance(channel: str | ChannelFactory, C: int, learners: BatchLearner | None = None) -> float:
    """The variance proxy of one sample on ``channel``, checked against the one ``learners`` are sized for.

    The channel's :meth:`~anonbandits.channels.FeedbackChannel.sample_variance`: 1/4 (a reward in [0, 1]) on the
    direct channel, ``(4C+1)/4`` on the anonymous one (:func:`~anonbandits.channels.elicitation_variance`).
    Fixed-design learners (naive and median elimination, SE's epochs) fix their sample counts from their
    ``sigma2`` before any sample, so learners sized for less than the channel's proxy would lose their
    guarantee: they are refused.

    Parameters
    ----------
    channel : str or channel class
        A name of :data:`anonbandits.channels.CHANNELS` (``direct``, ``anonymous``) or a channel.
    C : int
        The anonymity parameter.
    learners : BatchLearner, optional
        N batched learners to check (none: the proxy alone, to size learners with).

    Returns
    -------
    float
        The channel's variance proxy.

    Raises
    ------
    ConfigError
        For an unknown channel name or a value that is no channel, a ``C`` that is not an integer of at least 1,
        ``learners`` that are neither ``None`` nor batch learners, or if ``learners.sigma2`` is below the proxy.

    {{refs_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import BestArmElimination
    >>> learners = BestArmElimination(2, 3, "naive", approx=0.5, delta=0.1, rng=np.random.default_rng(0),
    ...                               sigma2=3.25)
    >>> channel_variance("anonymous", 3, learners), channel_variance("direct", 3, learners)
    (3.25, 0.25)
    >>> channel_variance("anonymous", 1, BestArmElimination(2, 3, "naive", approx=0.5, delta=0.1,
    ...                                                     rng=np.random.default_rng(0)))
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: the learners are sized for variance proxy 0.25, below the anonymous ...
    """
    factory = channel_named(channel)
    sigma2 = factory.sample_variance(C)
    if learners is not None and learners.sigma2 < sigma2:
        raise ConfigError(
            f"the learners are sized for variance proxy {learners.sigma2:g}, below the "
            f"{factory.name} channel's {sigma2:g} at C = {C}; build them with sigma2={sigma2:g}"
        )
    return sigma2


@dataclass(frozen=True)
class BatchRecord:
    """One exploration batch of the batch loop (Algorithm 1, SE, identification) or the exploration phase of
    Algorithm 2.

    Parameters
    ----------
    demand : int
        D_b, the batch's demand: a batched graph's total demand D (Algorithm 1: BaSE's batch length, spread over
        each user's active arms), else the most samples one user wants (Algorithm 2: its number of phases).
    assignments : int
        R_b, the number of assignments run (the sum of the multiplicities; 0 on the direct channel).
    distinct : int
        How many of them differ.
    method : str
        The decomposition method that ran (``"etc"`` for Algorithm 2, the channel's name when nothing is
        decomposed: ``"direct"``).
    uncovered : int
        The (user, arm) pairs left uncovered (best effort only).
    rounds : int
        The rounds played in the batch.
    eliminated : int
        The arms eliminated after the batch, over all users.
    active_pairs : int
        The (user, arm) pairs active when the batch was decomposed.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.3,
    Algorithm 1, and Section 3.5, Algorithm 2).

    Examples
    --------
    >>> record = BatchRecord(demand=62, assignments=62, distinct=2, method="polytope", uncovered=0, rounds=248,
    ...                      eliminated=0, active_pairs=16)
    >>> record.rounds // record.assignments  # 2C + 2 rounds per assignment, C = 1
    4
    """

    demand: int
    assignments: int
    distinct: int
    method: str
    uncovered: int
    rounds: int
    eliminated: int
    active_pairs: int


class _StoppingFields(NamedTuple):
    name: str
    at_horizon: bool


class StoppingRule(_StoppingFields):
    """What ends :func:`run_batches`, besides every learner having stopped.

    Parameters
    ----------
    name : str
        What the rule is, in words.
    at_horizon : bool
        True: the loop also ends once the channel's clock reaches its horizon, and the batch the horizon cuts
        is played to it (its rounds and regret count) with no update. False: a batch that does not fit in the
        rounds left is not played and the loop ends (learners still exploring keep their recommendation).

    Raises
    ------
    ConfigError
        For a ``name`` that is not a str or an ``at_horizon`` that is not a bool (however the rule is built).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> HORIZON.at_horizon, EVERY_LEARNER_STOPPED.at_horizon
    (True, False)
    """

    __slots__ = ()

    def __new__(cls, name: str, at_horizon: bool) -> StoppingRule:
        require(isinstance(name, str), "name", "a str (what the rule is, in words)", name)
        BOOL.check("at_horizon", at_horizon)
        return super().__new__(cls, name, bool(at_horizon))

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Self:  # type: ignore[override]  # checked, however built
        return cls(*iterable)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**self._asdict(), **changes})


#: Run until every learner has stopped; the channel's horizon is a cap no batch may pass (identification).
EVERY_LEARNER_STOPPED = StoppingRule("every learner stopped", at_horizon=False)
#: Run until the horizon (or until every learner has stopped): the regret drivers.
HORIZON = StoppingRule("horizon", at_horizon=True)


@dataclass
class BatchLoop:
    """What :func:`run_batches` leaves: the batches' records and the learners' figures.

    Parameters
    ----------
    records : list of BatchRecord
        One record per batch served (empty batches of a learner's schedule are not recorded).
    stopped_at : numpy.ndarray
        (N,) int64, the round at which each learner stopped (0: before any batch; -1: still exploring).
    samples : int
        Samples the learners were updated with.
    surplus : int
        Samples served beyond a pair's demand and discarded.
    sigma2 : float
        The variance proxy of the last update.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> BatchLoop([], np.zeros(2, np.int64), 0, 0, 0.25).surplus
    0
    """

    records: list[BatchRecord]
    stopped_at: np.ndarray
    samples: int
    surplus: int
    sigma2: float


@fill
@checks(
    learners=LEARNERS,
    channel=CHANNEL,
    until=instance_of("anonbandits.anonymous.batches.StoppingRule", "a StoppingRule (HORIZON, EVERY_LEARNER_STOPPED)"),
    sum_noise=optional(instance_of("anonbandits.privacy.mechanisms.CentralLaplace", "a CentralLaplace mechanism")),
    noise_rng=OPTIONAL_RNG,
)
def run_batches(
    learners: BatchLearner,
    channel: FeedbackChannel,
    until: StoppingRule,
    *,
    sum_noise: CentralLaplace | None = None,
    noise_rng: np.random.Generator | None = None,
) -> BatchLoop:
    """Run ``learners`` batch by batch over ``channel`` until ``until`` says stop: the one batch loop.

    Each batch: the learners' demand goes to the channel
    (:meth:`~anonbandits.channels.FeedbackChannel.serve_batch`), and the learners are updated with the sums, the
    counts and the channel's variance proxy (a batch nobody samples only advances their schedule).

    Parameters
    ----------
    learners : BatchLearner
        N batched learners, one per user of the channel's instance.
    channel : FeedbackChannel
        The run's channel, opened on its instance and horizon.
    until : StoppingRule
        :data:`EVERY_LEARNER_STOPPED` or :data:`HORIZON`.
    sum_noise : CentralLaplace, optional
        Noise added to each demanded (learner, arm) batch sum before the update (DP-SE's ``Lap(1/epsilon)``);
        default none.
    noise_rng : numpy.random.Generator, optional
        The source of ``sum_noise`` (no noise is added without one).

    Returns
    -------
    BatchLoop
        The records and figures of the batches.

    Raises
    ------
    ConfigError
        For ``learners`` that are not batch learners, a ``channel`` that is not a feedback channel, an ``until``
        that is not a :class:`StoppingRule`, a ``sum_noise`` that is neither ``None`` nor a ``CentralLaplace``, a
        ``noise_rng`` that is neither ``None`` nor a generator; whatever the channel's batch raises (learners
        that do not match its instance, a group below C).

    {{refs_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.channels import ChannelOptions, DirectFeedback
    >>> from anonbandits.core.learners import EpochElimination
    >>> from anonbandits.envs.instances import MultiUserInstance
    >>> instance = MultiUserInstance(np.array([[0.9, 0.1]] * 3))
    >>> channel = DirectFeedback.open(instance, 10**5, np.random.default_rng(0), ChannelOptions())
    >>> loop = run_batches(EpochElimination(3, 2, confidence=0.1), channel, HORIZON)
    >>> loop.stopped_at.tolist(), loop.samples == sum(r.rounds for r in loop.records) * 3
    ([1300, 1300, 1300], True)
    """
    n, k = learners.n_learners, learners.n_arms
    stopped_at = np.full(n, -1, dtype=np.int64)
    stopped_at[~learners.exploring] = 0
    records: list[BatchRecord] = []
    samples = surplus = 0
    while learners.exploring.any() and not (until.at_horizon and channel.done):
        demand = learners.demand()
        wanted = demand > 0
        if not wanted.any():  # a batch nobody samples (an empty step of a learner's schedule)
            learners.update(np.zeros((n, k)), demand, channel.variance_proxy)
            continue
        served = channel.serve_batch(learners, demand, len(records) + 1, partial=until.at_horizon)
        if served is None:  # the batch would pass the cap on the rounds
            break
        eliminated = 0
        if served.sums is not None:
            sums = served.sums
            if sum_noise is not None and noise_rng is not None:
                sums = sums + np.where(wanted, sum_noise.noise(noise_rng, (n, k)), 0.0)
            was = learners.exploring.copy()
            eliminated = int(learners.update(sums, served.counts, served.sigma2).sum())
            samples += int(served.counts.sum())
            stopped_at[was & ~learners.exploring] = channel.t
        surplus += served.surplus
        records.append(
            BatchRecord(
                demand=served.size,
                assignments=served.assignments,
                distinct=served.distinct,
                method=served.method,
                uncovered=served.uncovered,
                rounds=served.rounds,
                eliminated=eliminated,
                active_pairs=int(wanted.sum()),
            )
        )
    return BatchLoop(records, stopped_at, samples, surplus, channel.variance_proxy)
