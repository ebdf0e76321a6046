"""Best-arm identification for every user, over any feedback channel: one driver for any batched learner of
:mod:`anonbandits.core.learners`.

This is the experiment that tests the thesis of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for
Multi-User Systems* (NeurIPS 2022, paper 000) directly. All users run their learners in lock-step batches
(:func:`~anonbandits.anonymous.batches.run_batches`, until every learner has stopped); a batch's demand (the
learners' :meth:`~anonbandits.core.learners.BatchLearner.demand`) is served

* on the **direct** channel by exact reward sums (no anonymity; ``min_group_size`` 1); the batch lasts the
  largest number of samples one user takes in it (one pull per round);
* on the **anonymous** channel by a demand graph decomposed with ``anondecomp.decompose`` (the learners'
  demands, each user's support apart from its demand), the 2C+2-round sub-algorithm on every assignment
  (Section 3.1), the auditor (no group below C), and estimates with the variance proxy ``(4C+1)/4`` (raised by a
  privacy mechanism's noise, :func:`~anonbandits.anonymous.batches.noisy_variance`): the batch lasts
  ``R_b (2C+2)`` rounds, so the rounds spent until the last user stops are ``sum_b R_b (2C+2)`` and a
  shorter decomposition means fewer rounds.

What differs is the channel's (:class:`~anonbandits.channels.FeedbackChannel`), shared with the regret driver
:func:`~anonbandits.anonymous.batched_regret`. **[DECISION]** Supports: a user still exploring may be assigned
to any arm (it discards what it did not ask for); a user that has stopped plays only its recommendation, filling
groups there so nobody else drops below C+1. An arm that cannot gather C+1 users is refused in one line naming
it and the batch.

:func:`identify` returns :class:`~anonbandits.results.Result`; ``IdentificationRun``, its result type before, is
still found here for one release, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.anonymous._legacy import IdentificationResult, old_names
from anonbandits.anonymous.batches import (
    DRIVER_RULES,
    EVERY_LEARNER_STOPPED,
    MAX_ELICITED,
    channel_variance,
    checked_arms,
    run_batches,
)
from anonbandits.channels import ChannelFactory, ChannelOptions, channel_named, check_decomposer
from anonbandits.channels.feedback import MAX_HORIZON
from anonbandits.core.learners import BatchLearner
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import Mechanism
from anonbandits.results import Result
from anonbandits.validation import (
    INSTANCE,
    NONNEGATIVE_FINITE,
    Rule,
    array_of,
    checks,
    instance_of,
    int_between,
    is_integer,
)

__all__ = ["STOP_AXES", "error_rate", "identify", "stop_curve"]

#: the axes of an identification run's curve (:func:`stop_curve`)
STOP_AXES = ("round", "users still exploring")
#: a run's result (:class:`anonbandits.results.Result`)
RESULT = instance_of("anonbandits.results.Result", "a Result (anonbandits.Result)")
#: a run's ``info["stopped_at"]``: the round each learner stopped (-1: still exploring)
STOPPED = array_of(
    "iu", "a run of identify with info['stopped_at'] a 1-D array of rounds (-1: still exploring)", low=-1
)
#: a run's ``metrics["rounds"]``
ROUNDS = Rule(lambda v: is_integer(v) and v >= 0, "a run of identify with metrics['rounds'] an integer >= 0")

__getattr__ = old_names(__name__, ("IdentificationRun",))


@fill
@checks(**DRIVER_RULES, max_rounds=int_between(1, MAX_HORIZON))
def identify(
    instance: MultiUserInstance,
    learners: BatchLearner,
    *,
    channel: str | ChannelFactory = "anonymous",
    C: int = 1,
    decomposer: str = "auto",
    rng: np.random.Generator,
    decomposer_rng: np.random.Generator | None = None,
    max_rounds: int = MAX_HORIZON,
    mechanism: Mechanism | None = None,
    noise_rng: np.random.Generator | None = None,
    allow_large: bool = False,
    absence: float = 0.0,
    confidence: float | None = None,
    max_exposure: int | None = None,
) -> Result:
    """Run ``learners`` (one per user of ``instance``) batch by batch until every one has stopped.

    Parameters
    ----------
    {{driver_learners}}
    {{driver_channel}}
    max_rounds : int, optional
        A cap on the rounds; learners still exploring then keep their current recommendation.
    {{driver_mechanism}}
    allow_large : bool, optional
        Confirm sizes past the documented limits of :mod:`anonbandits.core.limits` (the anonymous channel's
        (2C+2) x N user-rounds of one elicitation). Default False: refused in one line.
    {{driver_absence}}

    Returns
    -------
    Result
        ``metrics``: ``rounds`` (until the last learner stopped, or the cap), ``samples`` (informative samples
        used), ``surplus`` (informative samples discarded because a decomposition over-covered a pair),
        ``batches``, ``assignments`` (R summed over the batches' decompositions; 0 on the direct channel),
        ``min_group_size`` (1 on the direct channel; ``None`` if no group was released) and ``users_stopped``;
        ``curve``: :func:`stop_curve`; ``records``: one mapping per batch; ``info``: ``stopped_at`` ((N,) int64,
        the round each learner stopped, -1 if still exploring at the cap), ``recommendation`` ((N,) each
        learner's arm), the ``channel``'s name and its privacy ``exposure`` (empty without a mechanism).

    Raises
    ------
    ConfigError
        For an argument of the wrong type (an ``instance`` that is not a ``MultiUserInstance``, ``learners``
        that are not batch learners, a generator that is not one, a switch that is not a bool), an unknown
        channel or decomposer, a C that is not an integer of at least 1, a ``max_rounds`` that is not an integer
        from 1 to ``MAX_HORIZON`` (10^9), learners that do not match the instance or are sized below the
        channel's variance proxy, a mechanism or an absence on the direct channel, an ``absence`` that is not a
        probability in [0, 1), or a ``confidence`` that is not ``None`` or in (0, 1) (or given without an absence).
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, a decomposer leaves a pair short, or a batch's
        decomposition has more distinct user-assignments than ``anonymous.batches.MAX_ELICITED`` (10^7, about
        1 GB to elicit: randomized decompositions on many arms, refused before they are drawn).

    {{refs_paper000_paper002}}

    {{bai_example}}
    >>> instance = clustered_instance(12, 2, 0, 0.4, np.random.default_rng(0))
    >>> learners = BestArmElimination(12, 2, "naive", approx=0.3, delta=0.1, rng=np.random.default_rng(1),
    ...                               sigma2=channel_variance("anonymous", 2))
    >>> run = identify(instance, learners, C=2, decomposer="polytope", rng=np.random.default_rng(2))
    >>> m = run.metrics
    >>> m["rounds"] == m["assignments"] * (2 * 2 + 2), m["min_group_size"] >= 2, error_rate(run, instance, 0.3)
    (True, True, 0.0)
    """
    factory = channel_named(channel)
    require(
        learners.n_learners == instance.n_users and learners.n_arms == instance.n_arms,
        "learners",
        f"{instance.n_users} x {instance.n_arms} to match the instance",
        f"{learners.n_learners} x {learners.n_arms}",
    )
    check_decomposer(decomposer)
    options = ChannelOptions(
        C=C,
        decomposer=decomposer,
        decomposer_rng=decomposer_rng,
        mechanism=mechanism,
        noise_rng=noise_rng,
        max_elicited=MAX_ELICITED,
        allow_large=allow_large,
        absence=absence,
        confidence=confidence,
        max_exposure=max_exposure,
    )
    books = factory.open(instance, max_rounds, rng, options)
    channel_variance(factory, C, learners)
    loop = run_batches(learners, books, EVERY_LEARNER_STOPPED)
    records = loop.records
    metrics = {
        "rounds": books.t,
        "samples": loop.samples,
        "surplus": loop.surplus,
        "batches": len(records),
        "assignments": sum(r.assignments for r in records),
        "min_group_size": books.min_group_size,
        "users_stopped": float(np.mean(loop.stopped_at >= 0)),
    }
    return IdentificationResult(
        metrics=metrics,
        curve=_stop_curve(loop.stopped_at, books.t),
        curve_axes=STOP_AXES,
        records=tuple(dataclasses.asdict(r) for r in records),
        info={
            "stopped_at": loop.stopped_at,
            "recommendation": learners.recommendation(),
            "channel": books.name,
            "exposure": books.exposure,
        },
    )


@checks(run=RESULT, instance=INSTANCE, approx=NONNEGATIVE_FINITE)
def error_rate(run: Result, instance: MultiUserInstance, approx: float) -> float:
    """Share of users whose recommendation in ``run`` is not ``approx``-optimal for them.

    Parameters
    ----------
    run : Result
        A run of :func:`identify` (its ``info["recommendation"]``).
    instance : MultiUserInstance
        The instance the run was on.
    approx : float
        The tolerance: a recommendation within ``approx`` of the user's best mean is correct.

    Returns
    -------
    float
        The share of wrong recommendations, in [0, 1].

    Raises
    ------
    ConfigError
        For a ``run`` that is not a :class:`~anonbandits.results.Result` with an ``info["recommendation"]`` of
        (N,) integer arms of ``instance``, an ``instance`` that is not a ``MultiUserInstance``, or an ``approx``
        that is not a finite number >= 0.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> instance = MultiUserInstance(np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.45]]))
    >>> run = Result({}, info={"recommendation": np.array([0, 0, 1])})
    >>> round(error_rate(run, instance, 0.1), 3), round(error_rate(run, instance, 0.01), 3)
    (0.333, 0.667)
    """
    arms = checked_arms(
        "run",
        run.info.get("recommendation"),
        instance,
        f"a run of identify with info['recommendation'] of (N,) = ({instance.n_users},) arms in "
        f"0 .. {instance.n_arms - 1}",
    )
    gap = instance.gaps[np.arange(instance.n_users), arms]
    return float(np.mean(gap > approx))


def _stop_curve(stopped_at: np.ndarray, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    done = np.sort(stopped_at[stopped_at >= 0])
    x = np.concatenate(([0], done, [max(rounds, int(done.max(initial=0)))]))
    left = stopped_at.size - np.concatenate(([0], np.arange(1, done.size + 1), [done.size]))
    return x, left.astype(float)


@fill
@checks(run=RESULT)
def stop_curve(run: Result) -> tuple[np.ndarray, np.ndarray]:
    """The stop curve of a run: users still exploring against rounds (:func:`identify` reports it as its curve).

    Parameters
    ----------
    run : Result
        A run of :func:`identify` (its ``info["stopped_at"]`` and ``metrics["rounds"]``).

    Returns
    -------
    tuple of numpy.ndarray
        ``(rounds, users still exploring)`` at round 0, at every round where a learner stopped, and at the end.

    Raises
    ------
    ConfigError
        For a ``run`` that is not a :class:`~anonbandits.results.Result` of :func:`identify`: one whose
        ``info["stopped_at"]`` is a 1-D array of integer rounds (-1: still exploring) and whose
        ``metrics["rounds"]`` is an integer >= 0.

    {{refs_paper000}}

    Examples
    --------
    >>> run = Result({"rounds": 30}, info={"stopped_at": np.array([10, 30])})
    >>> [v.tolist() for v in stop_curve(run)]
    [[0, 10, 30, 30], [2.0, 1.0, 0.0, 0.0]]
    """
    stopped, rounds = run.info.get("stopped_at"), run.metrics.get("rounds", -1)
    STOPPED.check("run", stopped)
    ROUNDS.check("run", rounds)
    return _stop_curve(np.asarray(stopped), int(rounds))
