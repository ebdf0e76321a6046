"""Batched elimination learners: the protocol every elimination scheme speaks to a driver, and its
vectorised implementations for many learners at once.

A *learner* here is one user's (or agent's) elimination algorithm; an object of this module holds N of them as
(N, K) arrays. A driver runs them batch by batch over any channel (docs/architecture.md):

1. :meth:`BatchLearner.demand` -- the samples each learner wants from each arm in the next batch ((N, K)
   integers; a row of zeros for a learner that has stopped or wants nothing this batch);
2. the channel serves them (directly, or through an anonymous decomposition) and returns sums and counts;
3. :meth:`BatchLearner.update` takes exactly the demanded samples, with the channel's variance proxy
   ``sigma2`` (1/4 for rewards in [0, 1] on the direct channel; ``(4C+1)/4`` for the anonymous
   sub-algorithm's estimates; more with privacy noise), and eliminates;
4. :attr:`BatchLearner.exploring` says who still wants samples, :meth:`BatchLearner.recommendation` what each
   learner recommends (its commitment once it has stopped).

A learner uses exactly the samples it demanded: a decomposer that over-covers gives some pairs more samples,
and the driver discards the surplus (and counts it) before calling :meth:`~BatchLearner.update`, which
refuses any other count. Every confidence radius scales with the variance proxy: the papers' radii are written
for rewards in [0, 1] (sub-Gaussian with proxy 1/4), so a proxy ``sigma2`` multiplies squared radii, and the
sample counts of fixed-design schemes, by ``4 sigma2``.

:class:`BestArmElimination` implements the (epsilon, delta)-PAC best-arm identification subroutines of
"Decentralized Exploration in Multi-Armed Bandits" (Féraud, Alami, Laroche, ICML 2019, paper 002, Section 3):
naive and median elimination (Even-Dar, Mannor, Mansour, COLT 2002) and successive elimination, plain and
SER3's (Allesiardo, Féraud, Maillard, 2017). :class:`EpochElimination` is successive elimination with the
doubling epochs of DP-SE (Sajed and Sheffet, ICML 2019), the regret learner of "Near-Optimal Algorithms for
Private Online Learning in a Stochastic Environment" (paper 001) and of "Distributed Differential Privacy in
Multi-Armed Bandits" (Chowdhury and Zhou, ICLR 2023, paper 004): it needs no horizon. :class:`BaSEElimination`
puts Algorithm 1's BaSE learners (:class:`~anonbandits.core.elimination.BatchedElimination`) behind the same
protocol.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core.elimination import BatchedElimination, gap_survivors
from anonbandits.core.radii import (
    dpse_widths,
    se_boundary,
    ugapec_gap_index,
    ugapec_log_term,
    ugapec_radius,
    ugapec_upper,
)
from anonbandits.core.schedules import epoch_length, median_elimination_pulls, naive_elimination_pulls
from anonbandits.errors import require

#: Variance proxy of one reward in [0, 1] (Hoeffding): the scale the papers' radii are written for.
UNIT_SIGMA2 = 0.25
SUBROUTINES = ("naive", "median", "se", "ser3")
#: the best-arm identification schemes of ``anon-bai``: the elimination subroutines and UGapEc (:class:`UGapEc`)
BAI_SCHEMES = (*SUBROUTINES, "ugapec")


@fill
@runtime_checkable
class BatchLearner(Protocol):
    """What a driver needs from N batched elimination learners (see the module docstring).

    A protocol: any object with these members is a batch learner (``isinstance`` checks them at run time).
    :meth:`demand` gives the (N, K) samples wanted next, :meth:`update` takes exactly them with the channel's
    variance proxy and eliminates, ``exploring`` says which learners still want samples and
    :meth:`recommendation` what each recommends.

    Parameters
    ----------
    *args : object
        None accepted: a protocol is not instantiated (``typing.Protocol`` raises ``TypeError``).
    **kwargs : object
        None accepted, as ``*args``.

    Attributes
    ----------
    n_learners : int
        N, the number of learners.
    n_arms : int
        K, the number of arms.
    sigma2 : float
        The variance proxy of one sample that the demands are sized for (fixed-design schemes take
        ``4 sigma2`` times the papers' samples); a driver refuses learners sized below its channel's proxy.

    {{refs_paper002_sajed2019}}

    Examples
    --------
    >>> import numpy as np
    >>> isinstance(EpochElimination(1, 2, confidence=0.1), BatchLearner)
    True
    """

    n_learners: int
    n_arms: int
    sigma2: float

    def demand(self) -> np.ndarray:
        """Samples each learner wants from each arm in the next batch.

        Implementations return a new array, 0 on eliminated arms and a row of zeros for a learner that has
        stopped or wants nothing this batch; the driver must serve exactly these counts to :meth:`update`.

        Returns
        -------
        numpy.ndarray
            (N, K) int64 sample counts.

        Examples
        --------
        >>> learner: BatchLearner = EpochElimination(1, 3, confidence=0.2)
        >>> learner.demand().shape, learner.demand().dtype.name
        ((1, 3), 'int64')
        """
        ...

    @fill
    def update(self, sums: np.ndarray, counts: np.ndarray, sigma2: float) -> np.ndarray:
        """Take one batch's samples and eliminate.

        The contract: ``counts`` equals :meth:`demand` (the driver discards any surplus first), ``sums`` are the
        sums of those samples, and ``sigma2`` is the variance proxy of one sample on the channel that served
        them, which scales every confidence radius. Implementations refuse any other batch.

        {{learner_update}}

        Examples
        --------
        >>> import numpy as np
        >>> learner: BatchLearner = EpochElimination(1, 2, confidence=0.2)
        >>> wanted = learner.demand()
        >>> learner.update(wanted * np.array([0.9, 0.1]), wanted, 0.25).tolist()
        [[False, True]]
        """
        ...

    @property
    def exploring(self) -> np.ndarray:
        """(N,) bool: the learners that still want samples."""
        ...

    def recommendation(self) -> np.ndarray:
        """Each learner's recommended arm: its commitment once it has stopped, its best guess while exploring.

        Returns
        -------
        numpy.ndarray
            (N,) int arm indices.

        Examples
        --------
        >>> learner: BatchLearner = EpochElimination(2, 3, confidence=0.2)
        >>> learner.recommendation().shape
        (2,)
        """
        ...


def _check_batch(sums: np.ndarray, counts: np.ndarray, wanted: np.ndarray, sigma2: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(sums, counts)`` as arrays after checking they are the batch that was asked for."""
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=np.int64)
    if sums.shape != wanted.shape or counts.shape != wanted.shape:
        raise ValueError(f"sums and counts must have shape {wanted.shape}, got {sums.shape} and {counts.shape}")
    if not np.array_equal(counts, wanted):
        i, j = np.argwhere(counts != wanted)[0]
        raise ValueError(f"learner {i} asked for {wanted[i, j]} samples of arm {j} and got {counts[i, j]}: "
                         "discard surplus samples before the update")
    require(sigma2 > 0 and math.isfinite(sigma2), "sigma2", "a positive finite variance proxy", sigma2)
    return sums, counts


def _argmax_random_ties(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N,) index of the largest of ``values`` among ``mask`` in each row, ties broken uniformly at random."""
    v = np.where(mask, values, -np.inf)
    top = v == v.max(axis=1, keepdims=True)
    return np.argmax(np.where(top & mask, rng.random(v.shape), -1.0), axis=1)


@fill
class BestArmElimination:
    """N (approx, delta)-PAC best-arm identification learners of one scheme, in lock-step batches.

    Each learner's recommendation is ``approx``-optimal with probability at least ``1 - delta`` (delta per
    learner) when its samples are sub-Gaussian with the variance proxies given to :meth:`update`.

    * ``naive`` (paper 002 spec 3.1): one batch of :func:`~anonbandits.core.schedules.naive_elimination_pulls`
      samples of every arm, then the empirical best.
    * ``median`` (spec 3.2): phases of :func:`~anonbandits.core.schedules.median_elimination_pulls` samples of
      every arm left; each phase keeps the ceil(s/2) best by that phase's samples alone.
    * ``se`` and ``ser3`` (specs 3.3 and 3.4): successive elimination on cumulative means; arm k leaves when
      ``best - mean_k + approx >= 2 radius(tau)`` after tau samples per arm, with the radius of
      :func:`~anonbandits.core.radii.se_boundary` (SE: ``sqrt(log(4 K tau^2/delta)/tau)``; SER3: the
      Hoeffding form ``sqrt(log(4 K tau^2/delta)/(2 tau))``). **[DECISION]** Batched, a learner checks after
      ``tau = growth^b`` samples per arm (b = 0, 1, ...) rather than after every round: the union bound behind
      the radius covers every tau, so checking at fewer of them keeps the guarantee and needs O(log) batches.
      SER3's reshuffled order within a round has no effect once a round is one batch.

    Parameters
    ----------
    {{learner_sizes}}
    subroutine : str
        One of :data:`SUBROUTINES`: ``"naive"``, ``"median"``, ``"se"`` or ``"ser3"``.
    approx : float
        Epsilon of the (epsilon, delta)-PAC guarantee, in (0, 1].
    delta : float
        Failure probability per learner, in (0, 1).
    rng : numpy.random.Generator
        Tie-breaking randomness.
    sigma2 : float, optional
        Variance proxy of the first batch's samples (its demand depends on it for naive and median). Default
        0.25 (rewards in [0, 1]).
    growth : int, optional
        tau's growth factor between the checks of ``se``/``ser3``, an integer >= 2. Default 2.

    Raises
    ------
    ConfigError
        If an argument is out of its range.

    References
    ----------
    Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019 (Section 3).

    Even-Dar, Mannor, Mansour, "PAC Bounds for Multi-armed Bandit and Markov Decision Processes", COLT 2002.

    Examples
    --------
    >>> import numpy as np
    >>> learner = BestArmElimination(2, 3, "naive", approx=0.5, delta=0.1, rng=np.random.default_rng(0))
    >>> wanted = learner.demand()
    >>> wanted.tolist()
    [[66, 66, 66], [66, 66, 66]]
    >>> learner.update(wanted * np.array([0.9, 0.5, 0.1]), wanted, 0.25).tolist()
    [[False, True, True], [False, True, True]]
    >>> learner.exploring.tolist(), learner.recommendation().tolist()
    ([False, False], [0, 0])
    """

    def __init__(self, n_learners: int, n_arms: int, subroutine: str, *, approx: float, delta: float,
                 rng: np.random.Generator, sigma2: float = UNIT_SIGMA2, growth: int = 2) -> None:
        require(n_learners >= 1, "learners", "at least 1", n_learners)
        require(n_arms >= 2, "arms", "at least 2", n_arms)
        require(subroutine in SUBROUTINES, "subroutine", f"one of {', '.join(SUBROUTINES)}", subroutine)
        require(0 < approx <= 1, "approx", "in (0, 1]", approx)
        require(0 < delta < 1, "delta", "in (0, 1)", delta)
        require(sigma2 > 0 and math.isfinite(sigma2), "sigma2", "a positive finite variance proxy", sigma2)
        require(int(growth) == growth and growth >= 2, "growth", "an integer >= 2", growth)
        self.n_learners, self.n_arms, self.subroutine = n_learners, n_arms, subroutine
        self.approx, self.delta, self.sigma2, self.growth, self.rng = approx, delta, sigma2, int(growth), rng
        self.active = np.ones((n_learners, n_arms), dtype=bool)
        self.sums = np.zeros((n_learners, n_arms))
        self.counts = np.zeros((n_learners, n_arms), dtype=np.int64)
        self.phase = np.zeros(n_learners, dtype=np.int64)  # completed batches (median: phases)
        self.samples = np.zeros(n_learners, dtype=np.int64)  # samples taken by each learner so far

    @property
    def exploring(self) -> np.ndarray:
        return self.active.sum(axis=1) > 1

    def _per_arm(self) -> np.ndarray:
        """(N,) samples of each active arm each learner wants next (0 once it has stopped)."""
        # the papers' counts are for rewards in [0, 1]; a proxy sigma2 scales them by 4 sigma2, which is
        # approx / sqrt(4 sigma2) in their epsilon
        eps = self.approx / math.sqrt(self.sigma2 / UNIT_SIGMA2)
        if self.subroutine == "naive":
            n = np.full(self.n_learners, naive_elimination_pulls(eps, self.delta, self.n_arms))
        elif self.subroutine == "median":
            # once per distinct phase (a handful), not once per learner
            phases, which = np.unique(self.phase, return_inverse=True)
            n = np.array([median_elimination_pulls(eps, self.delta, int(p) + 1) for p in phases])[which]
        else:
            tau = self.counts.max(axis=1)
            n = self.growth ** self.phase - tau
        return np.where(self.exploring, n, 0).astype(np.int64)

    def demand(self) -> np.ndarray:
        """Samples each learner wants from each arm in the next batch (:meth:`BatchLearner.demand`).

        ``naive``: one batch of the same count for every arm; ``median``: that phase's count for every arm
        left; ``se``/``ser3``: enough for ``growth**b`` samples per active arm at the b-th check. Both count
        formulas scale with the variance proxy of the last batch.

        Returns
        -------
        numpy.ndarray
            (N, K) int64 sample counts, 0 on eliminated arms and on every arm of a learner that has stopped.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BestArmElimination(1, 4, "median", approx=0.5, delta=0.1, rng=np.random.default_rng(1))
        >>> learner.demand().tolist()
        [[1049, 1049, 1049, 1049]]
        >>> means = np.array([0.9, 0.5, 0.1, 0.3])
        >>> _ = learner.update(learner.demand() * means, learner.demand(), 0.25)
        >>> learner.demand().tolist()
        [[2179, 2179, 0, 0]]
        """
        return self.active * self._per_arm()[:, None]

    def _two_radius(self, tau: np.ndarray, sigma2: float) -> np.ndarray:
        den = 2 if self.subroutine == "ser3" else 1
        return se_boundary(tau, self.n_arms, self.delta, 4.0, den) / tau * math.sqrt(sigma2 / UNIT_SIGMA2)

    @fill
    def update(self, sums: np.ndarray, counts: np.ndarray, sigma2: float) -> np.ndarray:
        """Take the demanded batch of samples and eliminate (:meth:`BatchLearner.update`).

        ``naive`` keeps the empirical best arm, ``median`` the better half by this phase's samples, ``se`` and
        ``ser3`` the arms within the radius of the best cumulative mean (ties between best arms at random).

        {{learner_update}}

        Examples
        --------
        >>> import numpy as np
        >>> learner = BestArmElimination(1, 3, "se", approx=0.5, delta=0.1, rng=np.random.default_rng(2))
        >>> wanted = learner.demand()
        >>> wanted.tolist(), learner.update(wanted * np.array([0.9, 0.5, 0.1]), wanted, 0.25).tolist()
        ([[1, 1, 1]], [[False, False, False]])
        >>> learner.update(np.zeros((1, 3)), np.full((1, 3), 2), 0.25)
        Traceback (most recent call last):
        ...
        ValueError: learner 0 asked for 1 samples of arm 0 and got 2: discard surplus samples before the update
        """
        wanted = self.demand()
        sums, counts = _check_batch(sums, counts, wanted, sigma2)
        self.sigma2 = float(sigma2)
        live = wanted.any(axis=1)
        self.sums += sums
        self.counts += counts
        self.samples += counts.sum(axis=1)
        self.phase += live
        before = self.active.copy()
        with np.errstate(invalid="ignore", divide="ignore"):
            means = self.sums / self.counts
        rows = np.flatnonzero(live)
        best = _argmax_random_ties(means[rows], self.active[rows], self.rng)
        if self.subroutine == "naive":
            keep = np.zeros((rows.size, self.n_arms), dtype=bool)
            keep[np.arange(rows.size), best] = True
        elif self.subroutine == "median":
            keep = self._upper_half(means[rows], self.active[rows])
            self.sums[rows], self.counts[rows] = 0.0, 0  # a phase's estimates use that phase's samples only
        else:
            tau = self.counts[rows].max(axis=1)
            m = np.where(self.active[rows], means[rows], -np.inf)
            lead = m[np.arange(rows.size), best][:, None]
            keep = self.active[rows] & (lead - m + self.approx < self._two_radius(tau, sigma2)[:, None])
            keep[np.arange(rows.size), best] = True
        self.active[rows] &= keep
        return before & ~self.active

    def _upper_half(self, means: np.ndarray, active: np.ndarray) -> np.ndarray:
        """The ceil(s/2) active arms of each row with the best means (ties at random)."""
        key = np.where(active, means, -np.inf)
        order = np.lexsort((self.rng.random(key.shape), -key), axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(self.n_arms)[None, :], axis=1)
        return active & (rank < -(-active.sum(axis=1, keepdims=True) // 2))

    def recommendation(self) -> np.ndarray:
        """The single arm left, or while exploring the active arm with the best mean so far.

        Returns
        -------
        numpy.ndarray
            (N,) int arm indices (the lowest index on ties; the first active arm before any sample).

        Examples
        --------
        >>> import numpy as np
        >>> learner = BestArmElimination(2, 3, "se", approx=0.5, delta=0.1, rng=np.random.default_rng(3))
        >>> learner.recommendation().tolist()
        [0, 0]
        >>> wanted = learner.demand()
        >>> _ = learner.update(wanted * np.array([[0.2, 0.1, 0.8], [0.3, 0.7, 0.5]]), wanted, 0.25)
        >>> learner.recommendation().tolist()
        [2, 1]
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(self.counts > 0, self.sums / self.counts, -np.inf)
        m = np.where(self.active, means, -np.inf)
        return np.where(np.isfinite(m.max(axis=1)), np.argmax(m, axis=1), np.argmax(self.active, axis=1))


@fill
class UGapEc:
    """N UGapEc learners (fixed confidence, (approx, delta)-PAC), one pull per learner per batch.

    UGapEc (Gabillon, Ghavamzadeh, Lazaric, NeurIPS 2012; paper 002's spec 3.6) is not an elimination scheme:
    after one pull of every arm (in random order) it pulls, at step t, the more uncertain of its candidate
    ``J(t) = argmin_k B_k`` and ``u(t) = argmax_{k != J} U_k`` (J on a tie of radii), and stops with ``J`` once
    ``B_J < approx``. Its indices, from :mod:`anonbandits.core.radii`, are ``beta_k = sqrt(4 sigma2) sqrt(L(t) /
    T_k)`` with ``L(t)`` = :func:`~anonbandits.core.radii.ugapec_log_term` after ``t`` pulls
    (:func:`~anonbandits.core.radii.ugapec_radius`, scaled as every radius of this module by the variance
    proxy), ``U_k = mean_k + beta_k`` and ``B_k = max_{l != k} U_l - (mean_k - beta_k)``
    (:func:`~anonbandits.core.radii.ugapec_upper`, :func:`~anonbandits.core.radii.ugapec_gap_index`).

    **[DECISION]** Batched exactly: each pull's arm depends on every earlier reward, so a batch is one pull per
    exploring learner (:meth:`demand` has one 1 per row). The per-pull choices, and with them the
    (approx, delta) guarantee, are UGapEc's own; batching buys nothing. Over the anonymous channel a batch's
    demand is 1 per user, so its decomposition is one assignment (R_b = 1, or 2 when a wanted arm cannot be
    filled to C+1 users otherwise) and each pull of the slowest user costs 2C+2 rounds: a better decomposer has
    nothing to shorten, where the elimination schemes' batches of many samples per user are decomposed in
    fewer or more assignments (docs/anonymous-bandits.md measures it).

    Parameters
    ----------
    {{learner_sizes}}
    approx : float
        Epsilon of the (epsilon, delta)-PAC guarantee, in (0, 1].
    delta : float
        Failure probability per learner, in (0, 1).
    rng : numpy.random.Generator
        Randomness of the initial order and of ties.
    sigma2 : float, optional
        Variance proxy of one sample the learners are built for (UGapEc fixes no sample count, so it only
        records what a driver checks; each :meth:`update` brings its own). Default 0.25 (rewards in [0, 1]).

    Attributes
    ----------
    sums, counts : numpy.ndarray
        (N, K) cumulative reward sums and pulls.
    samples : numpy.ndarray
        (N,) pulls of each learner so far (UGapEc's t).

    Raises
    ------
    ConfigError
        If N < 1, K < 2, or ``approx``, ``delta`` or ``sigma2`` is out of its range.

    References
    ----------
    Gabillon, Ghavamzadeh, Lazaric, "Best Arm Identification: A Unified Approach to Fixed Budget and Fixed
    Confidence", NeurIPS 2012.

    Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019 (Section 3).

    Examples
    --------
    >>> import numpy as np
    >>> learner = UGapEc(2, 3, approx=0.5, delta=0.1, rng=np.random.default_rng(0))
    >>> learner.demand().sum(axis=1).tolist()  # one pull per learner and batch
    [1, 1]
    >>> means = np.array([[0.9, 0.5, 0.1], [0.2, 0.8, 0.3]])
    >>> while learner.exploring.any():
    ...     wanted = learner.demand()
    ...     _ = learner.update(wanted * means, wanted, 0.25)
    >>> learner.recommendation().tolist(), learner.samples.tolist()
    ([0, 1], [106, 101])
    """

    def __init__(self, n_learners: int, n_arms: int, *, approx: float, delta: float, rng: np.random.Generator,
                 sigma2: float = UNIT_SIGMA2) -> None:
        require(n_learners >= 1, "learners", "at least 1", n_learners)
        require(n_arms >= 2, "arms", "at least 2", n_arms)
        require(0 < approx <= 1, "approx", "in (0, 1]", approx)
        require(0 < delta < 1, "delta", "in (0, 1)", delta)
        require(sigma2 > 0 and math.isfinite(sigma2), "sigma2", "a positive finite variance proxy", sigma2)
        self.n_learners, self.n_arms = n_learners, n_arms
        self.approx, self.delta, self.sigma2, self.rng = approx, delta, float(sigma2), rng
        self.sums = np.zeros((n_learners, n_arms))
        self.counts = np.zeros((n_learners, n_arms), dtype=np.int64)
        self.samples = np.zeros(n_learners, dtype=np.int64)
        self._stopped = np.zeros(n_learners, dtype=bool)
        self._best = np.zeros(n_learners, dtype=np.int64)  # J after the last indices (the commitment once stopped)
        self._next = _argmax_random_ties(np.zeros((n_learners, n_arms)), np.ones((n_learners, n_arms), bool), rng)

    @property
    def exploring(self) -> np.ndarray:
        return ~self._stopped

    @property
    def active(self) -> np.ndarray:
        """(N, K) bool: every arm while a learner explores, its recommendation alone once it has stopped."""
        one = np.arange(self.n_arms)[None, :] == self._best[:, None]
        return np.where(self._stopped[:, None], one, True)

    def demand(self) -> np.ndarray:
        """One pull of UGapEc's next arm for every exploring learner (:meth:`BatchLearner.demand`).

        Returns
        -------
        numpy.ndarray
            (N, K) int64: a single 1 per exploring learner, a row of zeros once it has stopped.

        Examples
        --------
        >>> import numpy as np
        >>> learner = UGapEc(3, 4, approx=0.5, delta=0.1, rng=np.random.default_rng(1))
        >>> learner.demand().sum(axis=1).tolist(), learner.demand().dtype.name
        ([1, 1, 1], 'int64')
        """
        wanted = np.zeros((self.n_learners, self.n_arms), dtype=np.int64)
        rows = np.flatnonzero(self.exploring)
        wanted[rows, self._next[rows]] = 1
        return wanted

    def _indices(self, rows: np.ndarray, sigma2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """UGapEc's radii, upper bounds and gap indices of ``rows`` (every arm pulled) after their pulls so far,
        and J = argmin B (ties at random)."""
        log_term = ugapec_log_term(np.maximum(self.samples[rows], 1).astype(float), self.n_arms, self.delta)
        beta = ugapec_radius(log_term[:, None], self.counts[rows]) * math.sqrt(sigma2 / UNIT_SIGMA2)
        means = self.sums[rows] / self.counts[rows]
        upper = ugapec_upper(means, beta)
        top2 = -np.sort(-upper, axis=1)[:, :2]  # the largest upper bound, and the second for its holder
        other = np.where(upper >= top2[:, :1], top2[:, 1:], top2[:, :1])
        gap = ugapec_gap_index(other, means, beta)
        j = _argmax_random_ties(-gap, np.ones(gap.shape, dtype=bool), self.rng)
        return beta, upper, gap, j

    @fill
    def update(self, sums: np.ndarray, counts: np.ndarray, sigma2: float) -> np.ndarray:
        """Take each exploring learner's one pull, test UGapEc's stopping rule and choose its next arm
        (:meth:`BatchLearner.update`).

        A learner stops with J once ``B_J < approx`` (every other arm counts as eliminated then); otherwise its
        next arm is the more uncertain of J and ``u``, from the same indices.

        {{learner_update}}

        Examples
        --------
        >>> import numpy as np
        >>> learner = UGapEc(1, 2, approx=1.0, delta=0.5, rng=np.random.default_rng(2))
        >>> while learner.exploring.any():
        ...     wanted = learner.demand()
        ...     gone = learner.update(wanted * np.array([1.0, 0.0]), wanted, 0.25)
        >>> gone.tolist(), learner.recommendation().tolist(), learner.counts.tolist()
        ([[False, True]], [0], [[5, 5]])
        """
        wanted = self.demand()
        sums, counts = _check_batch(sums, counts, wanted, sigma2)
        self.sigma2 = float(sigma2)
        self.sums += sums
        self.counts += counts
        self.samples += counts.sum(axis=1)
        before = self.active
        live = np.flatnonzero(self.exploring)
        tried = (self.counts[live] > 0).all(axis=1)
        fresh = live[~tried]  # initialisation: every arm once, in random order
        self._next[fresh] = _argmax_random_ties(np.zeros((fresh.size, self.n_arms)), self.counts[fresh] == 0,
                                                self.rng)
        rows = live[tried]
        if rows.size:
            beta, upper, gap, j = self._indices(rows, self.sigma2)
            at = np.arange(rows.size)
            self._best[rows] = j
            self._stopped[rows] = gap[at, j] < self.approx
            others = np.arange(self.n_arms)[None, :] != j[:, None]
            u = _argmax_random_ties(upper, others, self.rng)
            self._next[rows] = np.where(beta[at, j] >= beta[at, u], j, u)
        return before & ~self.active

    def recommendation(self) -> np.ndarray:
        """UGapEc's J: its commitment once stopped, the candidate of the last indices while exploring.

        Returns
        -------
        numpy.ndarray
            (N,) int arm indices (arm 0 before every arm has been pulled once).

        Examples
        --------
        >>> import numpy as np
        >>> UGapEc(2, 3, approx=0.5, delta=0.1, rng=np.random.default_rng(3)).recommendation().tolist()
        [0, 0]
        """
        return self._best.copy()


@fill
class EpochElimination:
    """N successive-elimination regret learners with DP-SE's doubling epochs; no horizon needed.

    In epoch e each active arm gets ``R_e`` samples (:func:`~anonbandits.core.schedules.epoch_length`, whose
    statistical term is scaled by ``4 sigma2``, **[DECISION]** ``R_e = max(ceil(4 sigma2 R_e(inf)),
    R_e(epsilon))``); after it, an arm whose epoch mean is further than ``2 (h_e sqrt(4 sigma2) + c_e)`` below
    the best one leaves (:func:`~anonbandits.core.radii.dpse_widths`; earlier epochs are forgotten, as in
    DP-SE). ``epsilon = inf`` is SE; with a finite epsilon the channel must add the Laplace noise of scale
    ``1/epsilon`` to each released epoch sum (``c_e`` accounts for it).

    Parameters
    ----------
    {{learner_sizes}}
    confidence : float
        beta in (0, 1), the failure probability of the whole run per learner.
    epsilon : float, optional
        Privacy level of the released sums, positive; ``math.inf`` (the default) is none.
    sigma2 : float, optional
        Variance proxy of the first epoch's samples. Default 0.25 (rewards in [0, 1]).

    Raises
    ------
    ConfigError
        If an argument is out of its range.

    {{refs_sajed2019_paper004}}

    Examples
    --------
    >>> import numpy as np
    >>> learner = EpochElimination(1, 2, confidence=0.1)
    >>> wanted = learner.demand()
    >>> wanted.tolist()
    [[650, 650]]
    >>> learner.update(wanted * np.array([1.0, 0.0]), wanted, 0.25).tolist()
    [[False, True]]
    >>> learner.exploring.tolist(), learner.recommendation().tolist()
    ([False], [0])
    """

    def __init__(self, n_learners: int, n_arms: int, *, confidence: float, epsilon: float = math.inf,
                 sigma2: float = UNIT_SIGMA2) -> None:
        require(n_learners >= 1, "learners", "at least 1", n_learners)
        require(n_arms >= 2, "arms", "at least 2", n_arms)
        require(0 < confidence < 1, "confidence", "in (0, 1)", confidence)
        require(epsilon > 0, "epsilon", "positive (inf: no privacy)", epsilon)
        require(sigma2 > 0 and math.isfinite(sigma2), "sigma2", "a positive finite variance proxy", sigma2)
        self.n_learners, self.n_arms = n_learners, n_arms
        self.confidence, self.epsilon, self.sigma2 = confidence, float(epsilon), float(sigma2)
        self.active = np.ones((n_learners, n_arms), dtype=bool)
        self.epoch = np.zeros(n_learners, dtype=np.int64)  # completed epochs
        self.last_means = np.zeros((n_learners, n_arms))

    @property
    def exploring(self) -> np.ndarray:
        return self.active.sum(axis=1) > 1

    def _length(self) -> np.ndarray:
        s, e = self.active.sum(axis=1), self.epoch + 1
        stat = np.ceil(self.sigma2 / UNIT_SIGMA2 * epoch_length(s, e, self.confidence)).astype(np.int64)
        return np.maximum(stat, epoch_length(s, e, self.confidence, self.epsilon))

    def demand(self) -> np.ndarray:
        """Samples each learner wants from each arm in its next epoch (:meth:`BatchLearner.demand`).

        Returns
        -------
        numpy.ndarray
            (N, K) int64 sample counts: the epoch length ``R_e`` on each active arm, 0 on eliminated arms and on
            every arm of a learner with one arm left.

        Examples
        --------
        >>> import numpy as np
        >>> learner = EpochElimination(2, 3, confidence=0.1)
        >>> learner.demand().tolist()
        [[702, 702, 702], [702, 702, 702]]
        >>> means = np.array([[0.9, 0.5, 0.1], [0.5, 0.5, 0.5]])
        >>> _ = learner.update(learner.demand() * means, learner.demand(), 0.25)
        >>> learner.demand().tolist()
        [[0, 0, 0], [3516, 3516, 3516]]
        """
        return self.active * np.where(self.exploring, self._length(), 0)[:, None]

    @fill
    def update(self, sums: np.ndarray, counts: np.ndarray, sigma2: float) -> np.ndarray:
        """Take one epoch's samples and eliminate by the epoch's means alone (:meth:`BatchLearner.update`).

        When private, ``sums`` carry the Laplace noise of scale ``1/epsilon`` the channel added.

        {{learner_update}}

        Examples
        --------
        >>> import numpy as np
        >>> learner = EpochElimination(n_learners=1, n_arms=3, confidence=0.1)
        >>> counts = learner.demand()
        >>> eliminated = learner.update(counts * np.array([0.5, 0.45, 0.1]), counts, 0.25)
        >>> eliminated.tolist(), learner.active.tolist()
        ([[False, False, True]], [[True, True, False]])
        >>> learner.update(counts * 0.5, counts, 0.25)
        Traceback (most recent call last):
        ...
        ValueError: learner 0 asked for 3309 samples of arm 0 and got 702: discard surplus samples before the update
        """
        wanted = self.demand()
        sums, counts = _check_batch(sums, counts, wanted, sigma2)
        rows = np.flatnonzero(wanted.any(axis=1))
        length = wanted[rows].max(axis=1)
        h, c = dpse_widths(self.active[rows].sum(axis=1), self.epoch[rows] + 1, length, self.confidence,
                           self.epsilon)
        width = 2.0 * (h * math.sqrt(sigma2 / UNIT_SIGMA2) + c)
        means = np.where(self.active[rows], sums[rows] / length[:, None], -np.inf)
        before = self.active.copy()
        self.active[rows] &= gap_survivors(means, width)
        self.last_means[rows] = np.where(self.active[rows], means, 0.0)
        self.epoch[rows] += 1
        self.sigma2 = float(sigma2)
        return before & ~self.active

    def recommendation(self) -> np.ndarray:
        """The single arm left, or while exploring the active arm with the best last epoch mean.

        Returns
        -------
        numpy.ndarray
            (N,) int arm indices (the lowest index on ties, so arm 0 before the first epoch).

        Examples
        --------
        >>> import numpy as np
        >>> learner = EpochElimination(2, 3, confidence=0.1)
        >>> wanted = learner.demand()
        >>> _ = learner.update(wanted * np.array([[0.1, 0.9, 0.2], [0.5, 0.5, 0.52]]), wanted, 0.25)
        >>> learner.recommendation().tolist(), learner.exploring.tolist()
        ([1, 2], [False, True])
        """
        m = np.where(self.active, self.last_means, -np.inf)
        return np.argmax(m, axis=1)


@fill
class BaSEElimination:
    """N BaSE learners on one static grid behind the :class:`BatchLearner` protocol: Algorithm 1's learner.

    A thin adapter of :class:`~anonbandits.core.elimination.BatchedElimination` (kept as :attr:`base`):
    :meth:`demand` is the next batch's ``ceil(D / |A_i|)`` samples on each active arm (D, the grid's batch
    length), :meth:`update` sets the variance proxy and eliminates, ``exploring`` is True for every learner until
    the last (committing) batch of the grid, and :meth:`recommendation` is BaSE's commitment.

    **[DECISION]** Unlike the other learners of this module, BaSE takes every sample it is given on its active
    arms: Algorithm 1 of paper 000 uses all the estimates of a decomposition that over-covers a pair (and, best
    effort, fewer than asked). It is the variant that uses surplus samples; a driver that serves exactly
    :meth:`demand` runs it as the others.

    Parameters
    ----------
    {{learner_sizes}}
    grid : numpy.ndarray
        ``[t_0 = 0, ..., t_M = T]``, non-decreasing (:func:`~anonbandits.core.schedules.static_grid`).
    gamma : float, optional
        BaSE's elimination constant, positive. Default 4.0.
    threshold : str, optional
        BaSE's radius, ``"log"`` (the default) or ``"gao"``.
    sigma2 : float, optional
        Variance proxy of the first batch's samples. Default 0.25 (rewards in [0, 1]).

    Attributes
    ----------
    base : anonbandits.core.elimination.BatchedElimination
        The N BaSE learners (grid, active sets, cumulative sums and counts, batches completed).

    Raises
    ------
    ConfigError
        If N < 1, K < 2, or the grid, ``gamma``, ``threshold`` or ``sigma2`` is out of its range (those of
        :class:`~anonbandits.core.elimination.BatchedElimination`).

    {{refs_gao2019_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> learner = BaSEElimination(2, 3, np.array([0, 30, 90]))
    >>> isinstance(learner, BatchLearner), learner.demand().tolist()
    (True, [[10, 10, 10], [10, 10, 10]])
    >>> wanted = learner.demand()
    >>> learner.update(wanted * np.array([[0.9, 0.1, 0.1], [0.5, 0.5, 0.5]]), wanted, 0.25).tolist()
    [[False, True, True], [False, False, False]]
    >>> learner.exploring.tolist(), learner.recommendation().tolist()
    ([False, False], [0, 0])
    """

    def __init__(self, n_learners: int, n_arms: int, grid: np.ndarray, *, gamma: float = 4.0,
                 threshold: str = "log", sigma2: float = UNIT_SIGMA2) -> None:
        require(n_learners >= 1, "learners", "at least 1", n_learners)
        require(n_arms >= 2, "arms", "at least 2", n_arms)
        self.n_learners, self.n_arms = n_learners, n_arms
        self.base = BatchedElimination(n_learners, n_arms, grid, gamma=gamma, threshold=threshold, sigma2=sigma2)

    @property
    def exploring(self) -> np.ndarray:
        return np.full(self.n_learners, self.base.exploring)

    @property
    def active(self) -> np.ndarray:
        """(N, K) bool, the arms still in play for each learner."""
        return self.base.active

    @property
    def sigma2(self) -> float:
        """The variance proxy of BaSE's radius (its grid does not depend on it)."""
        return self.base.sigma2

    def demand(self) -> np.ndarray:
        """The next batch's samples: ``ceil(D / |A_i|)`` on each active arm (:meth:`BatchLearner.demand`).

        Returns
        -------
        numpy.ndarray
            (N, K) int64 sample counts; all zero once the grid's last (committing) batch is next.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BaSEElimination(1, 3, np.array([0, 10, 90]))
        >>> learner.active[0, 2] = False
        >>> learner.demand().tolist()
        [[5, 5, 0]]
        """
        if not self.base.exploring:
            return np.zeros((self.n_learners, self.n_arms), dtype=np.int64)
        size = self.base.active.sum(axis=1, keepdims=True)
        return np.where(self.base.active, -(-self.base.batch_length() // np.maximum(size, 1)), 0).astype(np.int64)

    def update(self, sums: np.ndarray, counts: np.ndarray, sigma2: float) -> np.ndarray:
        """Take a batch's samples on the active arms, at variance proxy ``sigma2``, and eliminate.

        Parameters
        ----------
        sums : numpy.ndarray
            (N, K) sums of the samples served.
        counts : numpy.ndarray
            (N, K) numbers of samples served, 0 on eliminated arms (any number on active ones: see the class).
        sigma2 : float
            Variance proxy of one sample, positive and finite; BaSE's radius uses it from this batch on.

        Returns
        -------
        numpy.ndarray
            (N, K) bool mask of the arms this batch eliminated.

        Raises
        ------
        ConfigError
            If ``sigma2`` is not a positive finite number.
        ValueError
            If ``counts`` gives samples to an eliminated arm.
        RuntimeError
            If no exploration batch is left.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BaSEElimination(1, 2, np.array([0, 20, 40]))
        >>> learner.update(np.array([[12.0, 1.0]]), np.array([[12, 10]]), 0.25).tolist()
        [[False, True]]
        """
        require(sigma2 > 0 and math.isfinite(sigma2), "sigma2", "a positive finite variance proxy", sigma2)
        self.base.sigma2 = sigma2
        return self.base.update(sums, counts)

    def recommendation(self) -> np.ndarray:
        """BaSE's commitment: each learner's active arm with the best cumulative mean.

        Returns
        -------
        numpy.ndarray
            (N,) int arm indices (the lowest index on ties, the first active arm before any sample).

        Examples
        --------
        >>> import numpy as np
        >>> BaSEElimination(2, 3, np.array([0, 30, 90])).recommendation().tolist()
        [0, 0]
        """
        return self.base.commit()
