"""Exposure: how many released sums hold each user's reward, and decompositions that keep it low.

A user's *exposure* is the number of blocks (assignments, with multiplicity) in which the user's arm holds at
least C+1 users: each such block releases a group sum holding the user's reward. Its *surplus* is the exposure
beyond its demand ``sum_j ceil(w_ij)``; every surplus block costs the user privacy and buys nothing. A
decomposition from any method can be *re-seated* without changing R: in every assignment a group keeps the
users that still need samples of its arm, padders only up to C+1 (from the users already on the arm, those of
least exposure first), and every other user moves to an arm of its support where it is one of at most C users
(it plays, and nothing of it is released). An assignment whose users stop needing their arm part-way through
its multiplicity is split there.

Certified lower bounds (:func:`exposure_bounds`): arm j must be informative in at least ``m_j = max_i
ceil(w_ij)`` blocks, each holding C+1 users, and user i's own samples cover only ``ceil(w_ij)`` of those seats,
so its users share at least ``P_j = max(0, (C+1) m_j - sum_i ceil(w_ij))`` surplus seats. The total surplus is
at least ``P = sum_j P_j``; the largest surplus is at least ``ceil(P_j / |B_j|)`` for every arm (``B_j`` its
users) and ``ceil(P / N)``; a user whose only arm is j has a surplus of at least ``m_j - ceil(w_ij)``.

That a user's exposure is the measure of its privacy cost, and the re-seating, are this implementation's
choices (the paper's decompositions put every user on an arm and count only the demand).

References
----------
Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3: the
C-anonymous decompositions whose groups are re-seated here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from anondecomp.errors import InfeasibleError, InvalidInputError, MethodNotApplicableError
from anondecomp.flows import ranges, seat_flow
from anondecomp.graph import DemandGraph, exact_sum, row_sums
from anondecomp.result import Decomposition, arm_dtype
from anondecomp.validation import checked, drop_uncoverable
from anondecomp.verify import group_sizes

ORDERS = ("ratio", "surplus")
"""How padders are chosen: ``"ratio"`` least exposure per unit of demand first (the default: it lowers the mean
exposure / demand), ``"surplus"`` least surplus so far first (it lowers the largest surplus)."""
MAX_PIECES = 8
"""Pieces a distinct assignment is split into at most where its users stop needing their arm (the last piece keeps
every user that still needs any of it: valid, a little more exposure, and fewer distinct assignments)."""
HIDE_PASSES = 8
"""Support arms a moved user tries, one per pass, before it stays where it was."""
_BLOCK = 1 << 22  # (assignment, user) entries whose groups are counted at once


@checked()
def exposures(decomposition: Decomposition) -> np.ndarray:
    """Each user's exposure: the blocks (with multiplicity) in which its arm holds at least C+1 users.

    Parameters
    ----------
    decomposition : Decomposition
        Any decomposition (memory: a block of its assignments at a time).

    Returns
    -------
    numpy.ndarray
        (N,) int64 (Python integers in an object array when R reaches 2^62).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1: a
    group of at least C+1 users on an arm releases its sums).

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_weights([[2, 0], [2, 0], [0, 1], [0, 1]])
    >>> d = anondecomp.Decomposition(g, 1, "hand", np.array([[0, 0, 1, 1]]), np.array([2]))
    >>> exposures(d).tolist()
    [2, 2, 2, 2]
    """
    a, m = decomposition.assignments, decomposition.multiplicities
    N, K = decomposition.graph.shape
    small = exact_sum(m) < 2**62  # else Python integers (an object array), as verify counts them
    out = np.zeros(N, dtype=np.int64 if small else object)
    step = max(1, _BLOCK // max(N, 1))
    for lo in range(0, len(a), step):
        seen = group_sizes(a[lo : lo + step], K) >= decomposition.C + 1
        weights = m[lo : lo + step]
        out += weights.astype(np.int64) @ seen if small else weights.astype(object) @ seen.astype(object)
    return out


def user_demand(graph: DemandGraph, C: int) -> np.ndarray:
    """(N,) int64 ``sum_j ceil(w_ij)`` over the arms that can be observed at C (wanted by at least C+1 users):
    the demand a decomposition can meet, against which exposure is counted."""
    return row_sums(graph.indptr, drop_uncoverable(graph, C, graph.edge_required)[0])


@dataclass(frozen=True)
class ExposureBounds:
    """Certified lower bounds on exposure for a graph at C (module docstring).

    Parameters
    ----------
    total : int
        No decomposition's total exposure is below it (the demand plus ``P``).
    surplus : int
        No decomposition's largest surplus exposure is below it.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.2).

    Examples
    --------
    >>> ExposureBounds(total=13, surplus=2).surplus
    2
    """

    total: int
    surplus: int


@checked()
def exposure_bounds(graph: DemandGraph, C: int) -> ExposureBounds:
    """Certified lower bounds on the total exposure and the largest surplus exposure (module docstring).

    Parameters
    ----------
    graph : DemandGraph
        The demand graph.
    C : int
        The anonymity parameter.

    Returns
    -------
    ExposureBounds
        The bound on the total exposure and on the largest surplus exposure.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.2: the
    decompositions' lower bound max_i sum_j w_ij, whose argument per arm gives these).

    Examples
    --------
    >>> import anondecomp
    >>> g = anondecomp.DemandGraph.from_weights([[3, 0], [1, 1], [1, 1], [0, 1]])
    >>> exposure_bounds(g, 2)  # both met by the default decomposition
    ExposureBounds(total=12, surplus=2)
    """
    N, K = graph.shape
    req, arms = drop_uncoverable(graph, C, graph.edge_required)[0], graph.edge_arms  # best effort: thin arms out
    most = np.zeros(K, dtype=np.int64)
    np.maximum.at(most, arms, req)
    sums = np.bincount(arms, weights=req, minlength=K).astype(np.int64)
    seats = np.maximum(0, min(C + 1, N + 1) * most - sums)  # above N users every arm is thin: most = 0
    total_seats = int(seats.sum())
    surplus = -(-total_seats // N) if N else 0
    users = np.maximum(graph.arm_degrees, 1)
    surplus = max(surplus, int((-(-seats // users)).max(initial=0)))
    single = np.flatnonzero(np.diff(graph.indptr) == 1)
    if len(single):
        e = graph.indptr[single]
        alone = most[arms[e]] - req[e]
        surplus = max(surplus, int(alone.max()))
    return ExposureBounds(total=int(req.sum()) + total_seats, surplus=surplus)


def exposure_info(decomposition: Decomposition) -> dict:
    """The exposure figures a summary prints: largest and mean exposure, demand and surplus, and the bounds."""
    graph = decomposition.graph
    expo, demand = exposures(decomposition), user_demand(graph, decomposition.C)
    bounds = exposure_bounds(graph, decomposition.C)
    surplus = expo - demand
    return {
        "exposure_max": int(expo.max(initial=0)),
        "exposure_mean": float(expo.mean()) if len(expo) else 0.0,
        "demand_max": int(demand.max(initial=0)),
        "demand_mean": float(demand.mean()) if len(demand) else 0.0,
        "surplus_max": int(surplus.max(initial=0)),
        "exposure_per_demand_mean": float((expo / np.maximum(demand, 1)).mean()) if len(expo) else 0.0,
        "exposure_total": int(expo.sum()),
        "exposure_total_bound": bounds.total,
        "surplus_bound": bounds.surplus,
    }


class _Seating:
    """The state of one re-seating pass over a decomposition: demand left per edge, exposure and samples per
    user, and the support of every user (to move it)."""

    def __init__(self, graph: DemandGraph, C: int, remaining: np.ndarray, order: str, capacity: np.ndarray | None):
        self.graph, self.C, self.order = graph, C, order
        N, K = graph.shape
        self.rem = remaining.astype(np.int64, copy=True)
        self.demand = np.maximum(user_demand(graph, C), 1)
        self.expo = np.zeros(N, dtype=np.int64)
        self.served = np.zeros(N, dtype=np.int64)
        self.deg = np.diff(graph.indptr)
        # a moved user may be one of at most C users (a hidden group) on an arm, and at most its capacity
        self.hide_cap = np.full(K, C, dtype=np.int64) if capacity is None else np.minimum(capacity, C)
        self.capacity = capacity
        self.pieces = 0
        self._sort_dtype = np.int16 if K <= np.iinfo(np.int16).max else np.int64  # int16: a radix sort
        self._last_row = np.full(N, -1, dtype=np.int64)
        self._last_edges = np.zeros(N, dtype=np.int64)

    def _edges(self, row: np.ndarray) -> np.ndarray:
        """Each user's edge in ``row``; looked up only for the users whose arm differs from the previous row's
        (a calendar's rows leave most users where they were)."""
        moved = np.flatnonzero(row != self._last_row)
        self._last_edges[moved] = edge_of(self.graph, moved, row[moved])
        self._last_row = row
        return self._last_edges.copy()

    def score(self, users: np.ndarray) -> np.ndarray:
        """Padding priority (lowest first): exposure per unit of demand, or surplus so far."""
        if self.order == "ratio":
            return self.expo[users] / self.demand[users]
        return (self.expo[users] - self.served[users]).astype(np.float64)

    def row(self, row: np.ndarray, mult: int) -> list[tuple[np.ndarray, int]]:
        """Re-seat one distinct assignment repeated ``mult`` times: its pieces (row, multiplicity)."""
        graph, C = self.graph, self.C
        K = graph.n_arms
        row = row.astype(np.int64)
        e = self._edges(row)
        informative = np.bincount(row, minlength=K) >= C + 1
        on = informative[row]
        out: list[tuple[np.ndarray, int]] = []
        while mult > 0:
            need = on & (self.rem[e] > 0)
            if self.capacity is not None:
                need = self._within_capacity(row, e, need)
            k = int(min(mult, self.rem[e[need]].min())) if need.any() else mult
            if len(out) == MAX_PIECES - 1:  # the rest in one piece: a user keeps its seat while it needs any
                k = mult
            new, at = self._seat(row, e, need, on, informative)
            seen = np.bincount(new, minlength=K)[new] >= C + 1
            self.expo += k * seen
            # the samples counted: every user in a group on an arm it still needs, wherever the seating put it
            served = np.flatnonzero(seen & (self.rem[at] > 0))
            got = np.minimum(self.rem[at[served]], k)
            self.served[served] += got
            self.rem[at[served]] -= got
            out.append((new, k))
            mult -= k
            self.pieces += 1
        return out

    def _within_capacity(self, row: np.ndarray, e: np.ndarray, need: np.ndarray) -> np.ndarray:
        """Keep at most ``capacity[j]`` needing users on arm j, less the other users that can sit nowhere else
        (those that can sit nowhere else, then those with most demand left on it first): the others are served in
        a later assignment."""
        assert self.capacity is not None
        idx = np.flatnonzero(need)
        arms = row[idx]
        K = len(self.capacity)
        stuck = np.bincount(row[(self.deg == 1) & ~need], minlength=K)
        room = self.capacity - stuck
        if not (np.bincount(arms, minlength=K) > room).any():
            return need
        order = np.lexsort((-self.rem[e[idx]], self.deg[idx] > 1, arms))  # users that cannot move first
        idx, arms = idx[order], arms[order]
        rank = _ranks(arms)
        keep = need.copy()
        keep[idx[rank >= room[arms]]] = False
        return keep

    def _seat(
        self, row: np.ndarray, e: np.ndarray, need: np.ndarray, on: np.ndarray, informative: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The new row and each user's edge in it (``e``: in ``row``): needing users stay, groups padded to C+1
        from their arm's other users, every other user of an informative arm moved to a hidden group where one
        has room."""
        C, K = self.C, self.graph.n_arms
        useful = np.bincount(row[need], minlength=K)
        member = need.copy()
        short = np.where(useful > 0, np.maximum(C + 1 - useful, 0), 0)
        cand = np.flatnonzero(on & ~need & (short[row] > 0))
        if len(cand):
            arms = row[cand]
            order = np.lexsort((self.score(cand), self.deg[cand] > 1, arms))  # who cannot move pads first
            cand, arms = cand[order], arms[order]
            rank = _ranks(arms)
            member[cand[rank < short[arms]]] = True
        movers = np.flatnonzero(on & ~member)
        new, edges = row.copy(), e.copy()
        if len(movers):
            self._hide(new, edges, movers, informative)
        if self.capacity is not None and (np.bincount(new, minlength=K) > self.capacity).any():
            self._fit(new, edges, member, need)
        return new, edges

    def _hide(self, new: np.ndarray, edges: np.ndarray, movers: np.ndarray, informative: np.ndarray) -> None:
        """Move ``movers`` (sorted) in ``new`` to arms of their support that hold no group, at most C users (and
        the capacity) on each; a user that finds none in :data:`HIDE_PASSES` tries stays where it was. The arms
        of the groups dissolved (no member left) are opened in a second round, counting the movers still on
        them: a hidden group there must stay below C+1 with them."""
        K = self.graph.n_arms
        row = new.copy()
        on = informative[row]
        load = np.bincount(row[~on], minlength=K)
        movers = self._hide_round(new, edges, movers, informative, load)
        if len(movers):
            kept = on.copy()
            kept[movers] = False  # the movers left stay on their arms
            closed = np.zeros(K, dtype=bool)
            closed[new[kept & informative[new]]] = True
            dissolved = informative & ~closed
            load = np.where(dissolved, np.bincount(new[movers], minlength=K), load)
            self._hide_round(new, edges, movers, ~dissolved, load)

    def _hide_round(
        self, new: np.ndarray, edges: np.ndarray, movers: np.ndarray, closed: np.ndarray, load: np.ndarray
    ) -> np.ndarray:
        """One round of :meth:`_hide` over the arms not ``closed`` (``load`` their users so far, updated; ``new``
        and ``edges`` too): the movers left."""
        K = self.graph.n_arms
        indptr, edge_arms = self.graph.indptr, self.graph.edge_arms
        deg = self.deg[movers]
        start = (movers + self.pieces) % deg
        for p in range(int(min(HIDE_PASSES, deg.max(initial=0)))):
            edge = indptr[movers] + (start + p) % deg
            arm = edge_arms[edge].astype(np.int64)
            at = np.flatnonzero(~closed[arm])
            at = at[np.argsort(arm[at].astype(self._sort_dtype), kind="stable")]
            arms = arm[at]
            fits = load[arms] + _ranks(arms) < self.hide_cap[arms]
            new[movers[at[fits]]] = arms[fits]
            edges[movers[at[fits]]] = edge[at[fits]]
            load += np.bincount(arms[fits], minlength=K)
            left = np.ones(len(movers), dtype=bool)
            left[at[fits]] = False
            movers, start, deg = movers[left], start[left], deg[left]
            if not len(movers):
                break
        return movers

    def _fit(self, new: np.ndarray, edges: np.ndarray, member: np.ndarray, need: np.ndarray) -> None:
        """Re-seat every user of ``new`` that is not a ``member`` of a group by a flow over the room the
        capacities leave (a user may then join a group, or make one, on an arm with room). When they do not
        fit, the group most of them could sit on is dissolved (its users' samples wait for a later assignment),
        and the flow tried again."""
        graph, K = self.graph, self.graph.n_arms
        assert self.capacity is not None
        while True:
            movers = np.flatnonzero(~member)
            room = self.capacity - np.bincount(new[member], minlength=K)
            placed = seat_flow(graph, movers, room)
            if placed is not None:
                new[movers] = placed
                edges[movers] = edge_of(graph, movers, placed)
                return
            groups = np.bincount(new[member], minlength=K) > 0
            lo, hi = graph.indptr[movers], graph.indptr[movers + 1]
            # the group most of them could sit on, the fullest first among equals
            wanted = np.bincount(graph.edge_arms[ranges(lo, hi - lo)], minlength=K) * groups * (len(movers) + 1)
            wanted = np.where(groups & (wanted > 0), wanted - np.maximum(room, 0), 0)
            if not wanted.any():
                raise MethodNotApplicableError(
                    f"capacity: an assignment cannot seat user {graph.users[int(movers[0])]!r} and the others "
                    "within the arms' capacities"
                )
            gone = member & (new == int(np.argmax(wanted)))
            member[gone] = False
            need[gone] = False


def edge_of(graph: DemandGraph, users: np.ndarray, arms: np.ndarray) -> np.ndarray:
    """The edge of each (user, arm) pair of the support: a binary search within each user's own edges (sorted by
    arm), vectorised over the pairs, in log2 of the largest degree steps."""
    lo, hi = graph.indptr[users].copy(), graph.indptr[users + 1].copy()
    edge_arms = graph.edge_arms
    while True:
        open_ = lo < hi - 1
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        right = open_ & (edge_arms[np.minimum(mid, len(edge_arms) - 1)] <= arms)
        left = open_ & ~right
        lo[right] = mid[right]
        hi[left] = mid[left]


def _ranks(keys: np.ndarray) -> np.ndarray:
    """Each entry's position among the equal entries before it, for sorted ``keys``."""
    n = len(keys)
    first = np.ones(n, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return np.arange(n) - np.maximum.accumulate(np.where(first, np.arange(n), 0))


def reseat(
    decomposition: Decomposition,
    order: str = "ratio",
    capacity: np.ndarray | None = None,
    remaining: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(assignments, multiplicities, demand left per edge) of ``decomposition`` re-seated (module docstring).

    R is unchanged; with ``capacity`` ((K,) int, each >= C+1 on the arms with demand) a group keeps at most its
    arm's capacity of the users that need it and the demand of the others is returned (else it is all met).
    ``remaining`` (per edge, default the graph's demand) is the demand the samples count against.
    """
    if order not in ORDERS:
        raise InvalidInputError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    graph, C = decomposition.graph, decomposition.C
    rem = graph.edge_required if remaining is None else remaining
    state = _Seating(graph, C, rem, order, capacity)
    dtype = arm_dtype(graph.n_arms)
    rows, mults = [], []
    for r, m in zip(decomposition.assignments, decomposition.multiplicities.tolist(), strict=True):
        for new, k in state.row(r, int(m)):
            rows.append(new.astype(dtype))  # the schedule's own width: a second copy of it at most
            mults.append(k)
    a = np.stack(rows) if rows else np.empty((0, graph.n_users), dtype=dtype)
    return a, np.array(mults, dtype=np.int64), state.rem


def reseated(decomposition: Decomposition, order: str = "ratio") -> Decomposition:
    """``decomposition`` re-seated (same R, same coverage), its exposure figures in ``info["exposure"]``."""
    a, m, _ = reseat(decomposition, order)
    out = replace(decomposition, assignments=a, multiplicities=m, info={**decomposition.info, "reseated": order})
    return with_exposure(out)


def with_exposure(decomposition: Decomposition) -> Decomposition:
    """``decomposition`` with its exposure figures (:func:`exposure_info`) in ``info["exposure"]``."""
    return decomposition._annotated(exposure=exposure_info(decomposition))


R_SLACK = 0.01
"""The default re-seats every candidate and keeps the least total exposure among those whose R is within this
share of the shortest."""


def least_exposed(
    result: Decomposition,
    alternatives: Sequence[Callable[[], Decomposition]] = (),
    max_surplus: int | None = None,
    reseat: bool = True,
) -> Decomposition:
    """``result`` and the ``alternatives`` (thunks computing other decompositions of the same graph), all
    re-seated (unless ``reseat`` is false: they are then taken as they are, with their exposure figures):
    without ``max_surplus``, the least total exposure among those within :data:`R_SLACK` of the shortest R; with
    it, the shortest whose largest surplus exposure is at most ``max_surplus`` (ties: the least total
    exposure), ``max_surplus`` kept in its ``info``. Re-seating never changes R or coverage.

    Raises
    ------
    InfeasibleError
        If ``max_surplus`` is below the certified minimum (:func:`exposure_bounds`).
    MethodNotApplicableError
        If no candidate meets ``max_surplus`` (the message gives the least largest surplus found).
    """
    graph, C = result.graph, result.C
    bound = exposure_bounds(graph, C).surplus if max_surplus is not None else 0
    if max_surplus is not None and max_surplus < bound:
        raise InfeasibleError(
            f"max_surplus_exposure {max_surplus} is below {bound}, the certified least largest surplus exposure of "
            f"this graph at C = {C}"
        )
    given = (result, *(make() for make in alternatives))
    if reseat:
        orders = ORDERS if max_surplus is not None else ("ratio",)
        found = [reseated(d, order) for d in given for order in orders]
    else:
        found = [d if "exposure" in d.info else with_exposure(d) for d in given]
    if max_surplus is None:
        shortest = min(d.total_assignments for d in found)
        near = [d for d in found if d.total_assignments <= shortest * (1 + R_SLACK)]
        return min(near, key=lambda d: d.info["exposure"]["exposure_total"])
    meets = [d for d in found if d.info["exposure"]["surplus_max"] <= max_surplus]
    if not meets:
        least = min(d.info["exposure"]["surplus_max"] for d in found)
        raise MethodNotApplicableError(
            f"no decomposition found with every user's surplus exposure <= {max_surplus}: the least largest "
            f"surplus found is {least} (the certified minimum is {bound})"
        )
    best = min(meets, key=lambda d: (d.total_assignments, d.info["exposure"]["exposure_total"]))
    return best._annotated(max_surplus_exposure=max_surplus)
