"""The release ledger of the single-learner private bandit algorithms: which block of rewards fed which privatized
statistic, so that tests can check that a reward is used in at most one release.

The algorithms of :mod:`anonbandits.dp` simulate *event by event*: a block of consecutive rounds with a fixed arm
(or cycle of arms) is one call whose rewards enter only through their sum; :class:`Ledger` records each such block
and the release it fed, and a run returns it in ``Result.info["ledger"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field, fields
from typing import Any, SupportsInt

import numpy as np

from anonbandits._docstrings import filled_dataclass
from anonbandits.errors import ConfigError, _shown
from anonbandits.validation import FINITE_ARRAY, NONNEGATIVE_COUNT, NONNEGATIVE_FINITE, Rule, checks, int_between

__all__ = ["Ledger"]


def _vector(value: Any, kinds: str) -> np.ndarray:
    # a ragged list makes np.ndim raise ValueError: the rules count that as a refusal
    if isinstance(value, str | bytes | Mapping) or np.ndim(value) != 1:
        raise TypeError("not a 1-D sequence")
    a = np.asarray(value)
    if a.size and a.dtype.kind not in kinds:
        raise TypeError("not numbers of that kind")
    return a


def _ids(low: int) -> Rule:
    """A 1-D sequence (list, range, array) of integers from ``low`` to 2^62, possibly empty."""
    return Rule(
        lambda v: bool(np.all((_vector(v, "iu") >= low) & (_vector(v, "iu") <= 2**62))),
        f"a 1-D sequence of integers >= {low}",
    )


#: a block's arm (-1: whole reward vectors) and a block's sum (a number, or K sums in the experts setting)
_ARM = int_between(-1, 2**62)
_BLOCK_SUM = Rule(
    lambda v: FINITE_ARRAY.test(v) and np.ndim(v) <= 1, "a finite number or a 1-D array of finite numbers"
)
_SUMS = Rule(lambda v: bool(np.all(np.isfinite(_vector(v, "iuf")))), "a 1-D sequence of finite numbers")


@filled_dataclass
class Ledger:
    """Which rewards fed which privatized statistic.

    A *block* is a set of rewards of one arm (or, in the experts setting, the whole reward vectors of a set
    of rounds, ``arm = -1``) entered into the algorithm as one sum. A *release* computes noisy statistics
    from blocks; each of its noisy sums is one row of the ``noise_*`` columns (arm, true sum, noise draw,
    Laplace scale). :meth:`release` refuses (``RuntimeError``) a block that already fed a release, so the rule
    "each reward is used in at most one released statistic" is enforced when the run happens and checkable
    afterwards. Every field is a column (a list), one entry per block (``block_*``), per release
    (``release_round``) or per noisy sum (``noise_*``); a new ledger starts empty.

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

    Raises
    ------
    ConfigError
        If a column is not a list, or the columns of the blocks (or of the noisy sums) differ in length.

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

    def __post_init__(self) -> None:
        for column in fields(self):
            value = getattr(self, column.name)
            if not isinstance(value, list):
                raise ConfigError(f"{column.name} must be a list (a column of the ledger), got {_shown(value)}")
        for prefix in ("block_", "noise_"):
            lengths = {c.name: len(getattr(self, c.name)) for c in fields(self) if c.name.startswith(prefix)}
            if len(set(lengths.values())) > 1:
                raise ConfigError(f"the {prefix}* columns must have one length, got lengths {lengths}")

    @checks(arm=_ARM, count=NONNEGATIVE_COUNT, reward_sum=_BLOCK_SUM)
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

        Raises
        ------
        ConfigError
            If ``arm`` is not an integer >= -1, ``count`` is not a non-negative integer (bools and floats are
            refused), or ``reward_sum`` is not a finite number or a 1-D array of finite numbers.

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

    @checks(
        blocks=_ids(0), arms=_ids(-1), true_sums=_SUMS, noises=_SUMS, scale=NONNEGATIVE_FINITE, round_=NONNEGATIVE_COUNT
    )
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
            Ids of the blocks (from :meth:`block`) whose rewards fed the release, distinct; each may feed one
            release only.
        arms : sequence of int
            The arm of each noisy sum released (-1 or more).
        true_sums : sequence of float
            The exact sum behind each noisy sum, one per arm.
        noises : sequence of float
            The noise added to each, one per arm.
        scale : float
            The Laplace scale of that noise (one for the whole release; 0 for no noise).
        round_ : int
            The round of the release (a non-negative integer).

        Returns
        -------
        int
            The release's id, its index in ``release_round``.

        Raises
        ------
        ConfigError
            If ``blocks`` is not a 1-D sequence of distinct ids of recorded blocks, ``arms`` a 1-D sequence of
            integers >= -1, ``true_sums`` and ``noises`` 1-D sequences of finite numbers of the length of ``arms``,
            ``scale`` a finite number >= 0 or ``round_`` a non-negative integer (nothing is recorded then).
        RuntimeError
            If one of ``blocks`` already fed a release (nothing is recorded then): a reward would be used twice.

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
        ids = [int(b) for b in blocks]
        if len(set(ids)) != len(ids) or not all(0 <= b < len(self.block_release) for b in ids):
            raise ConfigError(
                f"blocks must be distinct ids of the {len(self.block_release)} recorded blocks, got {_shown(blocks)}"
            )
        n = len(arms)
        if len(true_sums) != n or len(noises) != n:
            raise ConfigError(
                "arms, true_sums and noises must have one length (one noisy sum each), got lengths "
                f"{n}, {len(true_sums)} and {len(noises)}"
            )
        for b in ids:  # all checked before any is marked: a refused release records nothing
            if self.block_release[b] != -1:
                raise RuntimeError(f"block {b} already fed release {self.block_release[b]}")
        rid = len(self.release_round)
        for b in ids:
            self.block_release[b] = rid
        self.release_round.append(int(round_))
        self.noise_release.extend([rid] * n)
        self.noise_arm.extend(int(a) for a in arms)
        self.noise_true_sum.extend(float(s) for s in true_sums)
        self.noise_value.extend(float(z) for z in noises)
        self.noise_scale.extend([float(scale)] * n)
        return rid

    @property
    def releases(self) -> int:
        """The number of releases recorded."""
        return len(self.release_round)
