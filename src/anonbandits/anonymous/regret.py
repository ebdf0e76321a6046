"""Regret of N batched learners over a horizon, on any feedback channel: one driver for any learner of
:mod:`anonbandits.core.learners` (SE and DP-SE with doubling epochs need no horizon; Algorithm 1's BaSE,
:func:`~anonbandits.anonymous.anon_batched`, runs on it too).

Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000): every
user runs its own learner, all in lock-step batches (:func:`~anonbandits.anonymous.batches.run_batches`, until the
horizon), and :func:`batched_regret` charges the pseudo-regret of every round, summed over users, until the
horizon T; once every learner has stopped, each user plays its commitment to the horizon.

* **anonymous**: each batch is decomposed into C-anonymous assignments and elicited by the 2C+2-round
  sub-algorithm (Section 3.1) under the auditor; the learners update with the variance proxy ``(4C+1)/4``,
  raised by a privacy mechanism's noise. A batch lasts ``R_b (2C+2)`` rounds; users who stopped (or want nothing
  this batch) play their recommendation and fill groups.
* **direct**: no anonymity (``min_group_size`` 1); in a batch each user takes its samples arm by arm (one a
  round), then plays its recommendation until the batch's longest user is done; exact reward sums, variance
  proxy 1/4.

What differs is the channel's (:class:`~anonbandits.channels.FeedbackChannel`). Algorithm 1 sets three options of
the anonymous channel: its batch graph (``batch_graph``: BaSE's batched graph, checked U-batched),
``use_surplus`` (BaSE pools every estimate, over-covered pairs' too, where the other learners keep exactly their
demand) and ``best_effort``. A batch cut by the horizon is played (its regret counts) but gives no update.
``sum_epsilon`` adds DP-SE's ``Lap(1/epsilon)`` to each (learner, arm) batch sum, the noise
:class:`~anonbandits.core.learners.EpochElimination` at that epsilon accounts for (Sajed and Sheffet, ICML 2019).

The drivers return :class:`~anonbandits.results.Result`; ``AnonymousRun``, their result type before, is still
found here for one release, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

import anondecomp
from anonbandits._docstrings import fill
from anonbandits.anonymous._legacy import RegretResult, old_names
from anonbandits.anonymous.batches import (
    DRIVER_RULES,
    HORIZON,
    BatchRecord,
    channel_variance,
    checked_arms,
    run_batches,
)
from anonbandits.channels import ChannelFactory, ChannelOptions, FeedbackChannel, channel_named, check_decomposer
from anonbandits.channels.feedback import ChannelLedger
from anonbandits.core.learners import BatchLearner
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.privacy.mechanisms import CentralLaplace, Mechanism
from anonbandits.results import Result
from anonbandits.validation import (
    BOOL,
    CHANNEL,
    INSTANCE,
    POSITIVE,
    RULES,
    Rule,
    checks,
    optional,
)

__all__ = ["BatchRecord", "batched_regret", "finish_run"]

#: the axes of a regret run's curve
REGRET_AXES = ("round", "cumulative pseudo-regret")

__getattr__ = old_names(__name__, ("AnonymousRun",))


@fill
@checks(
    channel=CHANNEL,
    instance=INSTANCE,
    commit=Rule(callable, "a callable giving each user's committed arm"),
    batches=Rule(
        lambda v: isinstance(v, list | tuple) and all(isinstance(b, BatchRecord) for b in v),
        "a list or tuple of BatchRecord",
    ),
    info=Rule(lambda v: isinstance(v, Mapping), "a mapping of the run's constants"),
)
def finish_run(
    channel: FeedbackChannel,
    instance: MultiUserInstance,
    commit: Callable[[], np.ndarray],
    batches: Sequence[BatchRecord],
    info: dict,
) -> Result:
    """Commit every user to ``commit()`` unless the horizon is reached, play to it, and report the run.

    Parameters
    ----------
    channel : FeedbackChannel
        The run's channel, after its exploration.
    instance : anonbandits.envs.instances.MultiUserInstance
        The run's instance (its optimal arms give ``optimal_fraction``).
    commit : callable
        ``commit() -> numpy.ndarray``: each user's (N,) committed arm, played if the horizon is not reached
        (and otherwise the recommendation that ``optimal_fraction`` scores).
    batches : sequence of BatchRecord
        The per-batch records of the exploration.
    info : dict
        The run constants; ``horizon`` (the rounds played), ``committed`` (each user's committed arm, ``None``
        when the horizon came first), the ``channel``'s name and its privacy ``exposure`` are added.

    Returns
    -------
    Result
        ``metrics``: ``regret`` (summed over users, elicitation included), ``observations``, ``min_group_size``
        (the audit figures), ``exploration_rounds``, ``assignments`` (summed over the batches) and
        ``optimal_fraction`` (the share of all users whose committed arm is optimal, ties included; if the
        horizon came first, whose recommendation is; never NaN); ``curve``: the regret at about 200 rounds;
        ``records``: one mapping per batch (the fields of :class:`BatchRecord`); ``info`` as above.

    Raises
    ------
    ConfigError
        For a ``channel`` that is not a feedback channel of ``instance``, an ``instance`` that is not a
        :class:`~anonbandits.envs.instances.MultiUserInstance`, a ``commit`` that is not callable or gives
        anything but (N,) integer arms in ``0 .. K-1``, ``batches`` that are not a sequence of
        :class:`BatchRecord`, or ``info`` that is not a mapping.

    {{refs_paper000}}
    Theorems 1 and 2.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.channels import AnonymousChannel
    >>> from anonbandits.envs.instances import MultiUserInstance
    >>> instance = MultiUserInstance(np.array([[0.9, 0.1]] * 4))
    >>> channel = AnonymousChannel(instance, 2, 100, np.random.default_rng(0))
    >>> _ = channel.elicit(np.ones(4, dtype=int), np.array([1]))
    >>> run = finish_run(channel, instance, lambda: np.zeros(4, dtype=int), [], {})
    >>> run.info["horizon"], run.metrics["exploration_rounds"], round(run.metrics["regret"], 6)
    (100, 6, 19.2)
    >>> run.metrics["optimal_fraction"], run.info["exposure"]
    (1.0, {})
    """
    books = getattr(channel, "_ledger", None)  # the simulator's books: the result builder alone reads them
    if not isinstance(books, ChannelLedger):
        raise ConfigError(f"channel must be a feedback channel with its books (_ledger), got {_shown(channel)}")
    require(
        books.instance.mu.shape == instance.mu.shape,
        "instance",
        f"the channel's instance ({books.instance.n_users} x {books.instance.n_arms})",
        f"{instance.n_users} x {instance.n_arms}",
    )
    exploration = channel.t
    # scored even when the horizon came first, so the share is over all users and never NaN
    recommended = checked_arms(
        "commit",
        commit(),
        instance,
        f"a callable giving (N,) = ({instance.n_users},) integer arms in 0 .. {instance.n_arms - 1}",
    )
    committed = None if channel.done else recommended
    if committed is not None:
        channel.play(committed)
    best = instance.gaps[np.arange(instance.n_users), recommended] == 0  # a tie for the best counts
    metrics = {
        "regret": books.regret,
        "observations": channel.observations,
        "min_group_size": channel.min_group_size,
        "exploration_rounds": exploration,
        "assignments": sum(b.assignments for b in batches),
        "optimal_fraction": float(best.mean()),
    }
    return RegretResult(
        metrics=metrics,
        curve=books.curve(200),
        records=tuple(dataclasses.asdict(b) for b in batches),
        curve_axes=REGRET_AXES,
        info={
            **info,
            "horizon": channel.t,
            "committed": committed,
            "channel": channel.name,
            "exposure": channel.exposure,
        },
    )


@fill
@checks(
    **DRIVER_RULES,
    horizon=RULES["horizon"],
    sum_epsilon=POSITIVE,
    batch_graph=optional(Rule(callable, "a callable batch_graph(demand, batch)")),
    use_surplus=BOOL,
    best_effort=BOOL,
)
def batched_regret(
    instance: MultiUserInstance,
    learners: BatchLearner,
    horizon: int,
    *,
    channel: str | ChannelFactory = "anonymous",
    C: int = 1,
    decomposer: str = "auto",
    rng: np.random.Generator,
    decomposer_rng: np.random.Generator | None = None,
    mechanism: Mechanism | None = None,
    noise_rng: np.random.Generator | None = None,
    sum_epsilon: float = math.inf,
    batch_graph: Callable[[np.ndarray, int], anondecomp.DemandGraph] | None = None,
    use_surplus: bool = False,
    best_effort: bool = False,
    allow_large: bool = False,
    absence: float = 0.0,
    confidence: float | None = None,
    max_exposure: int | None = None,
) -> Result:
    """Run ``learners`` (one per user of ``instance``) batch by batch for ``horizon`` rounds and charge the regret.

    Parameters
    ----------
    {{driver_learners}}
    horizon : int
        The horizon T, between 1 and 10^9 rounds.
    {{driver_channel}}
    {{driver_mechanism}}
    sum_epsilon : float, optional
        When finite, each (learner, arm) batch sum gets ``Lap(1/sum_epsilon)`` from ``noise_rng`` before the
        update (DP-SE's noise, for learners built with that epsilon). Default ``inf``: none.
    batch_graph : callable, optional
        ``batch_graph(demand, batch) -> anondecomp.DemandGraph``: the graph each batch decomposes on the
        anonymous channel, from its (N, K) demand and number (1-based); it may refuse the batch by raising.
        Default :func:`~anonbandits.anonymous.batches.demand_graph` (every user on its supports). Algorithm 1
        gives BaSE's batched graph ``(D_b, A_{.,b})`` after checking it is U-batched.
    use_surplus : bool, optional
        The learners take every estimate the channel returns, those an over-covering decomposition adds beyond
        a pair's demand too, and pool them over the batches (Algorithm 1's BaSE, as paper 000 runs it); a
        mechanism's noise is then accumulated over the batches and spread over all the pooled estimates.
        Default False: each learner gets exactly its demand, the surplus is discarded and counted.
    best_effort : bool, optional
        Serve what the decomposition can: pairs it leaves uncovered (``anondecomp.decompose(best_effort=True)``,
        counted in the records' ``uncovered``) get fewer estimates than asked, so it needs ``use_surplus``.
        Default False: such a batch is refused.
    allow_large : bool, optional
        Confirm sizes past the documented limits of :mod:`anonbandits.core.limits` (the anonymous channel's
        (2C+2) x N user-rounds of one elicitation). Default False: refused in one line.
    {{driver_absence}}

    Returns
    -------
    Result
        As :func:`finish_run` reports it: the regret (summed over users), its curve, the audit figures
        (``min_group_size`` 1 on the direct channel), a record per batch (:class:`BatchRecord`'s fields); ``info``
        holds ``committed`` (``None`` when the horizon came before every learner stopped), ``samples``,
        ``surplus`` (estimates discarded because a decomposition over-covered a pair), ``sigma2`` (the last
        variance proxy) and ``stopped`` (the share of learners that stopped exploring).

    Raises
    ------
    ConfigError
        For an argument of the wrong type (an ``instance`` that is not a ``MultiUserInstance``, ``learners``
        that are not batch learners, a generator that is not one, a switch that is not a bool), an unknown
        channel or decomposer, a C that is not an integer of at least 1, learners that do not match the instance
        or are sized below the channel's variance proxy, a horizon that is not an integer from 1 to
        ``MAX_HORIZON`` (10^9), a mechanism or an absence on the direct channel, a ``sum_epsilon`` that is not
        positive, ``best_effort`` without ``use_surplus``, an ``absence`` that is not a probability in [0, 1), or a
        ``confidence`` that is not ``None`` or in (0, 1) (or given without an absence).
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, or a decomposer leaves a pair short (not
        ``best_effort``); or whatever ``batch_graph`` raises.

    {{refs_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> from anonbandits.envs import clustered_instance
    >>> instance = clustered_instance(12, 2, 0, 0.4, np.random.default_rng(0))
    >>> learners = EpochElimination(12, 2, confidence=0.01, sigma2=channel_variance("anonymous", 2))
    >>> run = batched_regret(instance, learners, 10**6, C=2, decomposer="polytope", rng=np.random.default_rng(1))
    >>> run.metrics["exploration_rounds"] == run.metrics["assignments"] * (2 * 2 + 2)
    True
    >>> run.metrics["min_group_size"] >= 2, run.metrics["optimal_fraction"], run.info["horizon"]
    (True, 1.0, 1000000)
    """
    factory = channel_named(channel)
    require(
        learners.n_learners == instance.n_users and learners.n_arms == instance.n_arms,
        "learners",
        f"{instance.n_users} x {instance.n_arms} to match the instance",
        f"{learners.n_learners} x {learners.n_arms}",
    )
    check_decomposer(decomposer)
    require(sum_epsilon > 0, "sum_epsilon", "positive (inf: no noise)", sum_epsilon)
    require(
        bool(use_surplus) or not best_effort,
        "best_effort",
        "False unless use_surplus (its learners get fewer samples than asked)",
        best_effort,
    )
    noise_rng = noise_rng if noise_rng is not None else rng
    options = ChannelOptions(
        C=C,
        decomposer=decomposer,
        decomposer_rng=decomposer_rng,
        mechanism=mechanism,
        noise_rng=noise_rng,
        batch_graph=batch_graph,
        use_surplus=use_surplus,
        best_effort=best_effort,
        allow_large=allow_large,
        absence=absence,
        confidence=confidence,
        max_exposure=max_exposure,
    )
    books = factory.open(instance, horizon, rng, options)
    channel_variance(factory, C, learners)
    laplace = CentralLaplace(sum_epsilon) if math.isfinite(sum_epsilon) else None
    loop = run_batches(learners, books, HORIZON, sum_noise=laplace, noise_rng=noise_rng)
    stopped = float(np.mean(~learners.exploring))
    return finish_run(
        books,
        instance,
        learners.recommendation,
        loop.records,
        {"samples": loop.samples, "surplus": loop.surplus, "sigma2": loop.sigma2, "stopped": stopped},
    )
