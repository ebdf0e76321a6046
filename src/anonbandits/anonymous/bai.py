"""Best-arm identification for every user, over the direct or the anonymous channel: one driver for any
batched learner of :mod:`anonbandits.core.learners`.

This is the experiment that tests the thesis of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for
Multi-User Systems* (NeurIPS 2022, paper 000) directly. All users run their learners in lock-step batches; a
batch's demand (the learners' :meth:`~anonbandits.core.learners.BatchLearner.demand`) is served

* on the **direct** channel by exact reward sums (no anonymity; ``min_group_size`` 1); the batch lasts the
  largest number of samples one user takes in it (one pull per round);
* on the **anonymous** channel by a demand graph decomposed with ``anondecomp.decompose`` (the learners'
  demands, each user's support apart from its demand), the 2C+2-round sub-algorithm on every assignment, the
  auditor (no group below C), and estimates with the variance proxy ``(4C+1)/4`` (raised by a privacy
  mechanism's noise, :func:`~anonbandits.anonymous.batches.noisy_variance`): the batch lasts
  ``R_b (2C+2)`` rounds, so the rounds spent until the last user stops are ``sum_b R_b (2C+2)`` and a
  shorter decomposition means fewer rounds.

The anonymous step is :mod:`anonbandits.anonymous.batches`, shared with the regret driver
:func:`~anonbandits.anonymous.batched_regret`. **[DECISION]** Supports: a user still exploring may be assigned
to any arm (it discards what it did not ask for); a user that has stopped plays only its recommendation, filling
groups there so nobody else drops below C+1. An arm that cannot gather C+1 users is refused in one line naming
it and the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import anondecomp
from anonbandits._docstrings import fill
from anonbandits.anonymous.batches import (
    MAX_ELICITED,
    channel_variance,
    decompose_demand,
    elicit_demand,
    noisy_variance,
)
from anonbandits.channel_flags import CHANNELS
from anonbandits.channels import AnonymousChannel, DirectChannel, elicitation_rounds
from anonbandits.channels.anonymous import MAX_HORIZON
from anonbandits.core.learners import BatchLearner
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import ConfigError, require
from anonbandits.privacy.mechanisms import Mechanism


@fill
@dataclass(frozen=True, eq=False)
class IdentificationRun:
    """What :func:`identify` reports.

    Parameters
    ----------
    rounds : int
        Rounds until the last learner stopped (or the cap ``max_rounds``).
    stopped_at : numpy.ndarray
        (N,) int64, the round at which each learner stopped (-1: still exploring at the cap).
    recommendation : numpy.ndarray
        (N,) each learner's recommended arm.
    samples : int
        Informative samples the learners used, in all.
    surplus : int
        Informative samples discarded because a decomposition over-covered a pair.
    batches : int
        Batches run.
    assignments : int
        Assignments R of the batches' decompositions, summed (0 on the direct channel).
    min_group_size : int or None
        The smallest group whose sum was released (1 on the direct channel; None if none was).
    exposure : dict, optional
        The channel's privacy exposure (:func:`~anonbandits.privacy.mechanisms.guarantee`); empty without a
        mechanism. Default ``{}``.

    {{refs_paper000}}

    {{bai_example}}
    >>> instance = MultiUserInstance(mu=np.array([[0.9, 0.1], [0.1, 0.9]]))
    >>> learners = BestArmElimination(2, 2, "naive", approx=0.5, delta=0.1, rng=np.random.default_rng(0))
    >>> run = identify(instance, learners, channel="direct", rng=np.random.default_rng(1))
    >>> run.recommendation.tolist(), run.error_rate(instance, 0.5)
    ([0, 1], 0.0)
    """

    rounds: int
    stopped_at: np.ndarray
    recommendation: np.ndarray
    samples: int
    surplus: int
    batches: int
    assignments: int
    min_group_size: int | None
    exposure: dict = field(default_factory=dict)

    def error_rate(self, instance: MultiUserInstance, approx: float) -> float:
        """Share of users whose recommendation is not ``approx``-optimal for them.

        Parameters
        ----------
        instance : MultiUserInstance
            The instance the run was on.
        approx : float
            The tolerance: a recommendation within ``approx`` of the user's best mean is correct.

        Returns
        -------
        float
            The share of wrong recommendations, in [0, 1].

        Examples
        --------
        >>> import numpy as np
        >>> instance = MultiUserInstance(np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.45]]))
        >>> run = IdentificationRun(10, np.array([5, 5, 5]), np.array([0, 0, 1]), 30, 0, 1, 0, 1)
        >>> round(run.error_rate(instance, 0.1), 3), round(run.error_rate(instance, 0.01), 3)
        (0.333, 0.667)
        """
        gap = instance.gaps[np.arange(instance.n_users), self.recommendation]
        return float(np.mean(gap > approx))


@fill
def identify(instance: MultiUserInstance, learners: BatchLearner, *, channel: str = "anonymous", C: int = 1,
             decomposer: str = "auto", rng: np.random.Generator,
             decomposer_rng: np.random.Generator | None = None, max_rounds: int = MAX_HORIZON,
             mechanism: Mechanism | None = None, noise_rng: np.random.Generator | None = None) -> IdentificationRun:
    """Run ``learners`` (one per user of ``instance``) batch by batch until every one has stopped.

    Parameters
    ----------
    {{driver_learners}}
    {{driver_channel}}
    max_rounds : int, optional
        A cap on the rounds; learners still exploring then keep their current recommendation.
    {{driver_mechanism}}

    Returns
    -------
    IdentificationRun
        Rounds, samples, surplus, recommendations and the smallest released group.

    Raises
    ------
    ConfigError
        For an unknown channel or decomposer, learners that do not match the instance or are sized below the
        channel's variance proxy, or a mechanism on the direct channel.
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
    >>> run.rounds == run.assignments * (2 * 2 + 2), run.min_group_size >= 2, run.error_rate(instance, 0.3)
    (True, True, 0.0)
    """
    require(channel in CHANNELS, "channel", f"one of {', '.join(CHANNELS)}", channel)
    require(learners.n_learners == instance.n_users and learners.n_arms == instance.n_arms, "learners",
            f"{instance.n_users} x {instance.n_arms} to match the instance",
            f"{learners.n_learners} x {learners.n_arms}")
    require(decomposer in anondecomp.METHODS, "decomposer", f"one of {', '.join(anondecomp.METHODS)}", decomposer)
    if mechanism is not None and channel == "direct":
        raise ConfigError("a privacy mechanism acts on released group sums: it needs the anonymous channel")
    n = instance.n_users
    stopped_at = np.full(n, -1, dtype=np.int64)
    stopped_at[~learners.exploring] = 0
    samples = surplus = batches = assignments = rounds = 0
    sigma2 = base_sigma2 = channel_variance(channel, C, learners)
    if channel == "direct":
        source = DirectChannel(instance.mu, instance.model, rng, sigma=instance.sigma)
        min_group = 1
    else:
        anon = AnonymousChannel(instance, C, max_rounds, rng, mechanism=mechanism, noise_rng=noise_rng)
    dec_rng = decomposer_rng if decomposer_rng is not None else rng
    while learners.exploring.any():
        demand = learners.demand()
        if channel == "direct":
            longest = int(demand.sum(axis=1).max())  # users pull in parallel, one sample per round
            if rounds + longest > max_rounds:
                break
            sums, counts = source.sums(instance.mu, demand), demand
            rounds += longest
        else:
            res = decompose_demand(learners, demand, C, decomposer, dec_rng, batches + 1, max_elicited=MAX_ELICITED)
            if anon.t + res.total_assignments * elicitation_rounds(C) > max_rounds:
                break
            fb, _ = elicit_demand(anon, res, demand, batches + 1)
            sums, counts = fb.sums, fb.counts
            surplus += int(fb.surplus.sum())
            assignments += res.total_assignments
            if fb.noise is not None:
                sigma2 = max(sigma2, noisy_variance(base_sigma2, fb.noise, counts, counts > 0))
            rounds = anon.t
        was = learners.exploring.copy()
        learners.update(sums, counts, sigma2)
        samples += int(counts.sum())
        batches += 1
        stopped_at[was & ~learners.exploring] = rounds
    exposure = {}
    if channel == "anonymous":
        min_group, exposure = anon.min_group_size, anon.exposure
    return IdentificationRun(rounds=rounds, stopped_at=stopped_at, recommendation=learners.recommendation(),
                             samples=samples, surplus=surplus, batches=batches, assignments=assignments,
                             min_group_size=min_group, exposure=exposure)


@fill
def stop_curve(run: IdentificationRun) -> tuple[np.ndarray, np.ndarray]:
    """The stop curve of a run: users still exploring against rounds.

    Parameters
    ----------
    run : IdentificationRun
        A run of :func:`identify`.

    Returns
    -------
    tuple of numpy.ndarray
        ``(rounds, users still exploring)`` at round 0, at every round where a learner stopped, and at the end.

    {{refs_paper000}}

    Examples
    --------
    >>> run = IdentificationRun(rounds=30, stopped_at=np.array([10, 30]), recommendation=np.zeros(2, int),
    ...                         samples=0, surplus=0, batches=2, assignments=0, min_group_size=1)
    >>> [v.tolist() for v in stop_curve(run)]
    [[0, 10, 30, 30], [2.0, 1.0, 0.0, 0.0]]
    """
    done = np.sort(run.stopped_at[run.stopped_at >= 0])
    x = np.concatenate(([0], done, [max(run.rounds, int(done.max(initial=0)))]))
    left = run.stopped_at.size - np.concatenate(([0], np.arange(1, done.size + 1), [done.size]))
    return x, left.astype(float)
