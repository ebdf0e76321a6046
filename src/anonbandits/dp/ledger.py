"""The release ledger of the single-learner private bandit algorithms: which block of rewards fed which privatized
statistic, so that tests can check that a reward is used in at most one release.

The algorithms of :mod:`anonbandits.dp` simulate *event by event*: a block of consecutive rounds with a fixed arm
(or cycle of arms) is one call whose rewards enter only through their sum; :class:`Ledger` records each such block
and the release it fed, and a run returns it in ``Result.info["ledger"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import SupportsInt

import numpy as np

from anonbandits._docstrings import filled_dataclass

__all__ = ["Ledger"]


@filled_dataclass
class Ledger:
    """Which rewards fed which privatized statistic.

    A *block* is a set of rewards of one arm (or, in the experts setting, the whole reward vectors of a set
    of rounds, ``arm = -1``) entered into the algorithm as one sum. A *release* computes noisy statistics
    from blocks; each of its noisy sums is one row of the ``noise_*`` columns (arm, true sum, noise draw,
    Laplace scale). :meth:`release` refuses (``RuntimeError``) a block that already fed a release, so the rule
    "each reward is used in at most one released statistic" is enforced when the run happens and checkable
    afterwards. Every field is a column, one entry per block (``block_*``), per release (``release_round``)
    or per noisy sum (``noise_*``); a new ledger starts empty.

    Parameters
    ----------
    block_arm : list of int, optional
        The arm of each block (-1: whole reward vectors).
    block_count : list of int, optional
        The number of rewards (rounds) of each block.
    block_sum : list of numpy.ndarray, optional
        The sum of each block's rewards (a vector of K sums in the experts setting).
    block_release : list of int, optional
        The release each block fed, -1 while unused.
    release_round : list of int, optional
        The round of each release.
    noise_release : list of int, optional
        The release of each noisy sum.
    noise_arm : list of int, optional
        The arm of each noisy sum.
    noise_true_sum : list of float, optional
        The exact sum behind each noisy sum.
    noise_value : list of float, optional
        The noise added to it.
    noise_scale : list of float, optional
        The Laplace scale of that noise.

    {{refs_paper001}}

    Examples
    --------
    >>> ledger = Ledger()
    >>> block = ledger.block(arm=0, count=3, reward_sum=2.0)
    >>> ledger.release([block], arms=[0], true_sums=[2.0], noises=[0.5], scale=1.0, round_=3)
    0
    >>> ledger.releases, ledger.block_release
    (1, [0])
    """

    block_arm: list[int] = field(default_factory=list)
    block_count: list[int] = field(default_factory=list)
    block_sum: list[np.ndarray] = field(default_factory=list)
    block_release: list[int] = field(default_factory=list)
    release_round: list[int] = field(default_factory=list)
    noise_release: list[int] = field(default_factory=list)
    noise_arm: list[int] = field(default_factory=list)
    noise_true_sum: list[float] = field(default_factory=list)
    noise_value: list[float] = field(default_factory=list)
    noise_scale: list[float] = field(default_factory=list)

    def block(self, arm: SupportsInt, count: SupportsInt, reward_sum: float | np.ndarray) -> int:
        """Record a block of ``count`` rewards of ``arm`` summing to ``reward_sum``, not yet used by a release.

        Parameters
        ----------
        arm : int
            The arm whose rewards these are (-1: whole reward vectors, the experts setting).
        count : int
            Number of rewards (rounds) in the block.
        reward_sum : float or numpy.ndarray
            Their sum (a vector of K sums in the experts setting).

        Returns
        -------
        int
            The block's id, its index in the ``block_*`` columns.

        Examples
        --------
        >>> ledger = Ledger()
        >>> ledger.block(arm=1, count=4, reward_sum=3.0), ledger.block(arm=0, count=2, reward_sum=1.0)
        (0, 1)
        >>> ledger.block_arm, ledger.block_release
        ([1, 0], [-1, -1])
        """
        self.block_arm.append(int(arm))
        self.block_count.append(int(count))
        self.block_sum.append(np.asarray(reward_sum, dtype=float))
        self.block_release.append(-1)
        return len(self.block_arm) - 1

    def release(
        self,
        blocks: Sequence[int],
        arms: Sequence[SupportsInt] | np.ndarray,
        true_sums: Sequence[float] | np.ndarray,
        noises: Sequence[float] | np.ndarray,
        scale: float,
        round_: int,
    ) -> int:
        """Record one release at round ``round_`` fed by ``blocks``: noisy sums ``true_sums + noises``.

        Parameters
        ----------
        blocks : sequence of int
            Ids of the blocks (from :meth:`block`) whose rewards fed the release; each may feed one release only.
        arms : sequence of int
            The arm of each noisy sum released.
        true_sums : sequence of float
            The exact sum behind each noisy sum.
        noises : sequence of float
            The noise added to each.
        scale : float
            The Laplace scale of that noise (one for the whole release).
        round_ : int
            The round of the release.

        Returns
        -------
        int
            The release's id, its index in ``release_round``.

        Raises
        ------
        RuntimeError
            If one of ``blocks`` already fed a release (the blocks before it are then marked with this release).

        Examples
        --------
        >>> ledger = Ledger()
        >>> first = ledger.block(arm=0, count=2, reward_sum=1.0)
        >>> ledger.release([first], arms=[0], true_sums=[1.0], noises=[-0.25], scale=0.5, round_=2)
        0
        >>> ledger.noise_arm, ledger.noise_value, ledger.noise_scale
        ([0], [-0.25], [0.5])
        >>> ledger.release([first], arms=[0], true_sums=[1.0], noises=[0.0], scale=0.5, round_=4)
        Traceback (most recent call last):
        ...
        RuntimeError: block 0 already fed release 0
        """
        rid = len(self.release_round)
        for b in blocks:
            if self.block_release[b] != -1:
                raise RuntimeError(f"block {b} already fed release {self.block_release[b]}")
            self.block_release[b] = rid
        self.release_round.append(int(round_))
        n = len(arms)
        self.noise_release.extend([rid] * n)
        self.noise_arm.extend(int(a) for a in arms)
        self.noise_true_sum.extend(float(s) for s in true_sums)
        self.noise_value.extend(float(z) for z in noises)
        self.noise_scale.extend([float(scale)] * n)
        return rid

    @property
    def releases(self) -> int:
        return len(self.release_round)
