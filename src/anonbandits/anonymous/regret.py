"""Regret of N batched learners over a horizon, on the direct or the anonymous channel: one driver for any
learner of :mod:`anonbandits.core.learners` (SE and DP-SE with doubling epochs need no horizon; Algorithm 1's
BaSE, :func:`~anonbandits.anonymous.anon_batched`, runs on it too).

Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems* (NeurIPS 2022, paper 000): every
user runs its own learner, all in lock-step batches, and :func:`batched_regret` charges the pseudo-regret of
every round, summed over users, until the horizon T.

* **anonymous**: each batch runs the step of :mod:`anonbandits.anonymous.batches` (the demand graph with each
  user's support apart from its demand, ``anondecomp.decompose``, the 2C+2-round sub-algorithm, the auditor)
  and the learners update with the variance proxy ``(4C+1)/4``, raised by a privacy mechanism's noise. A batch
  lasts ``R_b (2C+2)`` rounds; users who stopped (or want nothing this batch) play their recommendation and fill
  groups; once every learner has stopped, each plays its commitment to the horizon.
* **direct**: no anonymity (``min_group_size`` 1); in a batch each user takes its samples arm by arm (one a
  round), then plays its recommendation until the batch's longest user is done; exact reward sums, variance
  proxy 1/4.

Algorithm 1 sets three options of the one loop: its batch graph (``batch_graph``: BaSE's batched graph, checked
U-batched), ``use_surplus`` (BaSE pools every estimate, over-covered pairs' too, where the other learners keep
exactly their demand) and ``best_effort``. A batch cut by the horizon is played (its regret counts) but gives
no update. ``sum_epsilon`` adds DP-SE's
``Lap(1/epsilon)`` to each (learner, arm) batch sum, the noise :class:`~anonbandits.core.learners.EpochElimination`
at that epsilon accounts for (Sajed and Sheffet, ICML 2019).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import anondecomp
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.anonymous.bai import CHANNELS
from anonbandits.anonymous.batches import (
    channel_variance,
    decompose_demand,
    demand_graph,
    elicit_demand,
    noisy_variance,
)
from anonbandits.channels import AnonymousChannel, CentralLaplace, DirectChannel
from anonbandits.core.learners import BatchLearner
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError, require
from anonbandits.privacy.mechanisms import Mechanism


@dataclass(frozen=True)
class BatchRecord:
    """One exploration batch of :func:`batched_regret` (Algorithm 1, SE) or the exploration phase of Algorithm 2.

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
        The decomposition method that ran (``"etc"`` for Algorithm 2, ``"direct"`` on the direct channel).
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
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Sections 3.3 and 3.5).

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


@filled_dataclass(frozen=True, eq=False)
class AnonymousRun:
    """What a regret run over a channel reports: :func:`batched_regret` (Algorithm 1, SE, DP-SE) and Algorithm 2.

    Parameters
    ----------
    regret : float
        The final pseudo-regret, summed over users and rounds (elicitation included).
    curve : tuple of numpy.ndarray
        ``(rounds, cumulative regret)`` at about 200 evenly spaced rounds.
    observations : int
        The aggregate observations the auditor served.
    min_group_size : int or None
        The smallest group the auditor served (``None`` if none).
    horizon : int
        The rounds played.
    exploration_rounds : int
        The rounds spent eliciting feedback.
    committed : numpy.ndarray or None
        (N,) each user's committed arm (``None`` if the horizon came first).
    optimal_fraction : float
        The share of all users whose committed arm is optimal (of largest mean, ties included); if the horizon
        came first, of those whose recommendation (the arm they would commit to) is. Never NaN.
    batches : tuple of BatchRecord, optional
        The per-batch records. Default ``()``.
    info : dict, optional
        The run constants (:func:`batched_regret`: ``samples``, ``surplus``, ``sigma2``, ``stopped``; Algorithm 1
        in their place: ``alpha``, ``base_horizon``, ``grid``, ``batches``, ``thin_arm_users``; Algorithm 2:
        ``exploration_target``, ``phases``); ``info["exposure"]`` is the channel's privacy exposure (empty
        without a mechanism). Default ``{}``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Theorems 1 and 2).

    {{anon_example}}
    >>> run = anon_batched(instance, 1, 2000, U=4, rng=np.random.default_rng(1))
    >>> run.horizon, run.exploration_rounds, run.min_group_size, run.optimal_fraction
    (2000, 248, 1, 1.0)
    >>> int(run.curve[0][-1]), run.info["grid"]
    (2000, [0, 62, 500])
    """

    regret: float
    curve: tuple[np.ndarray, np.ndarray]
    observations: int
    min_group_size: int | None
    horizon: int
    exploration_rounds: int
    committed: np.ndarray | None
    optimal_fraction: float
    batches: tuple[BatchRecord, ...] = ()
    info: dict = field(default_factory=dict)

    @classmethod
    def finish(cls, channel: AnonymousChannel, instance: MultiUserInstance, commit: Callable[[], np.ndarray],
               batches: Sequence[BatchRecord], info: dict) -> AnonymousRun:
        """Commit every user to ``commit()`` unless the horizon is reached, play to it, and report the run.

        Parameters
        ----------
        channel : anonbandits.channels.AnonymousChannel
            The run's channel, after its exploration.
        instance : anonbandits.envs.instances.MultiUserInstance
            The run's instance (its optimal arms give ``optimal_fraction``).
        commit : callable
            ``commit() -> numpy.ndarray``: each user's (N,) committed arm, played if the horizon is not reached
            (and otherwise the recommendation that ``optimal_fraction`` scores).
        batches : sequence of BatchRecord
            The per-batch records of the exploration.
        info : dict
            The run constants; the channel's ``exposure`` is added under ``"exposure"``.

        Returns
        -------
        AnonymousRun
            The report of the run, its regret curve at about 200 points.

        Examples
        --------
        >>> import numpy as np
        >>> from anonbandits.channels import AnonymousChannel
        >>> from anonbandits.envs.instances import MultiUserInstance
        >>> instance = MultiUserInstance(np.array([[0.9, 0.1]] * 4))
        >>> channel = AnonymousChannel(instance, 2, 100, np.random.default_rng(0))
        >>> _ = channel.elicit(np.ones(4, dtype=int), np.array([1]))
        >>> run = AnonymousRun.finish(channel, instance, lambda: np.zeros(4, dtype=int), [], {})
        >>> run.horizon, run.exploration_rounds, round(run.regret, 6), run.optimal_fraction, run.info
        (100, 6, 19.2, 1.0, {'exposure': {}})
        """
        exploration = channel.t
        # scored even when the horizon came first, so the share is over all users and never NaN
        recommended = np.asarray(commit())
        committed = None if channel.done else recommended
        if committed is not None:
            channel.play(committed)
        best = instance.gaps[np.arange(instance.n_users), recommended] == 0  # a tie for the best counts
        return cls(regret=channel.regret, curve=channel.regret_curve(200), observations=channel.observations,
                   min_group_size=channel.min_group_size, horizon=channel.t, exploration_rounds=exploration,
                   committed=committed, optimal_fraction=float(best.mean()),
                   batches=tuple(batches), info={**info, "exposure": channel.exposure})


def _direct_segments(demand: np.ndarray, gaps: np.ndarray, fill_gap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, rates) of the stretches of constant per-round regret of one direct batch: user i plays arm 0
    ``demand[i, 0]`` rounds, then arm 1, ..., then its recommendation (regret ``fill_gap[i]``) to the batch's end."""
    ends = np.cumsum(demand, axis=1)
    last = ends[:, -1]
    pos = np.concatenate([(ends - demand).ravel(), ends.ravel(), last, np.full(last.size, last.max())])
    change = np.concatenate([gaps.ravel(), -gaps.ravel(), fill_gap, -fill_gap])
    bounds, at = np.unique(pos, return_inverse=True)
    rates = np.cumsum(np.bincount(at, weights=change, minlength=bounds.size))[:-1]
    return np.diff(bounds), rates


class _DirectBooks(AnonymousChannel):
    """The direct channel on :class:`~anonbandits.channels.AnonymousChannel`'s clock and regret books (what
    :meth:`AnonymousRun.finish` reads): no group is ever released, each user sees its own rewards' exact sums."""

    def __init__(self, instance: MultiUserInstance, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(instance, 1, horizon, rng)
        self._source = DirectChannel(instance.mu, instance.model, rng, sigma=instance.sigma)
        self._samples = 0

    @property
    def observations(self) -> int:
        return self._samples

    @property
    def min_group_size(self) -> int:
        return 1  # every reward is seen by its own user alone

    def pull(self, demand: np.ndarray, recommendation: np.ndarray) -> np.ndarray | None:
        """Play one batch (cut at the horizon) and return its reward sums, or None when it was cut."""
        users = np.arange(demand.shape[0])
        lengths, rates = _direct_segments(demand, self._instance.gaps, self._instance.gaps[users, recommendation])
        room = self.horizon - self.t
        before = np.cumsum(lengths) - lengths
        self._trace.charge(np.clip(room - before, 0, lengths), rates)
        if lengths.sum() > room:
            return None
        self._samples += int(demand.sum())
        return self._source.sums(self._instance.mu, demand)


@fill
def batched_regret(instance: MultiUserInstance, learners: BatchLearner, horizon: int, *,
                   channel: str = "anonymous", C: int = 1, decomposer: str = "auto", rng: np.random.Generator,
                   decomposer_rng: np.random.Generator | None = None, mechanism: Mechanism | None = None,
                   noise_rng: np.random.Generator | None = None, sum_epsilon: float = math.inf,
                   batch_graph: Callable[[np.ndarray, int], anondecomp.DemandGraph] | None = None,
                   use_surplus: bool = False, best_effort: bool = False) -> AnonymousRun:
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

    Returns
    -------
    AnonymousRun
        The regret (summed over users), its curve, the audit figures (``min_group_size`` 1 on the direct
        channel), the commitments (``None`` when the horizon came before every learner stopped) and a
        :class:`~anonbandits.anonymous.BatchRecord` per batch; ``info`` holds ``samples``, ``surplus`` (estimates
        discarded because a decomposition over-covered a pair), ``sigma2`` (the last variance proxy) and
        ``stopped`` (the share of learners that stopped exploring).

    Raises
    ------
    ConfigError
        For an unknown channel or decomposer, learners that do not match the instance or are sized below the
        channel's variance proxy, a horizon out of range, a mechanism on the direct channel, a ``sum_epsilon``
        that is not positive, or ``best_effort`` without ``use_surplus``.
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
    >>> run.exploration_rounds == sum(b.assignments for b in run.batches) * (2 * 2 + 2)
    True
    >>> run.min_group_size >= 2, run.optimal_fraction, run.horizon
    (True, 1.0, 1000000)
    """
    require(channel in CHANNELS, "channel", f"one of {', '.join(CHANNELS)}", channel)
    require(learners.n_learners == instance.n_users and learners.n_arms == instance.n_arms, "learners",
            f"{instance.n_users} x {instance.n_arms} to match the instance",
            f"{learners.n_learners} x {learners.n_arms}")
    require(decomposer in anondecomp.METHODS, "decomposer", f"one of {', '.join(anondecomp.METHODS)}", decomposer)
    require(sum_epsilon > 0, "sum_epsilon", "positive (inf: no noise)", sum_epsilon)
    require(use_surplus or not best_effort, "best_effort", "False unless use_surplus (its learners get fewer "
            "samples than asked)", best_effort)
    if mechanism is not None and channel == "direct":
        raise ConfigError("a privacy mechanism acts on released group sums: it needs the anonymous channel")
    n, k = instance.n_users, instance.n_arms
    noise_rng = noise_rng if noise_rng is not None else rng
    dec_rng = decomposer_rng if decomposer_rng is not None else rng
    laplace = CentralLaplace(sum_epsilon) if math.isfinite(sum_epsilon) else None
    sigma2 = base_sigma2 = channel_variance(channel, C, learners)
    if channel == "direct":
        books = _DirectBooks(instance, horizon, rng)
    else:
        books = AnonymousChannel(instance, C, horizon, rng, mechanism=mechanism, noise_rng=noise_rng)
    records: list[BatchRecord] = []
    samples = surplus = 0
    noise, pooled = np.zeros((n, k)), np.zeros((n, k), np.int64)  # with use_surplus: over all batches so far
    while learners.exploring.any() and not books.done:
        demand = learners.demand()
        t0, batch, wanted = books.t, len(records) + 1, demand > 0
        if not wanted.any():  # a batch nobody samples (an empty step of a learner's schedule)
            learners.update(np.zeros((n, k)), demand, sigma2)
            continue
        counts, uncovered = demand, 0
        if channel == "direct":
            sums = books.pull(demand, learners.recommendation())
            assignments = distinct = 0
            method, size = "direct", int(demand.sum(axis=1).max())
        else:
            graph = (demand_graph(learners, demand, C, batch, best_effort=best_effort) if batch_graph is None
                     else batch_graph(demand, batch))
            res = decompose_demand(learners, demand, C, decomposer, dec_rng, batch, graph=graph,
                                   best_effort=best_effort)
            fb, complete = elicit_demand(books, res, demand, batch, use_surplus=use_surplus, best_effort=best_effort)
            sums = fb.sums if complete else None
            counts = fb.counts if use_surplus else demand
            surplus += 0 if fb.surplus is None else int(fb.surplus.sum())
            if complete and fb.noise is not None:
                # pooled estimates carry the noise of every batch so far, the others this batch's alone
                noise, pooled = (noise + fb.noise, pooled + fb.counts) if use_surplus else (fb.noise, fb.counts)
                raised = noisy_variance(base_sigma2, noise, pooled, wanted)
                sigma2 = raised if use_surplus else max(sigma2, raised)
            assignments, distinct, method = res.total_assignments, res.n_distinct, res.method
            size, uncovered = int(graph.demand or graph.lower_bound), len(res.uncovered)
        eliminated = 0
        if sums is not None:
            if laplace is not None:
                sums = sums + np.where(wanted, laplace.noise(noise_rng, (n, k)), 0.0)
            eliminated = int(learners.update(sums, counts, sigma2).sum())
            samples += int(counts.sum())
        records.append(BatchRecord(demand=size, assignments=assignments, distinct=distinct, method=method,
                                   uncovered=uncovered, rounds=books.t - t0, eliminated=eliminated,
                                   active_pairs=int(wanted.sum())))
    stopped = float(np.mean(~learners.exploring))
    return AnonymousRun.finish(books, instance, learners.recommendation, records,
                               {"samples": samples, "surplus": surplus, "sigma2": sigma2, "stopped": stopped})
