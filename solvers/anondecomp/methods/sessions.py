"""Sessions: an arm-by-arm calendar for large sparse logs, in time and memory linear in the interactions.

Beyond paper 000. A decomposition of length L is a calendar of L rounds; user i spends each round on one arm
of its support. Here every arm is scheduled as a few *sessions*: rounds in which at least C+1 of its users
sit on it together, so each of them gets an informative sample. Arms are taken thinnest first (an arm with
few users needs nearly all of them in one round, which is easiest while the calendar is empty). For arm j:

1. **Most free round.** Among the users that still need samples of j, count those free in each round; if
   some round has C+1 of them, the session goes there and serves every one of them free in it.
2. **Padded session.** Otherwise the round where most of them are free and enough other users of j
   (served already, or without demand on j) are free to fill the group; padders are taken with the most
   slack first (free rounds left beyond their remaining demand), so a padder rarely costs a sample later.
3. **New round.** If no round can hold a group, the calendar grows by one round (every user free in it).

The calendar starts at the lower bound L = max_i sum_j ceil(w_ij) and grows only in step 3, so R = L when no
arm ever needs a new round. A user free in a round sits on its first support arm (it pads whatever group is
there, or idles on an arm that is not informative then). Every group holds C+1 users by construction (step 1
counts them, step 2 pads to them, step 3 seats all of an arm's >= C+1 users), so no repair pass follows; the
tests check every result with the exact verifier. Memory: the (N, L) free-round table and the (L, N)
calendar itself, i.e. O(users x rounds) = O(users x distinct assignments), plus O(edges); time: one pass over
each arm's users per session, about O(edges x L) byte operations in all.

:func:`~anondecomp.methods.auto.auto_decomposition` uses it for logs whose least-slack rounds would be slow
(:data:`LARGE_EDGES` edges or more); ``method="sessions"`` asks for it on any graph.
"""

from __future__ import annotations

import time

import numpy as np

from anondecomp.errors import InvalidInputError, SolverError
from anondecomp.graph import DemandGraph
from anondecomp.methods._common import park
from anondecomp.result import Decomposition, arm_dtype
from anondecomp.validation import Prepared, check_capacity, prepare

LARGE_EDGES = 200_000
"""Edges from which ``auto`` schedules a log by sessions rather than by least-slack rounds (at 4 x 10^5 edges
least-slack rounds take about 40 s, sessions about 1 s)."""


class _Calendar:
    """The rounds built so far: who is free when, and the arm of every busy (round, user)."""

    def __init__(self, n_users: int, rounds: int, dtype: np.dtype):
        self.free = np.ones((n_users, max(rounds, 1)), dtype=bool)
        self.arm = np.full((max(rounds, 1), n_users), -1, dtype=dtype)

    @property
    def rounds(self) -> int:
        return self.free.shape[1]

    def grow(self) -> int:
        """Add a round in which every user is free; its index."""
        self.free = np.concatenate([self.free, np.ones((self.free.shape[0], 1), dtype=bool)], axis=1)
        self.arm = np.concatenate([self.arm, np.full((1, self.arm.shape[1]), -1, dtype=self.arm.dtype)])
        return self.rounds - 1

    def seat(self, users: np.ndarray, t: int, j: int) -> None:
        self.arm[t, users] = j
        self.free[users, t] = False


def _pick(counts: np.ndarray, ok: np.ndarray, offset: int | np.integer) -> int:
    """The round of largest ``counts`` among ``ok`` (-1 if none); ties go to the first round from ``offset``
    on, so arms with equal counts spread over the calendar instead of piling into round 0."""
    if not ok.any():
        return -1
    L = len(counts)
    key = np.where(ok, counts.astype(np.int64) * L + (L - 1 - (np.arange(L) - offset) % L), -1)
    return int(np.argmax(key))


def session_rounds(
    prep: Prepared, padders: str = "slack", capacity: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, dict]:
    """(assignments (R, N), multiplicities (R,), info) of the session calendar of ``prep``'s demand (module
    docstring); ``info`` counts the sessions, the padded ones and the rounds added beyond the lower bound.

    ``padders="surplus"`` takes the padders that have padded least so far first (then the most slack): the
    surplus exposure is spread more evenly, at the cost of more rounds (:mod:`anondecomp.exposure`; OBD at
    C = 50: largest surplus 447 against 470 after re-seating, R 1570 against 1335). With ``capacity`` ((K,) int,
    each >= C+1), a session seats at most its arm's capacity of users (:mod:`anondecomp.capacity`)."""
    graph, C1 = prep.graph, prep.C + 1
    N, K = graph.shape
    rem = prep.edge_required.copy()
    by_arm = graph.arm_order
    start = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(graph.arm_degrees, out=start[1:])
    left = np.bincount(graph.edge_users, weights=rem, minlength=N).astype(np.int64)  # demand left per user
    lower = prep.lower_bound
    cal = _Calendar(N, lower, arm_dtype(K))
    spare = cal.rounds - left  # free rounds not needed
    padded_by = np.zeros(N, dtype=np.int64)  # sessions each user has padded
    demand = np.bincount(graph.edge_arms, weights=rem > 0, minlength=K)
    arms = np.flatnonzero(demand > 0)
    arms = arms[np.argsort(graph.arm_degrees[arms], kind="stable")]  # thinnest first
    sessions = padded = 0
    for j in arms:
        e = by_arm[start[j] : start[j + 1]]
        u = graph.edge_users[e].astype(np.int64)
        needing = rem[e] > 0
        free = cal.free[u]  # this arm's users' rows, kept in step with cal
        count_need = free[needing].sum(axis=0)
        count_all = free.sum(axis=0)
        while needing.any():
            t = _pick(count_need, count_need >= C1, j)
            pads = np.empty(0, dtype=np.int64)
            if t < 0:  # a padded session: where most needing users are free and the others can fill the group
                t = _pick(count_need, (count_need > 0) & (count_all >= C1), j)
                if t < 0:
                    t = cal.grow()
                    spare += 1
                    free = np.concatenate([free, np.ones((len(u), 1), dtype=bool)], axis=1)
                    count_need = np.append(count_need, needing.sum())
                    count_all = np.append(count_all, len(u))
                short = C1 - int((needing & free[:, t]).sum())
                pads = np.flatnonzero(~needing & free[:, t])
                if short <= 0:
                    pads = pads[:0]
                elif short < len(pads):  # the most slack first (their order does not matter)
                    if padders == "surplus":  # fewest sessions padded first, then the most slack
                        pads = pads[np.lexsort((-spare[u[pads]], padded_by[u[pads]]))[:short]]
                    else:
                        pads = pads[np.argpartition(-spare[u[pads]], short - 1)[:short]]
                spare[u[pads]] -= 1
                padded_by[u[pads]] += 1
                padded += 1
            hit = np.flatnonzero(needing & free[:, t])
            if capacity is not None and len(hit) + len(pads) > capacity[j]:  # the most demand left first
                hit = hit[np.argsort(-rem[e[hit]], kind="stable")[: capacity[j] - len(pads)]]
            seat = np.concatenate([hit, pads])
            cal.seat(u[seat], t, int(j))
            free[seat, t] = False
            count_need[t] -= len(hit)
            count_all[t] -= len(seat)
            rem[e[hit]] -= 1
            gone = hit[rem[e[hit]] == 0]
            if len(gone):
                count_need -= free[gone].sum(axis=0)
                needing[gone] = False
            sessions += 1
    if rem.any():  # every loop above ends with its arm served: this would be a bug, never a valid output
        raise SolverError("sessions left a demand unserved")
    used = (cal.arm >= 0).any(axis=1)
    a = cal.arm[used]
    a = np.where(a >= 0, a, park(graph)[None, :].astype(a.dtype))
    info = {"sessions": sessions, "padded_sessions": padded, "added_rounds": cal.rounds - max(lower, 1)}
    return a, np.ones(len(a), dtype=np.int64), info


def sessions_decomposition(
    graph: DemandGraph, C: int, *, best_effort: bool = False, padders: str = "slack", capacity=None
) -> Decomposition:
    """The session calendar (module docstring): arm by arm, thinnest first, groups of C+1 users or more.

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    C : int
        Anonymity parameter: an arm is informative with at least C+1 users on it.
    best_effort : bool
        Cover what can be covered when some arm is wanted by at most C users (listed in ``uncovered``).
    padders : {"slack", "surplus"}
        Which users pad a group first: the most slack (default), or those that have padded least
        (:func:`session_rounds`).
    capacity : numpy.ndarray, optional
        (K,) int: at most this many users in a session of each arm (:func:`anondecomp.decompose`'s ``capacity``
        re-seats the hidden users within it).

    Returns
    -------
    Decomposition
        Method ``"sessions"``; ``info`` counts the sessions, the padded ones and the rounds added beyond the
        lower bound.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS 2022 (Section 3.2:
    decompositions and the lower bound max_i sum_j w_ij).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[1, 1], [1, 1], [1, 0], [0, 1]], float)  # four users, two arms, C = 1
    >>> d = sessions_decomposition(DemandGraph.from_weights(w), C=1)
    >>> d.total_assignments, d.lower_bound
    (2, 2)
    """
    start = time.perf_counter()
    if padders not in ("slack", "surplus"):
        raise InvalidInputError(f"padders must be 'slack' or 'surplus', got {padders!r}")
    prep = prepare(graph, C, best_effort)
    if capacity is not None:  # a session must seat C+1 users: refused below that, as decompose refuses it
        from anondecomp.capacity import check_capacity_fits

        capacity = check_capacity("capacity", capacity, {"graph": graph})
        check_capacity_fits(graph, prep.C, capacity)
    a, m, info = session_rounds(prep, padders, capacity)
    return Decomposition(
        graph,
        prep.C,
        "sessions" if padders == "slack" else "sessions-surplus",
        a,
        m,
        uncovered=prep.uncovered,
        wall_time=time.perf_counter() - start,
        info=info,
    )
