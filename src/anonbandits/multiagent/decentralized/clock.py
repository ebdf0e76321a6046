"""When each player is active: the global sequence ``x_1, x_2, ...`` of Algorithm 1 (paper 002, Sec. 2).

The players active at the global steps are i.i.d. draws from ``P_x``. :class:`ActivationClock` draws that
sequence in chunks (one vectorised call each, drawn only when a lookup needs it and sized to what it needs)
and sorts each chunk by player once (a radix sort for up to 2^15 players), so that "the global step of player
n's j-th activation" (one gather) and "how many times player n was active up to step t" (one binary search)
are array lookups for any set of players at once. The simulation never visits steps one by one: a player's block
of pulls ends at a looked-up step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: A step that never comes (beyond ``max_steps``).
NEVER = np.int64(2**62)


class ActivationClock:
    """Activation times of ``n`` players, from i.i.d. player draws (steps are 1-based).

    Parameters
    ----------
    sample : ``sample(size, rng)`` returns ``size`` player ids (see ``activity_sampler``).
    n : number of players.
    rng : the generator the player sequence is drawn from (its own stream, spec A20).
    max_steps : the sequence never extends past this step; later activations are at :data:`NEVER`.
    """

    def __init__(self, sample: Callable[[int, np.random.Generator], np.ndarray], n: int,
                 rng: np.random.Generator, max_steps: int, initial: int = 1 << 15) -> None:
        self._sample, self.n, self._rng, self.max_steps = sample, n, rng, int(max_steps)
        # All drawn steps as keys ``player * _scale + step``, chunk after chunk, each chunk sorted by key: a
        # chunk covers the steps ``_offset[c] + 1 .. _offset[c + 1]`` and the same positions of ``_keys``.
        self._scale = int(NEVER) // max(n, 1)
        self._keys = np.empty(0, np.int64)
        self._offset = [0]  # first step (0-based) of every chunk, then the end of the last one
        self._cum = np.zeros((1, n), np.int64)  # activations of each player before each chunk, and in total
        self._base = np.zeros((0, n), np.int64)  # position of player w's j-th activation in chunk c: base + j - 1
        self._grow(min(self.max_steps, max(initial, 64 * n)))

    @property
    def horizon(self) -> int:
        """Number of steps drawn so far."""
        return self._offset[-1]

    def _grow(self, new_size: int) -> None:
        new_size = min(new_size, self.max_steps)
        first = self.horizon
        chunk = self._sample(new_size - first, self._rng)
        counts = np.bincount(chunk, minlength=self.n)
        order = np.argsort(chunk, kind="stable")  # radix sort for up to 2^15 players
        if new_size > self._keys.size:  # capacity doubles: every key is copied at most once more on average
            keys = np.empty(min(max(new_size, 2 * self._keys.size), self.max_steps), np.int64)
            keys[:first] = self._keys[:first]
            self._keys = keys
        players = np.repeat(np.arange(self.n, dtype=np.int64) * self._scale, counts)
        np.add(players, order + (first + 1), out=self._keys[first:new_size])
        start = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self._base = np.vstack([self._base, first + start - self._cum[-1]])
        self._offset.append(new_size)
        self._cum = np.vstack([self._cum, self._cum[-1] + counts])

    def _extend(self, who: np.ndarray, j: np.ndarray) -> None:
        """Draw steps until every player in ``who`` has ``j`` activations (or ``max_steps`` is reached).

        Each chunk aims at the steps the largest deficit needs at the player's observed rate (at least
        1/4 and at most all of the steps drawn so far): drawing far beyond the stopping step is the main
        cost of runs with long blocks, and the chunk sizes do not change the law of the sequence; every
        lookup compares with each chunk, hence the 1/4."""
        while self.horizon < self.max_steps:
            have = self._cum[-1][who]
            short = j > have
            if not short.any():
                return
            rate = np.maximum(have[short], 1) / self.horizon
            want = self.horizon + int(np.max((j[short] - have[short]) / rate) * 1.05) + 64
            self._grow(min(max(want, self.horizon + self.horizon // 4), 2 * self.horizon))

    def _lookup(self, who: np.ndarray, j: np.ndarray, inside: np.ndarray) -> np.ndarray:
        """Steps (1-based) of activations ``j`` of ``who`` where ``inside`` (all drawn already), else 0."""
        j = np.where(inside, j, 1)
        last = self._cum.shape[0] - 2
        chunk = np.full(who.shape, last, np.intp)
        for c in range(last, 0, -1):  # from the newest chunk back: lookups are mostly of recent activations
            earlier = self._cum[c][who] >= j
            if not earlier.any():
                break
            chunk -= earlier
        pos = np.where(inside, self._base[chunk, who] + j - 1, 0)
        return np.where(inside, self._keys[pos] - who * self._scale, 0)

    def time_of(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Global step of the ``j``-th activation (1-based) of each player in ``who``; NEVER if past max_steps."""
        who, j = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(j, dtype=np.int64))
        self._extend(who, j)
        inside = (j >= 1) & (j <= self._cum[-1][who])
        return np.where(inside, self._lookup(who, j, inside), NEVER)

    def time_lower_bound(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Like :meth:`time_of`, but never draws more steps: past the drawn part of the sequence, the
        ``j``-th activation is at least ``horizon + (j - activations drawn)`` (one step per activation)."""
        who, j = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(j, dtype=np.int64))
        have = self._cum[-1][who]
        inside = (j >= 1) & (j <= have)
        return np.where(inside, self._lookup(who, j, inside), np.maximum(self.horizon + (j - have), 1))

    def count_upto(self, who: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Number of activations of each player in ``who`` at steps ``<= t``."""
        who, t = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(t, dtype=np.int64))
        t = np.clip(t, 0, self.max_steps)
        while t.size and int(t.max()) > self.horizon and self.horizon < self.max_steps:
            self._grow(min(max(int(t.max()), self.horizon + self.horizon // 4), 2 * self.horizon))
        chunk = np.clip(np.searchsorted(self._offset, t, side="left") - 1, 0, len(self._offset) - 2)
        out = np.empty(who.shape, np.int64)
        for c in np.unique(chunk):  # usually one chunk: the queries share the step t
            sel = chunk == c
            w = who[sel]
            lo, hi = self._offset[c], self._offset[c + 1]
            # a chunk's keys are sorted: the activations of w at steps <= t end at this position
            end = np.searchsorted(self._keys[lo:hi], w * self._scale + t[sel], side="right") + lo
            out[sel] = end - self._base[c, w]
        return out


class IdentityClock:
    """The clock of one shared learner that pulls at every step (0-PRIVACY, spec 6.2): ``j``-th pull at step j."""

    n = 1

    def __init__(self, max_steps: int) -> None:
        self.max_steps = int(max_steps)

    @property
    def horizon(self) -> int:
        """Every step is known without drawing anything."""
        return self.max_steps

    def time_of(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        who, j = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(j, dtype=np.int64))
        return np.where((j >= 1) & (j <= self.max_steps), j, NEVER).astype(np.int64)

    def time_lower_bound(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.time_of(who, j)

    def count_upto(self, who: np.ndarray, t: np.ndarray) -> np.ndarray:
        who, t = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(t, dtype=np.int64))
        return np.clip(t, 0, self.max_steps).astype(np.int64)
