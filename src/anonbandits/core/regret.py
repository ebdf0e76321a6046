"""The one record of cumulative pseudo-regret of the bandit layer: every family's regret curve comes from it.

Drivers simulate blocks of rounds, not single rounds: a block plays a fixed arm, or a fixed tuple of arms
cyclically (successive elimination's round-robin epochs), or a fixed assignment of N users whose per-round regret
is one number (the anonymous channel, paper 004's blocks of users). :class:`RegretTrace` keeps the blocks and
evaluates the cumulative pseudo-regret exactly at any rounds: the partial sums of the arms' cycle inside a block
recorded by :meth:`~RegretTrace.play`, linear interpolation between the ends of the blocks recorded by
:meth:`~RegretTrace.charge` (exact, as their regret is linear).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from anonbandits.core._rules import ARM_CYCLE
from anonbandits.errors import ConfigError, _shown
from anonbandits.validation import COUNTS, INT_ARRAY, INTEGER, SUMS, array_of, checks, optional


class RegretTrace:
    """Exact cumulative pseudo-regret of a sequence of blocks of rounds.

    :meth:`play` records a block playing a cycle of arms, :meth:`charge` blocks of a fixed per-round regret,
    :meth:`curve` evaluates the cumulative pseudo-regret at any recorded rounds (``ValueError`` outside them).

    Parameters
    ----------
    gaps : numpy.ndarray or None, optional
        (K,) the regret of one round on each arm (finite, >= 0), for :meth:`play`; ``None`` (the default) when
        only :meth:`charge` is used.

    Attributes
    ----------
    rounds : int
        Rounds recorded so far.
    regret : float
        Cumulative pseudo-regret after them (the blocks' regrets added in order).
    pulls : numpy.ndarray or None
        (K,) rounds each arm was played (with ``gaps``).

    Raises
    ------
    ConfigError
        If ``gaps`` is neither ``None`` nor a non-empty 1-D array of finite numbers >= 0.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (pseudo-regret
    summed over users).

    Examples
    --------
    >>> import numpy as np
    >>> trace = RegretTrace(np.array([0.0, 0.5]))
    >>> trace.play([0, 1], 5)  # arms 0, 1, 0, 1, 0
    >>> trace.charge(np.array([4]), np.array([2.0]))
    >>> trace.rounds, float(trace.regret), trace.pulls.tolist()
    (9, 9.0, [3, 2])
    >>> trace.curve(np.array([0, 2, 5, 7, 9])).tolist()
    [0.0, 0.5, 1.0, 5.0, 9.0]
    """

    @checks(gaps=optional(array_of("iuf", "a non-empty 1-D array of finite numbers >= 0", low=0, size=1)))
    def __init__(self, gaps: np.ndarray | None = None) -> None:
        self.gaps = None if gaps is None else np.asarray(gaps, dtype=float)
        self.pulls = None if self.gaps is None else np.zeros(self.gaps.size, dtype=np.int64)
        self.rounds, self.regret = 0, 0.0
        self._first: list[np.ndarray] = []  # first round of each block
        self._total: list[np.ndarray] = []  # regret of each block
        self._cycles: dict[int, tuple[int, float, np.ndarray]] = {}  # played block -> (first, before, cycle sums)
        self._blocks = 0

    @checks(arms=ARM_CYCLE, rounds=INTEGER)
    def play(self, arms: int | Sequence[int] | np.ndarray, rounds: int) -> None:
        """Record ``rounds`` rounds playing ``arms`` cyclically (in the given order), from the next round.

        Parameters
        ----------
        arms : int, sequence of int or numpy.ndarray
            The arm, or the non-empty cycle of arms, played (indices from 0 to K - 1 into ``gaps``; the trace
            needs ``gaps``).
        rounds : int
            Number of rounds of the block; nothing is recorded when it is not positive.

        Raises
        ------
        TypeError
            If the trace was made without ``gaps`` (it then records charged blocks only).
        ConfigError
            If ``arms`` is not an arm index from 0 to K - 1 or a non-empty 1-D array of them, or ``rounds`` is
            not an integer of at most 2^62 in absolute value.

        Examples
        --------
        >>> import numpy as np
        >>> trace = RegretTrace(np.array([0.0, 1.0, 0.5]))
        >>> trace.play([1, 2], 3)  # arms 1, 2, 1
        >>> trace.rounds, float(trace.regret), trace.pulls.tolist()
        (3, 2.5, [0, 2, 1])
        """
        if rounds <= 0:
            return
        if self.gaps is None or self.pulls is None:
            raise TypeError("RegretTrace.play needs the arms' gaps: RegretTrace(gaps)")
        arms = np.atleast_1d(np.asarray(arms, dtype=np.int64))
        full, rem = divmod(int(rounds), arms.size)
        try:
            cum = np.concatenate((np.zeros(1), np.cumsum(self.gaps[arms])))
        except IndexError:  # an arm past K (the checks above refuse negative ones, which would wrap)
            raise ConfigError(f"arms must be arm indices from 0 to {self.gaps.size - 1}, got {_shown(arms)}") from None
        self._cycles[self._blocks] = (self.rounds, self.regret, cum)
        total = full * cum[-1] + cum[rem]
        self._first.append(np.array([self.rounds]))
        self._total.append(np.array([total]))
        self._blocks += 1
        self.pulls[arms] += full
        self.pulls[arms[:rem]] += 1
        self.rounds += int(rounds)
        self.regret += total

    @checks(rounds=COUNTS, rates=SUMS)
    def charge(self, rounds: np.ndarray, rates: np.ndarray) -> None:
        """Record blocks of ``rounds[i]`` rounds, each round of block i costing ``rates[i]``.

        A rate is a fixed assignment's per-round regret summed over its users.

        Parameters
        ----------
        rounds : numpy.ndarray
            (B,) non-negative number of rounds of each block, in order.
        rates : numpy.ndarray
            (B,) regret of one round of each block.

        Raises
        ------
        ConfigError
            If ``rounds`` is not a 1-D array of non-negative integers, ``rates`` not a 1-D array of finite
            numbers, or the two differ in length.

        Examples
        --------
        >>> import numpy as np
        >>> trace = RegretTrace()
        >>> trace.charge(np.array([2, 3]), np.array([1.0, 0.5]))
        >>> trace.rounds, float(trace.regret)
        (5, 3.5)
        """
        rounds, rates = np.asarray(rounds, dtype=np.int64), np.asarray(rates, dtype=float)
        if rounds.shape != rates.shape:  # one rate per block: a single rate would broadcast over every block
            raise ConfigError(
                f"rounds and rates must have one entry per block, got {_shown(rounds)} and {_shown(rates)}"
            )
        ends = self.rounds + np.cumsum(rounds)
        self._first.append(ends - rounds)
        self._total.append(rounds * rates)
        self._blocks += rounds.size
        self.rounds = int(ends[-1]) if ends.size else self.rounds
        self.regret += float(rounds @ rates)

    @checks(rounds=INT_ARRAY)
    def curve(self, rounds: np.ndarray) -> np.ndarray:
        """Cumulative pseudo-regret after each of ``rounds``.

        Parameters
        ----------
        rounds : numpy.ndarray
            Rounds at which to evaluate it, each in ``[0, rounds recorded]``.

        Returns
        -------
        numpy.ndarray
            Float cumulative pseudo-regret after each of ``rounds``, of the shape of ``rounds``.

        Raises
        ------
        ConfigError
            If ``rounds`` is not an integer or an array of integers, or a round lies outside
            ``[0, rounds recorded]`` (a ``ValueError`` too).

        Examples
        --------
        >>> import numpy as np
        >>> trace = RegretTrace(np.array([0.0, 1.0]))
        >>> trace.play([0, 1], 4)
        >>> trace.curve(np.array([0, 1, 2, 4])).tolist()
        [0.0, 0.0, 1.0, 2.0]
        """
        shape, rounds = np.shape(rounds), np.asarray(rounds, dtype=np.int64).ravel()
        if rounds.size and (rounds.min() < 0 or rounds.max() > self.rounds):
            raise ConfigError(f"rounds must lie in [0, {self.rounds}], got {_shown(rounds)}")
        first = np.concatenate([*self._first, np.array([self.rounds], np.int64)])  # block starts, then the end
        # linear between block ends (the block regrets added in order): exact for a charged block
        out = np.interp(rounds, first, np.cumsum(np.concatenate([np.zeros(1), *self._total])))
        if self._cycles:  # inside a played block, the partial sums of its cycle of arms
            seg = np.searchsorted(first[:-1], rounds, side="left") - 1
            for j in np.flatnonzero(np.isin(seg, list(self._cycles))):
                start, regret_before, cum = self._cycles[int(seg[j])]
                full, rem = divmod(int(rounds[j] - start), cum.size - 1)
                out[j] = regret_before + full * cum[-1] + cum[rem]
        return out.reshape(shape)
