"""When each player is active: the global sequence ``x_1, x_2, ...`` of Algorithm 1 (paper 002, Sec. 2).

The players active at the global steps are i.i.d. draws from ``P_x``. :class:`ActivationClock` draws that
sequence in chunks (one vectorised call each, every chunk as long as all earlier ones together, drawn only
when a lookup needs it) and sorts each chunk by player once (a radix sort for up to 2^15 players), so that
"the global step of player n's j-th activation" and "how many times player n was active up to step t" are
array lookups for any set of players at once. The simulation never visits steps one by one: a player's block
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
        self._times: list[np.ndarray] = []  # per chunk: its steps (0-based, within the chunk) grouped by player
        self._start: list[np.ndarray] = []  # per chunk: offsets of the players' groups
        self._offset = [0]  # first step (0-based) of every chunk, then the end of the last one
        self._cum = np.zeros((1, n), np.int64)  # activations of each player before each chunk, and in total
        self._grow(min(self.max_steps, max(initial, 64 * n)))

    @property
    def horizon(self) -> int:
        """Number of steps drawn so far."""
        return self._offset[-1]

    def _grow(self, new_size: int) -> None:
        new_size = min(new_size, self.max_steps)
        chunk = self._sample(new_size - self.horizon, self._rng)
        counts = np.bincount(chunk, minlength=self.n)
        self._times.append(np.argsort(chunk, kind="stable"))
        self._start.append(np.concatenate(([0], np.cumsum(counts))))
        self._offset.append(new_size)
        self._cum = np.vstack([self._cum, self._cum[-1] + counts])

    def _extend(self, need: Callable[[], bool]) -> None:
        while need() and self.horizon < self.max_steps:
            self._grow(2 * self.horizon)

    def _lookup(self, who: np.ndarray, j: np.ndarray, inside: np.ndarray) -> np.ndarray:
        """Steps (1-based) of activations ``j`` of ``who`` where ``inside`` (all drawn already)."""
        out = np.zeros(who.shape, np.int64)
        w, jj = who[inside], j[inside]
        chunk = np.sum(self._cum[1:-1, w] < jj, axis=0) if self._cum.shape[0] > 2 else np.zeros(w.shape, int)
        vals = np.empty(w.shape, np.int64)
        for c in np.unique(chunk):
            sel = chunk == c
            pos = self._start[c][w[sel]] + jj[sel] - self._cum[c, w[sel]] - 1
            vals[sel] = self._times[c][pos] + self._offset[c] + 1
        out[inside] = vals
        return out

    def time_of(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Global step of the ``j``-th activation (1-based) of each player in ``who``; NEVER if past max_steps."""
        who, j = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(j, dtype=np.int64))
        self._extend(lambda: bool(np.any(j > self._cum[-1][who])))
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
        self._extend(lambda: bool(t.size) and int(t.max()) > self.horizon)
        chunk = np.clip(np.searchsorted(self._offset, t, side="left") - 1, 0, len(self._times) - 1)
        out = np.empty(who.shape, np.int64)
        for c in np.unique(chunk):
            sel = chunk == c
            w, local = who[sel], t[sel] - self._offset[c]  # steps < local (0-based) in chunk c
            lo, hi = self._start[c][w], self._start[c][w + 1]
            times = self._times[c]
            while np.any(lo < hi):  # vectorised bisection: first position of the group at or after ``local``
                mid = (lo + hi) // 2
                below = (lo < hi) & (times[np.minimum(mid, times.size - 1)] < local)
                lo, hi = np.where(below, mid + 1, lo), np.where(below | (lo >= hi), hi, mid)
            out[sel] = self._cum[c, w] + lo - self._start[c][w]
        return out


class IdentityClock:
    """The clock of one shared learner that pulls at every step (0-PRIVACY, spec 6.2): ``j``-th pull at step j."""

    n = 1

    def __init__(self, max_steps: int) -> None:
        self.max_steps = int(max_steps)

    def time_of(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        who, j = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(j, dtype=np.int64))
        return np.where((j >= 1) & (j <= self.max_steps), j, NEVER).astype(np.int64)

    def time_lower_bound(self, who: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.time_of(who, j)

    def count_upto(self, who: np.ndarray, t: np.ndarray) -> np.ndarray:
        who, t = np.broadcast_arrays(np.asarray(who, dtype=np.int64), np.asarray(t, dtype=np.int64))
        return np.clip(t, 0, self.max_steps).astype(np.int64)
