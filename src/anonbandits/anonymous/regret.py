"""Regret of N batched learners over a horizon, on the direct or the anonymous channel: one driver for any
learner of :mod:`anonbandits.core.learners` (SE and DP-SE with doubling epochs need no horizon).

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

A batch cut by the horizon is played (its regret counts) but gives no update. ``sum_epsilon`` adds DP-SE's
``Lap(1/epsilon)`` to each (learner, arm) batch sum, the noise :class:`~anonbandits.core.learners.EpochElimination`
at that epsilon accounts for (Sajed and Sheffet, ICML 2019).
"""

from __future__ import annotations

import math

import numpy as np

import anondecomp
from anonbandits._docstrings import fill
from anonbandits.anonymous.algorithm1 import AnonymousRun, BatchRecord
from anonbandits.anonymous.bai import CHANNELS
from anonbandits.anonymous.batches import channel_variance, decompose_demand, elicit_demand, noisy_variance
from anonbandits.channels import AnonymousChannel, CentralLaplace, DirectChannel
from anonbandits.channels.mechanisms import Mechanism
from anonbandits.core.learners import BatchLearner
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError, require


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
                   noise_rng: np.random.Generator | None = None, sum_epsilon: float = math.inf) -> AnonymousRun:
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
        channel's variance proxy, a horizon out of range, a mechanism on the direct channel or a ``sum_epsilon``
        that is not positive.
    AnonBanditsError
        When an arm some learner wants cannot gather C + 1 users, or a decomposer leaves a pair short.

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
    while learners.exploring.any() and not books.done:
        demand = learners.demand()
        t0, batch, wanted = books.t, len(records) + 1, demand > 0
        if not wanted.any():  # a batch nobody samples (an empty step of a learner's schedule)
            learners.update(np.zeros((n, k)), demand, sigma2)
            continue
        if channel == "direct":
            sums = books.pull(demand, learners.recommendation())
            assignments = distinct = 0
            method = "direct"
        else:
            res = decompose_demand(learners, demand, C, decomposer, dec_rng, batch)
            fb, complete = elicit_demand(books, res, demand, batch)
            sums = fb.sums if complete else None
            surplus += int(fb.surplus.sum())
            if complete and fb.noise is not None:
                sigma2 = max(sigma2, noisy_variance(base_sigma2, fb.noise, fb.counts, wanted))
            assignments, distinct, method = res.total_assignments, res.n_distinct, res.method
        eliminated = 0
        if sums is not None:
            if laplace is not None:
                sums = sums + np.where(wanted, laplace.noise(noise_rng, (n, k)), 0.0)
            eliminated = int(learners.update(sums, demand, sigma2).sum())
            samples += int(demand.sum())
        records.append(BatchRecord(demand=int(demand.sum(axis=1).max()), assignments=assignments,
                                   distinct=distinct, method=method, uncovered=0, rounds=books.t - t0,
                                   eliminated=eliminated, active_pairs=int(wanted.sum())))
    stopped = float(np.mean(~learners.exploring))
    return AnonymousRun.finish(books, instance, learners.recommendation, records,
                               {"samples": samples, "surplus": surplus, "sigma2": sigma2, "stopped": stopped})
