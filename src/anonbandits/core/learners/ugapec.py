"""UGapEc (Gabillon, Ghavamzadeh, Lazaric, "Best Arm Identification: A Unified Approach to Fixed Budget and
Fixed Confidence", NeurIPS 2012) behind the batched-learner protocol, one pull per learner per batch
(:class:`UGapEc`): the explore-then-commit subroutine of the experiments of Féraud, Alami, Laroche (ICML 2019,
Sec. 5.1)."""

from __future__ import annotations

import math

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import ARMS, BATCH_SUMS, LEARNERS_N, check_cells
from anonbandits.core.learners.best_arm import SUBROUTINES
from anonbandits.core.learners.protocol import UNIT_SIGMA2, _argmax_random_ties, _check_batch
from anonbandits.core.radii import (
    ugapec_gap_index,
    ugapec_log_term,
    ugapec_radius,
    ugapec_upper,
)
from anonbandits.errors import require
from anonbandits.validation import COUNT_MATRIX, OPEN_UNIT, POSITIVE_FINITE, RNG, RULES, checks

#: the best-arm identification schemes of ``anon-bai``: the elimination subroutines and UGapEc (:class:`UGapEc`)
BAI_SCHEMES = (*SUBROUTINES, "ugapec")


@fill
class UGapEc:
    """N UGapEc learners (fixed confidence, (approx, delta)-PAC), one pull per learner per batch.

    UGapEc (Gabillon, Ghavamzadeh, Lazaric, NeurIPS 2012; a subroutine of paper 002, Sec. 5.1) is no elimination
    scheme: after one pull of every arm (in random order) it pulls, at step t, the more uncertain of its candidate
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
        If ``n_learners`` is not an integer >= 1 or ``n_arms`` one >= 2 (or N x K is above
        :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS`), ``approx`` is not in (0, 1], ``delta`` not in
        (0, 1), ``rng`` not a generator or ``sigma2`` not a finite positive number.

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

    @checks(
        n_learners=LEARNERS_N,
        n_arms=ARMS,
        approx=RULES["approx"],
        delta=OPEN_UNIT,
        rng=RNG,
        sigma2=POSITIVE_FINITE,
    )
    def __init__(
        self,
        n_learners: int,
        n_arms: int,
        *,
        approx: float,
        delta: float,
        rng: np.random.Generator,
        sigma2: float = UNIT_SIGMA2,
    ) -> None:
        check_cells(n_learners, n_arms)
        # trusted callers (the registry's runs) skip the checks above: their values are checked here
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
        beta = np.asarray(ugapec_radius(log_term[:, None], self.counts[rows])) * math.sqrt(sigma2 / UNIT_SIGMA2)
        means = self.sums[rows] / self.counts[rows]
        upper = np.asarray(ugapec_upper(means, beta))
        top2 = -np.sort(-upper, axis=1)[:, :2]  # the largest upper bound, and the second for its holder
        other = np.where(upper >= top2[:, :1], top2[:, 1:], top2[:, :1])
        gap = np.asarray(ugapec_gap_index(other, means, beta))
        j = _argmax_random_ties(-gap, np.ones(gap.shape, dtype=bool), self.rng)
        return beta, upper, gap, j

    @checks(sums=BATCH_SUMS, counts=COUNT_MATRIX, sigma2=POSITIVE_FINITE)
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
        self._next[fresh] = _argmax_random_ties(np.zeros((fresh.size, self.n_arms)), self.counts[fresh] == 0, self.rng)
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
