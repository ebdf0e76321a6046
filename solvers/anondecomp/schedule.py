"""Phase schedules: a fast structured decomposition into vertices of P_C(S).

Lay every user's required samples on one shared time line of length L (the lower bound for these arms):
user i spends a phase of at least ``r_ij`` consecutive assignments on each arm j it needs, phases stretched
evenly to fill L. Cutting the time line at every phase boundary of every user gives *slots*; within a slot
every user sits on one arm, so a slot is one assignment, and its length is its multiplicity. When every arm
holds at least C+1 users in every slot where someone needs it, every scheduled sample is informative, and
the decomposition has exactly L assignments: the lower bound, R / LB = 1.

This is Carathéodory's construction with the vertices chosen by a time-sharing rule (slot weights are
slot lengths / L). For a batched graph users with equal |A_i| share their phase boundaries, so there are at
most K(K+1)/2 + 1 slots, whatever N and D. Phase orders rotate each user's arms by an offset that cycles
over users with the same number of arms, which spreads every arm evenly over the phases; a slot that still
comes out thin is reported and the caller falls back to the exact Carathéodory procedure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anondecomp.result import arm_dtype

_CHUNK = 1 << 22


@dataclass(frozen=True)
class Schedule:
    """``assignments`` (n_slots, N), ``multiplicities`` (n_slots,), and the thin (slot, arm) pairs."""

    assignments: np.ndarray
    multiplicities: np.ndarray
    thin: np.ndarray  # (m, 2) slot and arm where a scheduled user has fewer than C+1 companions

    @property
    def valid(self) -> bool:
        return len(self.thin) == 0


def phase_schedule(
    required: np.ndarray, support: np.ndarray, C: int, rng: np.random.Generator | None = None
) -> Schedule:
    """Schedule integer demands ``required`` (N, K) on one time line of length ``max_i sum_j r_ij``.

    Users with no demand are parked on an arm of their support. ``rng`` randomises the rotation offsets
    (used for retries); without it the offsets are deterministic.
    """
    req = np.asarray(required, dtype=np.int64)
    N, K = req.shape
    need = req > 0
    k = need.sum(axis=1)  # phases per user
    kmax = int(k.max()) if N else 0
    L = int(req.sum(axis=1).max()) if N else 0
    # arms of each user in index order, padded; then rotate by an offset cycling within equal-k users
    order = np.argsort(~need, axis=1, kind="stable")[:, : max(kmax, 1)]
    if rng is None:
        rank = np.empty(N, dtype=np.int64)
        by_k = np.argsort(k, kind="stable")
        starts = np.searchsorted(k[by_k], k[by_k], side="left")
        rank[by_k] = np.arange(N) - starts
    else:
        rank = rng.integers(0, np.iinfo(np.int64).max, (N,))
    offset = np.where(k > 0, rank % np.maximum(k, 1), 0)
    col = (np.arange(max(kmax, 1))[None, :] + offset[:, None]) % np.maximum(k, 1)[:, None]
    order = np.take_along_axis(order, col, axis=1)
    valid_phase = np.arange(max(kmax, 1))[None, :] < k[:, None]
    lengths = np.where(valid_phase, np.take_along_axis(req, order, axis=1), 0)
    # stretch: spread the idle time L - sum_j r_ij evenly over the user's phases (Lemma 6's w(a))
    idle = L - lengths.sum(axis=1)
    kk = np.maximum(k, 1)
    extra = idle[:, None] // kk[:, None] + (np.arange(lengths.shape[1])[None, :] < (idle % kk)[:, None])
    lengths = np.where(valid_phase, lengths + extra, 0)
    ends = np.cumsum(lengths, axis=1)
    starts_ = ends - lengths
    # slot boundaries: every phase start of every user, plus L
    cuts = np.unique(np.concatenate([starts_[valid_phase], [0, L]]))
    n_slots = len(cuts) - 1
    mult = np.diff(cuts).astype(np.int64)
    # phase index of user i in slot t = number of its phase starts (after the first) at or before cut t
    marker = np.zeros((N, n_slots + 1), dtype=np.int16 if kmax < 32000 else np.int32)
    later = valid_phase.copy()
    later[:, 0] = False
    ui, pi = np.nonzero(later)
    marker[ui, np.searchsorted(cuts, starts_[ui, pi])] = 1
    phase = np.cumsum(marker[:, :n_slots], axis=1, dtype=marker.dtype)
    del marker
    parked = np.argmax(support, axis=1)  # users with no demand sit on their first support arm
    order = np.where(k[:, None] > 0, order, parked[:, None]).astype(arm_dtype(K))
    assignments = np.empty((n_slots, N), dtype=arm_dtype(K))
    thin_parts: list[np.ndarray] = []
    step = max(1, _CHUNK // max(N, 1))  # slots per chunk: bounds the int64 temporaries
    for lo in range(0, n_slots, step):
        block = np.take_along_axis(order, phase[:, lo : lo + step].astype(np.intp), axis=1).T
        assignments[lo : lo + step] = block
        t = _thin_slots(block, k > 0, K, C)
        t[:, 0] += lo
        thin_parts.append(t)
    thin = np.concatenate(thin_parts) if thin_parts else np.empty((0, 2), dtype=np.int64)
    return Schedule(assignments, mult, thin)


def _thin_slots(assignments: np.ndarray, scheduled: np.ndarray, K: int, C: int) -> np.ndarray:
    """(slot, arm) pairs where an arm holds between 1 and C users, one of whom is scheduled to learn there."""
    n, N = assignments.shape
    a = assignments.astype(np.int64)
    rows = np.arange(n, dtype=np.int64)[:, None] * K
    counts = np.bincount((rows + a).ravel(), minlength=n * K).reshape(n, K)
    wanted = np.zeros(n * K, dtype=bool)
    wanted[(rows + a)[:, scheduled].ravel()] = True
    return np.argwhere((counts <= C) & (counts > 0) & wanted.reshape(n, K))
