"""The protocol every batched learner speaks to a driver (:class:`BatchLearner`; see
:mod:`anonbandits.core.learners`), the variance proxy of rewards in [0, 1] and what every learner's update
shares: the check of a batch and the random tie-break."""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, _shown, require

#: Variance proxy of one reward in [0, 1] (Hoeffding): the scale the papers' radii are written for.
UNIT_SIGMA2 = 0.25


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
    >>> from anonbandits.core.learners import EpochElimination
    >>> isinstance(EpochElimination(1, 2, confidence=0.1), BatchLearner)
    True
    """

    n_learners: int
    n_arms: int

    @property
    def sigma2(self) -> float: ...  # read only: BaSE's is a property of its batched core

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
        >>> from anonbandits.core.learners import EpochElimination
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
        >>> from anonbandits.core.learners import EpochElimination
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
        >>> from anonbandits.core.learners import EpochElimination
        >>> learner: BatchLearner = EpochElimination(2, 3, confidence=0.2)
        >>> learner.recommendation().shape
        (2,)
        """
        ...


def _check_batch(
    sums: np.ndarray, counts: np.ndarray, wanted: np.ndarray, sigma2: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(sums, counts)`` as arrays after checking they are the batch that was asked for (a ``ConfigError``,
    which is a ``ValueError`` too, otherwise)."""
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=np.int64)
    if sums.shape != wanted.shape or counts.shape != wanted.shape:
        raise ConfigError(f"sums and counts must have shape {wanted.shape}, got {_shown(sums)} and {_shown(counts)}")
    if not np.array_equal(counts, wanted):
        i, j = np.argwhere(counts != wanted)[0]
        raise ConfigError(
            f"counts must equal the demand: learner {i} asked for {wanted[i, j]} samples of arm {j} and got "
            f"{counts[i, j]}: discard surplus samples before the update"
        )
    require(sigma2 > 0 and math.isfinite(sigma2), "sigma2", "a positive finite variance proxy", sigma2)
    return sums, counts


def _argmax_random_ties(values: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N,) index of the largest of ``values`` among ``mask`` in each row, ties broken uniformly at random."""
    v = np.where(mask, values, -np.inf)
    top = v == v.max(axis=1, keepdims=True)
    return np.argmax(np.where(top & mask, rng.random(v.shape), -1.0), axis=1)
