"""Successive elimination with the doubling epochs of DP-SE (Sajed and Sheffet, "An Optimal Private
Stochastic-MAB Algorithm Based on an Optimal Private Stopping Rule", ICML 2019) as batched regret learners
(:class:`EpochElimination`): they need no horizon."""

from __future__ import annotations

import math

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import ARMS, BATCH_SUMS, EPSILON_OR_INF, LEARNERS_N, check_cells
from anonbandits.core.elimination import gap_survivors
from anonbandits.core.learners.protocol import UNIT_SIGMA2, _check_batch
from anonbandits.core.radii import (
    dpse_widths,
)
from anonbandits.core.schedules import epoch_length
from anonbandits.errors import require
from anonbandits.validation import COUNT_MATRIX, OPEN_UNIT, POSITIVE_FINITE, checks


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
        Privacy level of the released sums, between 1e-6 and 1e12; ``math.inf`` (the default) is none.
    sigma2 : float, optional
        Variance proxy of the first epoch's samples. Default 0.25 (rewards in [0, 1]).

    Raises
    ------
    ConfigError
        If an argument is out of its range: ``n_learners`` not an integer >= 1, ``n_arms`` not one >= 2 (or
        N x K above :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS`), ``confidence`` not in (0, 1),
        ``epsilon`` neither ``inf`` nor between 1e-6 and 1e12, or ``sigma2`` not a finite positive number.

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

    @checks(n_learners=LEARNERS_N, n_arms=ARMS, confidence=OPEN_UNIT, epsilon=EPSILON_OR_INF, sigma2=POSITIVE_FINITE)
    def __init__(
        self, n_learners: int, n_arms: int, *, confidence: float, epsilon: float = math.inf, sigma2: float = UNIT_SIGMA2
    ) -> None:
        check_cells(n_learners, n_arms)
        # trusted callers (the registry's runs) skip the checks above: their values are checked here
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

    @checks(sums=BATCH_SUMS, counts=COUNT_MATRIX, sigma2=POSITIVE_FINITE)
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
        >>> learner.update(counts * 0.5, counts, 0.25)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        anonbandits.errors.ConfigError: counts must equal the demand: learner 0 asked for 3309 samples of arm 0
        and got 702: discard surplus samples before the update
        """
        wanted = self.demand()
        sums, counts = _check_batch(sums, counts, wanted, sigma2)
        rows = np.flatnonzero(wanted.any(axis=1))
        length = wanted[rows].max(axis=1)
        h, c = dpse_widths(self.active[rows].sum(axis=1), self.epoch[rows] + 1, length, self.confidence, self.epsilon)
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
