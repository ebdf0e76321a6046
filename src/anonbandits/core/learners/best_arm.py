"""The (epsilon, delta)-PAC best-arm identification subroutines of Féraud, Alami, Laroche, "Decentralized
Exploration in Multi-Armed Bandits" (ICML 2019), Sec. 3.1, as batched learners (:class:`BestArmElimination`):
naive and median elimination (Even-Dar, Mannor, Mansour, COLT 2002) and successive elimination, plain and SER3's
(Allesiardo, Féraud, Maillard, 2017)."""

from __future__ import annotations

import math

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import ARMS, BATCH_SUMS, LEARNERS_N, check_cells
from anonbandits.core.learners.protocol import UNIT_SIGMA2, _argmax_random_ties, _check_batch
from anonbandits.core.radii import (
    se_boundary,
)
from anonbandits.core.schedules import median_elimination_pulls, naive_elimination_pulls
from anonbandits.errors import require
from anonbandits.validation import COUNT_MATRIX, OPEN_UNIT, POSITIVE_FINITE, RNG, RULES, checks, int_between, one_of

SUBROUTINES = ("naive", "median", "se", "ser3")


@fill
class BestArmElimination:
    """N (approx, delta)-PAC best-arm identification learners of one scheme, in lock-step batches.

    Each learner's recommendation is ``approx``-optimal with probability at least ``1 - delta`` (delta per
    learner) when its samples are sub-Gaussian with the variance proxies given to :meth:`update`.

    * ``naive`` (naive elimination, Even-Dar et al.; an Arm Selection subroutine of paper 002, Sec. 3.1): one
      batch of :func:`~anonbandits.core.schedules.naive_elimination_pulls` samples of every arm, then the
      empirical best.
    * ``median`` (median elimination, Even-Dar et al.): phases of
      :func:`~anonbandits.core.schedules.median_elimination_pulls` samples of every arm left; each phase keeps
      the ceil(s/2) best by that phase's samples alone.
    * ``se`` and ``ser3`` (successive elimination, Even-Dar et al.; SER3, Allesiardo et al.): successive elimination on
      cumulative means; arm k leaves when ``best - mean_k + approx >= 2 radius(tau)`` after tau samples per arm, with
      the radius of :func:`~anonbandits.core.radii.se_boundary` (SE: ``sqrt(log(4 K tau^2/delta)/tau)``; SER3: the
      Hoeffding form ``sqrt(log(4 K tau^2/delta)/(2 tau))``). **[DECISION]** Batched, a learner checks after ``tau =
      growth^b`` samples per arm (b = 0, 1, ...) rather than after every round: the union bound behind the radius covers
      every tau, so checking at fewer of them keeps the guarantee and needs O(log) batches. SER3's reshuffled order
      within a round has no effect once a round is one batch.

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
        tau's growth factor between the checks of ``se``/``ser3``, an integer from 2 to 2^20. Default 2.

    Raises
    ------
    ConfigError
        If an argument is out of its range: ``n_learners`` not an integer >= 1, ``n_arms`` not one >= 2 (or
        N x K above :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS`), ``subroutine`` not one of
        :data:`SUBROUTINES`, ``approx`` not in (0, 1], ``delta`` not in (0, 1), ``rng`` not a generator,
        ``sigma2`` not a finite positive number or ``growth`` not an integer from 2 to 2^20.

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

    @checks(
        n_learners=LEARNERS_N,
        n_arms=ARMS,
        subroutine=one_of(*SUBROUTINES),
        approx=RULES["approx"],
        delta=OPEN_UNIT,
        rng=RNG,
        sigma2=POSITIVE_FINITE,
        growth=int_between(2, 2**20),
    )
    def __init__(
        self,
        n_learners: int,
        n_arms: int,
        subroutine: str,
        *,
        approx: float,
        delta: float,
        rng: np.random.Generator,
        sigma2: float = UNIT_SIGMA2,
        growth: int = 2,
    ) -> None:
        check_cells(n_learners, n_arms)
        # trusted callers (the registry's runs) skip the checks above: their values are checked here
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
            n = self.growth**self.phase - tau
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

    @checks(sums=BATCH_SUMS, counts=COUNT_MATRIX, sigma2=POSITIVE_FINITE)
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
        >>> learner.update(np.zeros((1, 3)), np.full((1, 3), 2), 0.25)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: counts must equal the demand: learner 0 asked for 1 samples of arm 0 and
        got 2: discard surplus samples before the update
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
