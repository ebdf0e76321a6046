"""One batch of batched learners over the anonymous channel: the step every anonymous driver runs.

Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000). A
batch's demand (the learners' :meth:`~anonbandits.core.learners.BatchLearner.demand`) becomes a demand graph
whose supports are kept apart from the demand (:func:`supports`, :func:`demand_graph`), ``anondecomp.decompose``
splits it into C-anonymous assignments (:func:`decompose_demand`), the channel runs the 2C+2-round sub-algorithm
on them, the auditor checks every released group, and each learner keeps exactly the estimates it asked for
(:func:`elicit_demand`; Algorithm 1's BaSE keeps them all); a privacy mechanism's noise raises the variance proxy
(:func:`noisy_variance`).
:func:`~anonbandits.anonymous.identify` (best-arm identification) and
:func:`~anonbandits.anonymous.batched_regret` (regret over a horizon) both run it.
"""

from __future__ import annotations

import numpy as np

import anondecomp
from anonbandits._docstrings import fill
from anonbandits.channels import AnonymousChannel, Feedback, elicitation_rounds, elicitation_variance
from anonbandits.core.learners import UNIT_SIGMA2, BatchLearner
from anonbandits.errors import AnonBanditsError, ConfigError

#: Distinct user-assignments (distinct assignments x users) one identification batch may elicit. Keeping each
#: pair's demanded estimates and the 2C+2 rounds' group sums holds about 100 bytes per entry (measured: 3 x 10^7
#: entries took 3 GB), so this keeps a batch near 1 GB; only decompositions without multiplicities (randomized,
#: on many arms) come near it.
MAX_ELICITED = 10**7


@fill
def channel_variance(channel: str, C: int, learners: BatchLearner | None = None) -> float:
    """The variance proxy of one sample on ``channel``, checked against the one ``learners`` are sized for.

    1/4 (a reward in [0, 1]) on the direct channel, ``(4C+1)/4`` on the anonymous one
    (:func:`~anonbandits.channels.elicitation_variance`). Fixed-design learners (naive and median elimination,
    SE's epochs) fix their sample counts from their ``sigma2`` before any sample, so learners sized for less
    than the channel's proxy would lose their guarantee: they are refused.

    Parameters
    ----------
    channel : str
        ``direct`` or ``anonymous``.
    C : int
        The anonymity parameter (anonymous channel).
    learners : BatchLearner, optional
        N batched learners to check (none: the proxy alone, to size learners with).

    Returns
    -------
    float
        The channel's variance proxy.

    Raises
    ------
    ConfigError
        If ``learners.sigma2`` is below it.

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
    sigma2 = UNIT_SIGMA2 if channel == "direct" else elicitation_variance(C)
    if learners is not None and learners.sigma2 < sigma2:
        raise ConfigError(f"the learners are sized for variance proxy {learners.sigma2:g}, below the {channel} "
                          f"channel's {sigma2:g}; build them with sigma2={sigma2:g}")
    return sigma2


@fill
def supports(learners: BatchLearner) -> np.ndarray:
    """The arms each user may be assigned: every arm while it explores, its recommendation alone once stopped.

    **[DECISION]** A user still exploring may fill a group on any arm (it discards what it did not ask for); a
    user that has stopped plays only its recommendation, so nobody else drops below C+1 on that arm.

    Parameters
    ----------
    learners : BatchLearner
        N batched learners.

    Returns
    -------
    numpy.ndarray
        (N, K) bool support.

    {{refs_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import BestArmElimination
    >>> learners = BestArmElimination(2, 3, "naive", approx=0.5, delta=0.1, rng=np.random.default_rng(0))
    >>> supports(learners).tolist()  # before any sample: every arm
    [[True, True, True], [True, True, True]]
    >>> wanted = learners.demand()
    >>> _ = learners.update(wanted * np.array([0.1, 0.9, 0.2]), wanted, 0.25)
    >>> supports(learners).tolist()  # stopped: the recommendation alone
    [[False, True, False], [False, True, False]]
    """
    n, k = learners.n_learners, learners.n_arms
    support = np.repeat(learners.exploring[:, None], k, axis=1)
    support[np.arange(n), learners.recommendation()] = True
    return support


@fill
def demand_graph(learners: BatchLearner, demand: np.ndarray, C: int, batch: int, *,
                 best_effort: bool = False) -> anondecomp.DemandGraph:
    """One batch's demand graph, every user on its :func:`supports`.

    **[DECISION]** When an arm some learner wants cannot gather C + 1 users on those supports (too few explore,
    too few have stopped on it), users that have stopped are recruited onto it as well: they fill its groups
    for this batch (their identification is done; in a regret run they pay the arm's gap like any play). Only
    when the arm cannot gather C + 1 users in all is the batch refused.

    Parameters
    ----------
    learners : BatchLearner
        The N learners whose ``demand`` this is (their supports and recommendations).
    demand : numpy.ndarray
        (N, K) int64 samples wanted; a row of zeros is a user that only fills groups.
    C : int
        The anonymity parameter.
    batch : int
        The batch's number (1-based), for the error message.
    best_effort : bool, optional
        Keep an arm that cannot gather C + 1 users (the decomposer leaves its pairs uncovered) instead of
        refusing the batch. Default False.

    Returns
    -------
    anondecomp.DemandGraph
        The graph, ``w_ij`` the demand, each user's support apart from it.

    Raises
    ------
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, stopped users included (not ``best_effort``).

    {{refs_paper000}}
    Section 3.2: the demand graph.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> learners = EpochElimination(6, 2, confidence=0.1)
    >>> graph = demand_graph(learners, learners.demand(), 2, 1)
    >>> graph.lower_bound, bool(graph.support.all())
    (1300, True)
    """
    support = supports(learners)
    graph = anondecomp.DemandGraph.from_weights(demand, support=support)
    thin = graph.thin_arms(C)
    if thin.size:  # recruit stopped users onto the arms that cannot gather C + 1 users otherwise
        support[:, thin] = True
        graph = anondecomp.DemandGraph.from_weights(demand, support=support)
        thin = graph.thin_arms(C)
    if thin.size and not best_effort:
        raise AnonBanditsError(f"batch {batch}: arm {int(thin[0])} is wanted but fewer than C + 1 = {C + 1} users "
                               "can play it; the instance needs more users per arm")
    return graph


@fill
def decompose_demand(learners: BatchLearner, demand: np.ndarray, C: int, decomposer: str,
                     rng: np.random.Generator, batch: int, *, max_elicited: int | None = None,
                     graph: anondecomp.DemandGraph | None = None,
                     best_effort: bool = False) -> anondecomp.Decomposition:
    """The C-anonymous decomposition of one batch's demand graph (by default :func:`demand_graph`'s).

    Parameters
    ----------
    learners : BatchLearner
        The N learners of the batch (:func:`demand_graph` reads their supports).
    demand : numpy.ndarray
        (N, K) int64 samples wanted, as for :func:`demand_graph`.
    C : int
        The anonymity parameter: every group of an assignment has at least C + 1 users.
    decomposer : str
        An ``anondecomp.METHODS`` name.
    rng : numpy.random.Generator
        Randomness of randomized decomposers.
    batch : int
        The batch's number (1-based), for the error messages.
    max_elicited : int, optional
        A bound on the distinct user-assignments (distinct assignments x users) the batch may elicit
        (:data:`MAX_ELICITED` for identification); none by default.
    graph : anondecomp.DemandGraph, optional
        The batch's graph when the caller builds it (Algorithm 1: BaSE's batched graph ``(D_b, A_{.,b})``);
        default :func:`demand_graph`.
    best_effort : bool, optional
        Cover what can be covered and list the rest in the result's ``uncovered``
        (``anondecomp.decompose(best_effort=True)``) instead of refusing the batch. Default False.

    Returns
    -------
    anondecomp.Decomposition
        The assignments and their multiplicities.

    Raises
    ------
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, stopped users included (not ``best_effort``);
        or when the batch's decomposition has more distinct user-assignments than ``max_elicited`` (for
        ``randomized``, refused before drawing when the decomposer's own estimate of its assignments already
        passes it).

    {{refs_paper000}}
    Section 3.2: the decomposition.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import EpochElimination
    >>> learners = EpochElimination(6, 2, confidence=0.1)
    >>> learners.demand()[0].tolist()
    [650, 650]
    >>> res = decompose_demand(learners, learners.demand(), 2, "polytope", np.random.default_rng(0), 1)
    >>> res.total_assignments  # R = D: each user's 1300 samples, no assignment wasted
    1300
    """
    if graph is None:
        graph = demand_graph(learners, demand, C, batch, best_effort=best_effort)
    n = learners.n_learners
    if max_elicited is not None and decomposer == "randomized":
        # the decomposer's own estimate of the assignments it draws (each distinct, of every user), checked
        # before it draws them: on many arms they run to millions
        from anondecomp.methods.randomized import expected_assignments

        expected = expected_assignments(graph, demand, C)
        if expected * n > max_elicited:
            raise AnonBanditsError(f"batch {batch}: the randomized decomposition would draw about {expected:.3g} "
                                   f"distinct assignments of {n} users, more than the {max_elicited:.0e} "
                                   "user-assignments a batch elicits; use an exact decomposer")
    # improve=False: a batch needs its decomposition fast, not auto's last rounds removed (and the runs keep
    # the decompositions of the reproduction tables)
    res = anondecomp.decompose(graph, C, method=decomposer, rng=rng, best_effort=best_effort, improve=False)
    if max_elicited is not None and len(res.multiplicities) * n > max_elicited:
        raise AnonBanditsError(f"batch {batch}: the {decomposer} decomposition has {len(res.multiplicities)} "
                               f"distinct assignments of {n} users, more than the {max_elicited:.0e} "
                               "user-assignments a batch elicits")
    return res


@fill
def elicit_demand(channel: AnonymousChannel, res: anondecomp.Decomposition, demand: np.ndarray,
                  batch: int, *, use_surplus: bool = False, best_effort: bool = False) -> tuple[Feedback, bool]:
    """Run a batch's decomposition through the channel, each pair keeping exactly its demanded estimates (or all).

    Parameters
    ----------
    channel : anonbandits.channels.AnonymousChannel
        The run's channel (its clock may cut the batch at the horizon).
    res : anondecomp.Decomposition
        The batch's decomposition (:func:`decompose_demand`).
    demand : numpy.ndarray
        (N, K) int64 samples wanted.
    batch : int
        The batch's number (1-based), for the error message.
    use_surplus : bool, optional
        Keep every estimate, those beyond a pair's demand too (Algorithm 1's BaSE uses them all; the feedback
        then has no ``surplus``). Default False.
    best_effort : bool, optional
        Accept pairs left below their demand (a best-effort decomposition's uncovered pairs). Default False.

    Returns
    -------
    feedback : anonbandits.channels.Feedback
        Sums and counts of the kept estimates, the discarded ``surplus`` and, with a mechanism, the noise
        variances.
    complete : bool
        Whether every repetition ran (False when the horizon cut the batch: the feedback is then partial).

    Raises
    ------
    AnonBanditsError
        When a complete batch left a pair below its demand (not ``best_effort``).

    {{refs_paper000}}
    Section 3.1: the sub-algorithm.

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.channels import AnonymousChannel
    >>> from anonbandits.core.learners import EpochElimination
    >>> from anonbandits.envs import clustered_instance
    >>> instance = clustered_instance(6, 2, 0, 0.4, np.random.default_rng(0))
    >>> learners = EpochElimination(6, 2, confidence=0.1)
    >>> demand = learners.demand()
    >>> res = decompose_demand(learners, demand, 2, "polytope", np.random.default_rng(1), 1)
    >>> feedback, complete = elicit_demand(AnonymousChannel(instance, 2, 10**6, np.random.default_rng(2)), res,
    ...                                    demand, 1)
    >>> complete, bool((feedback.counts == demand).all())
    (True, True)
    """
    t0 = channel.t
    fb = channel.elicit(res.assignments, res.multiplicities, wanted=None if use_surplus else demand)
    complete = channel.t - t0 == res.total_assignments * elicitation_rounds(channel.C)
    if complete and not best_effort and np.any(fb.counts < demand):
        raise AnonBanditsError(f"decomposer {res.method!r} left pairs below their demand in batch {batch}")
    return fb, complete


def noisy_variance(sigma2: float, noise: np.ndarray, counts: np.ndarray, where: np.ndarray) -> float:
    """The variance proxy of estimates whose sums carry a mechanism's noise: ``sigma2 + max W_ij / n_ij``.

    **[DECISION]** Variance-matched: the noise variance ``W_ij`` of a pair's sum (public: it depends on no
    reward) spread over its ``n_ij`` estimates, the worst pair of ``where``.

    Parameters
    ----------
    sigma2 : float
        The proxy without noise (``(4C+1)/4`` on the anonymous channel).
    noise : numpy.ndarray
        (N, K) noise variance of each pair's sum.
    counts : numpy.ndarray
        (N, K) estimates in each pair's sum.
    where : numpy.ndarray
        (N, K) bool, the pairs whose estimates the learners use.

    Returns
    -------
    float
        The raised proxy (``sigma2`` when ``where`` is empty).

    References
    ----------
    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> noisy_variance(3.25, np.array([[8.0, 2.0]]), np.array([[4, 0]]), np.array([[True, False]]))
    5.25
    """
    return sigma2 + float(np.max(noise / np.maximum(counts, 1), where=where, initial=0.0))
