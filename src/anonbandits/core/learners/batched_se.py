"""BaSE, the batched successive elimination of Algorithm 1 of Esfandiari, Mirrokni, Schneider, "Anonymous
Bandits for Multi-User Systems" (NeurIPS 2022), behind the batched-learner protocol
(:class:`BaSEElimination`)."""

from __future__ import annotations

import math

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import ARMS, BATCH_SUMS, GRID, LEARNERS_N
from anonbandits.core.elimination import THRESHOLDS, BatchedElimination
from anonbandits.core.learners.protocol import UNIT_SIGMA2
from anonbandits.errors import require
from anonbandits.validation import COUNT_MATRIX, POSITIVE_FINITE, checks, one_of


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
        If ``n_learners`` is not an integer >= 1 or ``n_arms`` one >= 2 (or N x K is above
        :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS`), or the grid, ``gamma``, ``threshold`` or ``sigma2``
        is out of its range (those of :class:`~anonbandits.core.elimination.BatchedElimination`).

    {{refs_gao2019_paper000}}

    Examples
    --------
    >>> import numpy as np
    >>> from anonbandits.core.learners import BatchLearner
    >>> learner = BaSEElimination(2, 3, np.array([0, 30, 90]))
    >>> isinstance(learner, BatchLearner), learner.demand().tolist()
    (True, [[10, 10, 10], [10, 10, 10]])
    >>> wanted = learner.demand()
    >>> learner.update(wanted * np.array([[0.9, 0.1, 0.1], [0.5, 0.5, 0.5]]), wanted, 0.25).tolist()
    [[False, True, True], [False, False, False]]
    >>> learner.exploring.tolist(), learner.recommendation().tolist()
    ([False, False], [0, 0])
    """

    @checks(
        n_learners=LEARNERS_N,
        n_arms=ARMS,
        grid=GRID,
        gamma=POSITIVE_FINITE,
        threshold=one_of(*THRESHOLDS),
        sigma2=POSITIVE_FINITE,
    )
    def __init__(
        self,
        n_learners: int,
        n_arms: int,
        grid: np.ndarray,
        *,
        gamma: float = 4.0,
        threshold: str = "log",
        sigma2: float = UNIT_SIGMA2,
    ) -> None:
        # trusted callers (the registry's runs) skip the checks above: N and K are checked here for them
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

    @checks(sums=BATCH_SUMS, counts=COUNT_MATRIX, sigma2=POSITIVE_FINITE)
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
            If ``sigma2`` is not a positive finite number, ``sums`` not an (N, K) array of finite numbers,
            ``counts`` not an (N, K) array of non-negative integers, or ``counts`` gives samples to an eliminated
            arm.
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
