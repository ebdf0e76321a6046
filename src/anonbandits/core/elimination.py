"""The elimination step, vectorised over many learners at once, and BaSE's batched learner state.

The two rules of the papers compare sample means with a radius of :mod:`anonbandits.core.radii`:
:func:`gap_survivors` (DP-SE of Sajed and Sheffet, ICML 2019, papers 001 and 004; BaSE of Gao et al.,
NeurIPS 2019, in Algorithm 1 of paper 000) and :func:`interval_survivors` (Algorithm 1 of "Distributed
Differential Privacy in Multi-Armed Bandits", ICLR 2023, paper 004; its rule is non-strict: an arm survives
when its upper bound equals the best lower bound).

:class:`BatchedElimination` holds N BaSE learners (paper 000, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022,
Sections 2.2 and 3.3, which take BaSE from Gao, Han, Ren and Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019;
the details below follow that paper) as (N, K) arrays. Per batch m = 1..M-1 a learner asks for ``t_m - t_{m-1}`` samples
spread evenly over its active arms, then eliminates every active arm k with ``max_j Ybar_j - Ybar_k >= r`` (Ybar:
cumulative sample means); in the last batch it commits to its active arm with the best mean.
"""

from __future__ import annotations

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.core._rules import BATCH_SUMS, GRID, LEARNERS_N, MEANS, WHOLE_COUNTS, WIDTHS, check_cells
from anonbandits.core.radii import base_gao_radius, base_log_radius
from anonbandits.errors import ConfigError, _shown, require
from anonbandits.validation import (
    NONNEGATIVE,
    POSITIVE_FINITE,
    array_of,
    checks,
    int_between,
    one_of,
)

#: ``ties`` of :func:`gap_survivors`.
TIES = ("keep", "eliminate")


@checks(means=MEANS, width=WIDTHS, ties=one_of(*TIES))
def gap_survivors(means: np.ndarray, width: float | np.ndarray, *, ties: str = "keep") -> np.ndarray:
    """Mask of the arms within ``width`` of the best mean along the last axis.

    The elimination test of DP-SE and of BaSE: an arm survives while the best mean is not ``width`` above it.

    Parameters
    ----------
    means : numpy.ndarray
        (..., K) sample means; ``-inf`` marks arms out of play.
    width : float or numpy.ndarray
        The elimination width, a scalar or one per learner (shape ``means.shape[:-1]``).
    ties : str, optional
        ``"keep"`` (survive iff ``best - mean <= width``; DP-SE) or ``"eliminate"`` (survive iff
        ``best - mean < width``; BaSE). Default ``"keep"``.

    Returns
    -------
    numpy.ndarray
        A bool array of the shape of ``means``: True for the arms that survive.

    Raises
    ------
    ConfigError
        If ``means`` is not a non-empty array of numbers (NaN or ``+inf`` included), ``width`` is negative, NaN
        or not of the shape ``means.shape[:-1]``, or ``ties`` is not ``"keep"`` or ``"eliminate"``.

    References
    ----------
    Sajed, Sheffet, "An Optimal Private Stochastic-MAB Algorithm based on an Optimal Private Stopping Rule",
    ICML 2019.

    Gao, Han, Ren, Zhou, "Batched Multi-armed Bandits Problem", NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> gap_survivors(np.array([0.5, 0.45, 0.2]), 0.1).tolist()
    [True, True, False]
    >>> gap_survivors(np.array([[0.5, 0.3], [0.5, 0.1]]), np.array([0.1, 0.5]), ties="eliminate").tolist()
    [[True, False], [True, True]]
    """
    means = np.asarray(means)
    # the 1-D case (one learner, DP-SE's once-per-epoch test) avoids the slower keepdims reduction
    gap = (means.max(axis=-1, keepdims=True) if means.ndim > 1 else means.max()) - means
    if not isinstance(width, float | int):
        width = np.asarray(width)
        if width.ndim:
            # one width per learner: any other shape would broadcast into a mask of another shape
            if width.shape != means.shape[:-1]:
                raise ConfigError(f"width must be a number or of shape {means.shape[:-1]}, got {_shown(width)}")
            width = width[..., None]
    return gap <= width if ties == "keep" else ~(gap >= width)


@checks(means=array_of("iuf", "a non-empty array of finite numbers", ndim=None, size=1), radius=NONNEGATIVE)
@fill
def interval_survivors(means: np.ndarray, radius: float) -> np.ndarray:
    """Mask of the arms with ``mean + radius >= max(mean - radius)`` (paper 004's non-strict UCB/LCB test).

    Parameters
    ----------
    means : numpy.ndarray
        (K,) sample means of the active arms.
    radius : float
        The confidence radius shared by every arm.

    Returns
    -------
    numpy.ndarray
        A (K,) bool array: True for the arms whose upper confidence bound reaches the best lower bound.

    Raises
    ------
    ConfigError
        If ``means`` is not a non-empty array of finite numbers or ``radius`` is not a number >= 0.

    {{refs_paper004}}
    Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> interval_survivors(np.array([0.5, 0.45, 0.2]), 0.1).tolist()
    [True, True, False]
    """
    means = np.asarray(means)
    return means + radius >= np.max(means - radius)


THRESHOLDS = ("log", "gao")


@fill
class BatchedElimination:
    """N independent BaSE learners on one static grid.

    Each learner explores its active arms evenly in every batch but the last, eliminates the arms whose mean is
    at least its confidence radius below the best, and commits to its best active arm in the last batch
    (:meth:`update`, :meth:`commit`).

    Parameters
    ----------
    n_learners : int
        N, the number of learners.
    n_arms : int
        K, the number of arms.
    grid : numpy.ndarray
        ``[t_0 = 0, ..., t_M = T]``, non-decreasing (see :func:`~anonbandits.core.schedules.static_grid`).
    gamma : float, optional
        Tuning constant of the confidence radius, positive. Default 4.0.
    threshold : str, optional
        ``"log"`` (:func:`~anonbandits.core.radii.base_log_radius`, the default) or ``"gao"``
        (:func:`~anonbandits.core.radii.base_gao_radius`).
    sigma2 : float, optional
        Variance proxy of one sample. Default 0.25 (rewards in [0, 1]).

    Attributes
    ----------
    active : numpy.ndarray
        (N, K) bool, the arms still in play for each learner.
    sums : numpy.ndarray
        (N, K) cumulative sample sums.
    counts : numpy.ndarray
        (N, K) int64 cumulative sample counts.
    batch : int
        Number of batches completed (0..M-1).

    Raises
    ------
    ConfigError
        If ``n_learners`` or ``n_arms`` is not an integer >= 1 (or N x K is above
        :data:`~anonbandits.core.limits.MAX_INSTANCE_CELLS`), if ``grid`` is not an array of integers that
        starts at 0, never decreases and has at least two points, or if ``gamma`` or ``sigma2`` is not a finite
        positive number or ``threshold`` not one of :data:`THRESHOLDS`.

    {{refs_gao2019_paper000}}
    Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> learner = BatchedElimination(2, 3, np.array([0, 30, 90]))
    >>> learner.demand().tolist()
    [[10.0, 10.0, 10.0], [10.0, 10.0, 10.0]]
    >>> counts = np.full((2, 3), 10)
    >>> learner.update(counts * np.array([[0.9, 0.1, 0.1], [0.5, 0.5, 0.5]]), counts).tolist()
    [[False, True, True], [False, False, False]]
    >>> learner.exploring, learner.commit().tolist()
    (False, [0, 0])
    """

    @checks(
        n_learners=LEARNERS_N,
        n_arms=int_between(1, 2**62),
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
        sigma2: float = 0.25,
    ) -> None:
        check_cells(n_learners, n_arms)
        given, grid = grid, np.asarray(grid, dtype=np.int64)
        if grid.ndim != 1 or grid.size < 2 or grid[0] != 0 or np.any(np.diff(grid) < 0):
            raise ConfigError(
                f"grid must be non-decreasing, start at 0 and have at least two points, got {_shown(given)}"
            )
        # the registry's runs reach here trusted: their gamma, threshold and sigma2 are checked here
        require(gamma > 0, "gamma", "positive", gamma)
        require(threshold in THRESHOLDS, "threshold", f"one of {', '.join(THRESHOLDS)}", threshold)
        require(sigma2 > 0, "sigma2", "positive", sigma2)
        self.grid, self.horizon, self.batch = grid, int(grid[-1]), 0
        self.gamma, self.threshold, self.sigma2 = float(gamma), threshold, float(sigma2)
        self.active = np.ones((n_learners, n_arms), dtype=bool)
        self.sums, self.counts = np.zeros((n_learners, n_arms)), np.zeros((n_learners, n_arms), dtype=np.int64)

    @property
    def exploring(self) -> bool:
        """True while the next batch is an exploration batch (not the last, committing one)."""
        return self.batch < self.grid.size - 2

    def batch_length(self) -> int:
        """Length ``t_m - t_{m-1}`` of the next batch m = ``batch + 1``.

        Returns
        -------
        int
            Rounds of the next batch, from the grid.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BatchedElimination(2, 3, np.array([0, 30, 90]))
        >>> learner.batch_length()
        30
        """
        return int(self.grid[self.batch + 1] - self.grid[self.batch])

    def demand(self) -> np.ndarray:
        """Samples each learner wants from each arm in the next batch: ``D / |A_i|`` on its active arms.

        Returns
        -------
        numpy.ndarray
            (N, K) float demand: the next batch's length D split evenly over learner i's active arms A_i, 0 on
            eliminated arms.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BatchedElimination(2, 3, np.array([0, 30, 90]))
        >>> counts = np.full((2, 3), 10)
        >>> _ = learner.update(counts * np.array([[0.9, 0.1, 0.1], [0.5, 0.5, 0.5]]), counts)
        >>> learner.demand().tolist()
        [[60.0, 0.0, 0.0], [20.0, 20.0, 20.0]]
        """
        return self.active * (self.batch_length() / self.active.sum(axis=1, keepdims=True))

    def radius(self) -> np.ndarray:
        """Current confidence radius of each learner.

        With ``threshold="log"`` the radius of :func:`~anonbandits.core.radii.base_log_radius` at the fewest
        samples of an active arm; with ``"gao"`` that of :func:`~anonbandits.core.radii.base_gao_radius` at the
        start ``t_m`` of the current batch.

        Returns
        -------
        numpy.ndarray
            (N,) float radii; ``inf`` for a learner with an unsampled active arm (and, with ``"gao"``, before
            the first batch).

        Examples
        --------
        >>> import numpy as np
        >>> learner = BatchedElimination(2, 3, np.array([0, 30, 90]))
        >>> learner.radius().tolist()
        [inf, inf]
        >>> counts = np.full((2, 3), 10)
        >>> _ = learner.update(counts * 0.5, counts)
        >>> np.round(learner.radius(), 3).tolist()
        [0.748, 0.748]
        """
        n_learners, n_arms = self.active.shape
        if self.threshold == "log":
            tau = np.where(self.active, self.counts, np.iinfo(np.int64).max).min(axis=1)
            return base_log_radius(self.gamma, self.sigma2, self.horizon, n_arms, tau)
        t_m = float(self.grid[self.batch])
        if t_m <= 0:
            return np.full(n_learners, np.inf)
        r = base_gao_radius(self.gamma, self.sigma2, self.horizon, n_arms, t_m)
        return np.where(np.all(~self.active | (self.counts > 0), axis=1), r, np.inf)

    def means(self) -> np.ndarray:
        """Cumulative sample mean of every arm of every learner.

        Returns
        -------
        numpy.ndarray
            (N, K) float means; ``-inf`` on eliminated or unsampled arms.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BatchedElimination(1, 3, np.array([0, 30, 90]))
        >>> learner.means().tolist()
        [[-inf, -inf, -inf]]
        >>> _ = learner.update(np.array([[8.0, 2.0, 1.0]]), np.array([[10, 10, 10]]))
        >>> learner.means().tolist()
        [[0.8, 0.2, 0.1]]
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            m = self.sums / self.counts
        return np.where(self.active & (self.counts > 0), m, -np.inf)

    @checks(sums=BATCH_SUMS, counts=WHOLE_COUNTS)
    def update(self, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Add one exploration batch's samples and eliminate.

        An active arm is eliminated once it has a sample and the best active mean is at least the learner's
        :meth:`radius` above its mean.

        Parameters
        ----------
        sums : numpy.ndarray
            (N, K) sums of the batch's samples.
        counts : numpy.ndarray
            (N, K) numbers of the batch's samples (0 on eliminated arms).

        Returns
        -------
        numpy.ndarray
            (N, K) bool mask of the arms eliminated by this batch.

        Raises
        ------
        RuntimeError
            If no exploration batch is left (the last batch commits, see :meth:`commit`).
        ConfigError
            If ``sums`` is not an (N, K) array of finite numbers, ``counts`` not an (N, K) array of non-negative
            integers (floats of integer value accepted), or ``counts`` gives samples to an eliminated arm (a
            ``ValueError`` too).

        Examples
        --------
        >>> import numpy as np
        >>> learner = BatchedElimination(2, 3, np.array([0, 30, 90]))
        >>> counts = np.full((2, 3), 10)
        >>> learner.update(counts * np.array([[0.9, 0.1, 0.1], [0.5, 0.5, 0.5]]), counts).tolist()
        [[False, True, True], [False, False, False]]
        >>> learner.update(counts * 0.5, counts)
        Traceback (most recent call last):
        ...
        RuntimeError: no exploration batch left: the last batch commits
        """
        if not self.exploring:
            raise RuntimeError("no exploration batch left: the last batch commits")
        sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=np.int64)
        # one row per learner and one column per arm: a row or a scalar would broadcast over every learner
        if sums.shape != self.active.shape or counts.shape != self.active.shape:
            raise ConfigError(
                f"sums and counts must have shape {self.active.shape}, got {_shown(sums)} and {_shown(counts)}"
            )
        if np.any(counts[~self.active] > 0):
            raise ConfigError(
                f"counts must be 0 on eliminated arms: samples given for an eliminated arm, got {_shown(counts)}"
            )
        self.sums += sums
        self.counts += counts
        self.batch += 1
        out = self.active & (self.counts > 0) & ~gap_survivors(self.means(), self.radius(), ties="eliminate")
        self.active &= ~out
        return out

    def commit(self) -> np.ndarray:
        """Each learner's active arm with the highest mean, played in the last batch.

        Returns
        -------
        numpy.ndarray
            (N,) int arm indices: the lowest index on ties, the first active arm if none was sampled.

        Examples
        --------
        >>> import numpy as np
        >>> learner = BatchedElimination(2, 3, np.array([0, 30, 90]))
        >>> learner.commit().tolist()
        [0, 0]
        >>> counts = np.full((2, 3), 10)
        >>> _ = learner.update(counts * np.array([[0.2, 0.1, 0.3], [0.5, 0.6, 0.5]]), counts)
        >>> learner.commit().tolist()
        [2, 1]
        """
        means = self.means()
        # an all -inf row (nothing sampled) falls back to the first active arm
        return np.where(np.isfinite(means.max(axis=1)), np.argmax(means, axis=1), np.argmax(self.active, axis=1))
