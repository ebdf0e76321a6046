"""Randomized decomposition (paper 000, Section 4 simulations, and Section 3.4.2).

Every assignment sends each user to a uniformly random arm of its support; a pair is informative when its arm drew
at least C+1 users. Assignments are drawn until every pair has its demand (a choice of this implementation: the
paper does not say how many to draw), or fail after a cap with an error naming uncovered pairs. The cap is
``cap_factor`` times the larger of K * D (a cap of this implementation) and D / p, where p is a lower bound on any
pair's chance of being informative in one assignment: user i picks arm j with probability 1/|A_i|, and each other
user of B_j picks it with probability at least q_j = min 1/|A_k|, so at least C of them do with probability
>= P(Bin(|B_j|-1, q_j) >= C). A baseline: it wastes the rounds in which an arm draws C or fewer users.

Everything runs on the graph's edges: a draw picks an offset within each user's row of the CSR edge list, so
the drawn edge is known along with the arm, and coverage is counted per edge. Memory is the draws themselves
(assignments x users, refused above :data:`~anondecomp.validation.OUTPUT_CELLS`) plus one chunk of them and
the edges; nothing is held per (user, arm) cell.
"""

from __future__ import annotations

import math
import time

import numpy as np

from anondecomp import validation
from anondecomp.errors import InfeasibleError
from anondecomp.graph import DemandGraph, row_sums
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import check_output_cells, prepare

BATCH = 256
CHUNK = 1 << 22  # entries (assignments x users) drawn at once, bounds the memory of a draw
PER_ARM_MAX_K = 8
MAX_EXPECTED = 10_000_000


def _edge_demand(graph: DemandGraph, required: np.ndarray) -> np.ndarray:
    """``required`` per edge: given so, or a dense (N, K) matrix read at the edges (it is 0 off the support)."""
    r = np.asarray(required)
    return r[graph.edge_users, graph.edge_arms] if r.ndim == 2 else r


def _arm_max(graph: DemandGraph, values: np.ndarray, on: np.ndarray) -> np.ndarray:
    """(K,) the largest of ``values`` (per edge) over each arm's edges where ``on``, 0 where there is none."""
    out = np.zeros(graph.n_arms, dtype=values.dtype)
    np.maximum.at(out, graph.edge_arms[on], values[on])
    return out


def informative_probability_bound(graph: DemandGraph, required: np.ndarray, C: int) -> float:
    """Lower bound on the chance that a wanted pair is informative in one uniformly random assignment.

    ``required`` is per edge of ``graph`` or a dense (N, K) matrix. The least likely users of arm j (those
    with the largest supports) set q_j = 1 / max |A_k| over B_j, the same value as the minimum of 1 / |A_k|.
    """
    from scipy import stats  # deferred: importing scipy.stats costs half a second of command start-up

    r = _edge_demand(graph, required)
    size = np.diff(graph.indptr)[graph.edge_users]
    wanted = r > 0
    arms = np.flatnonzero(np.bincount(graph.edge_arms[wanted], minlength=graph.n_arms) > 0)
    if len(arms) == 0:
        return 1.0
    q = 1.0 / _arm_max(graph, size, np.ones(graph.nnz, bool))[arms]
    crowd = stats.binom.sf(C - 1, graph.arm_degrees[arms] - 1, q)
    own = 1.0 / _arm_max(graph, size, wanted)[arms]
    return float((own * crowd).min())


def expected_assignments(graph: DemandGraph, required: np.ndarray, C: int) -> float:
    """About how many assignments the randomized decomposition draws for ``required``: D / p, with D the
    largest demand of a pair and p :func:`informative_probability_bound` (each assignment is distinct, of every
    user). The decomposition refuses above :data:`MAX_EXPECTED`; a caller may bound it tighter before drawing.

    ``required`` is per edge of ``graph`` or a dense (N, K) matrix.

    Examples
    --------
    >>> g = DemandGraph.from_batched(3, np.ones((6, 2), bool))
    >>> expected_assignments(g, np.full((6, 2), 3), C=1) > 3
    True
    """
    r = _edge_demand(graph, required)
    D = max(int(np.max(r, initial=0)), 1)
    return D / max(informative_probability_bound(graph, r, C), 1e-300)


def fewest_expected_draws(graph: DemandGraph, required: np.ndarray, C: int) -> float:
    """A lower bound on the expected number of assignments the randomized decomposition draws.

    Pair (i, j) is informative in one draw with probability at most (1 / |A_i|) P(Bin(|B_j| - 1, q_j) >= C),
    q_j = 1 / min |A_k| over B_j (each other user of B_j picks j with probability at most q_j), so it waits
    at least r_ij over that for its demand, in expectation; the draws wait for the slowest pair. Unlike
    :func:`expected_assignments`, which bounds the wait from above, this never overstates it, so a refusal
    on it (the draws x users above :data:`~anondecomp.validation.OUTPUT_CELLS`) never refuses a graph whose
    expected draws would fit.

    Examples
    --------
    >>> g = DemandGraph.from_batched(3, np.ones((6, 2), bool))
    >>> 3 <= fewest_expected_draws(g, g.edge_required, C=1) <= expected_assignments(g, g.edge_required, C=1)
    True
    """
    from scipy import stats

    r = _edge_demand(graph, required)
    wanted = r > 0
    if not wanted.any():
        return 0.0
    size = np.diff(graph.indptr)
    smallest = np.full(graph.n_arms, np.iinfo(np.int64).max)
    np.minimum.at(smallest, graph.edge_arms, size[graph.edge_users])
    arms = np.flatnonzero(np.bincount(graph.edge_arms[wanted], minlength=graph.n_arms) > 0)
    crowd = np.zeros(graph.n_arms)
    crowd[arms] = stats.binom.sf(C - 1, graph.arm_degrees[arms] - 1, 1.0 / smallest[arms])
    # a chance below 1e-300 (or lost to underflow) is reported as that: the draws are past any limit anyway
    chance = np.maximum(crowd[graph.edge_arms[wanted]] / size[graph.edge_users[wanted]], 1e-300)
    return float(min(np.max(r[wanted] / chance), 1e300))


def randomized_decomposition(
    graph: DemandGraph,
    C: int,
    *,
    rng: np.random.Generator | None = None,
    seed: int | None = 0,
    best_effort: bool = False,
    cap_factor: int = 20,
) -> Decomposition:
    """Draw uniformly random assignments until all demand is met (``rng``, else ``seed``, fixes the draws).

    Raises
    ------
    MethodNotApplicableError
        When the draws x users would exceed :data:`~anondecomp.validation.OUTPUT_CELLS`: before drawing, when
        :func:`fewest_expected_draws` says so, else once the draws reach the limit with demand still unmet
        (unless :func:`~anondecomp.validation.allowing_large` confirms it: ``decompose(allow_large=True)``).
    InfeasibleError
        Above :data:`MAX_EXPECTED` expected assignments, or at the cap, naming the pairs still short.

    Examples
    --------
    >>> import numpy as np
    >>> g = DemandGraph.from_batched(3, np.ones((6, 2), bool))
    >>> d = randomized_decomposition(g, C=1, seed=1)
    >>> d.total_assignments >= g.lower_bound
    True
    """
    start = time.perf_counter()
    prep = prepare(graph, C, best_effort)
    rng = rng if rng is not None else np.random.default_rng(seed)
    N, K = graph.shape
    required = prep.edge_required
    D = max(int(np.max(required, initial=0)), 1)
    fewest = fewest_expected_draws(graph, required, prep.C)
    p = informative_probability_bound(graph, required, prep.C)
    expected = D / max(p, 1e-300)
    if expected > MAX_EXPECTED:
        # refused as before on its (generous) estimate; when even the draws it surely expects overflow the
        # output, the message names that limit too
        beyond = (
            f"; at least {fewest:.3g} of them x {N} users = {fewest * N:.3g} cells is above the limit of "
            f"{validation.OUTPUT_CELLS:.0e} (anondecomp.validation.OUTPUT_CELLS)"
            if fewest * N > validation.OUTPUT_CELLS
            else ""
        )
        raise InfeasibleError(
            f"randomized decomposition would need about {expected:.3g} assignments "
            f"(arms rarely draw C+1 users at random){beyond}; use method='polytope' or 'block'"
        )
    check_output_cells(fewest, N, "randomized", "the draws it expects to need, at least", noun="assignments")
    cap = cap_factor * max(K * D, math.ceil(D / p))
    # The draws come in blocks of BATCH assignments (rows of rng.random((BATCH, N))), the last block cut at the
    # first assignment that completes the demand, and the generator ends after the last block. One call drawing
    # many blocks gives the same numbers as block-by-block calls (the generator fills an array in order), so
    # neither the result nor the generator's state after it depends on how many blocks a call draws.
    limit = -(-cap // BATCH) * BATCH  # rows drawn before the cap's error
    # rows the output may hold (as many as the cap when allow_large confirmed a larger output)
    most_out = limit if validation.large_allowed() else validation.OUTPUT_CELLS // max(N, 1)
    out_limit = -(-most_out // BATCH) * BATCH
    # a chunk's temporaries: (rows, N) draws and (rows, K) counts, and one block at least
    most = max(BATCH, (CHUNK // max(N, K, 1)) // BATCH * BATCH)
    size = np.diff(graph.indptr)
    first = graph.indptr[:-1]
    need = required.astype(np.int64)
    drawn: list[np.ndarray] = []
    total = 0
    rate = None
    while (need > 0).any():
        if total >= min(limit, out_limit):
            if total >= out_limit and out_limit < limit:  # the output limit comes first: at least one more row
                check_output_cells(
                    total + 1, N, "randomized", f"demand still unmet after {total} draws", noun="assignments"
                )
            left = np.flatnonzero(need > 0)
            users, arms = graph.edge_users[left], graph.edge_arms[left]
            pairs = ", ".join(
                f"({graph.users[i]!r}, {graph.arms[j]!r})" for i, j in zip(users[:5], arms[:5], strict=True)
            )
            raise InfeasibleError(
                f"randomized decomposition hit its cap of {cap} assignments with "
                f"{len(left)} pair(s) still short, e.g. {pairs}",
                uncovered=[(graph.users[i], graph.arms[j]) for i, j in zip(users, arms, strict=True)],
            )
        # rows to draw: the lower bound at first, then what the slowest pair needs at the rate seen so far
        if rate is None:
            want = int(row_sums(graph.indptr, need).max())
        else:
            want = int(np.max(np.where(need > 0, need / np.maximum(rate, 1e-12), 0.0)))
        rows = min(most, min(limit, out_limit) - total, max(BATCH, -(-(want + want // 10) // BATCH) * BATCH))
        state = rng.bit_generator.state
        batch, edge = _draw(rng, rows, size, first, graph.edge_arms, K)
        hit = _informative_edges(batch, edge, prep.C, K)
        got = np.bincount(edge[hit], minlength=graph.nnz)
        if (got >= need).all():
            stop = _completing_row(edge, hit, need)
            blocks = -(-stop // BATCH) * BATCH
            if blocks < rows:  # leave the generator where drawing whole blocks up to this one leaves it
                rng.bit_generator.state = state
                rng.random((blocks, N))
            if total + stop > most_out:
                check_output_cells(total + stop, N, "randomized", "drawn to meet the demand", noun="assignments")
            drawn.append(batch[:stop])
            break
        need -= got
        rate = got / rows if rate is None else (rate * total + got) / (total + rows)
        drawn.append(batch)
        total += rows
    a = np.concatenate(drawn) if drawn else np.empty((0, N), dtype=arm_dtype(K))
    m = np.ones(len(a), dtype=np.int64)
    if a.size <= 10_000_000:
        a, m = _merge_identical(a) if a.dtype == np.int8 else compress(a, m)
    return Decomposition(
        graph, prep.C, "randomized", a, m, uncovered=prep.uncovered, wall_time=time.perf_counter() - start
    )


def _draw(
    rng: np.random.Generator, rows: int, size: np.ndarray, first: np.ndarray, edge_arms: np.ndarray, K: int
) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` uniformly random assignments and the edge each entry sits on (-1: a user without edges).

    User i takes the edge ``first[i] + floor(u |A_i|)``, u ~ U[0, 1): its support's arms in increasing
    order, as the CSR rows hold them. A user without edges sits on arm 0 and learns nothing.
    """
    edge = (rng.random((rows, len(size))) * size).astype(np.int64)
    edge += first
    if (size == 0).any():
        edge[:, size == 0] = -1
        arms = np.where(edge >= 0, edge_arms[np.maximum(edge, 0)], 0)
        return arms.astype(arm_dtype(K)), edge
    return edge_arms[edge].astype(arm_dtype(K)), edge


def _informative_edges(batch: np.ndarray, edge: np.ndarray, C: int, K: int) -> np.ndarray:
    """(rows, N) bool: the entries on an edge whose arm drew at least C+1 users in their assignment."""
    n = len(batch)
    if K <= PER_ARM_MAX_K:  # a few vectorised passes over the batch per arm beat a bincount of all entries
        big = np.zeros(batch.shape, dtype=bool)
        for j in range(K):
            on = batch == j
            big |= on & (np.count_nonzero(on, axis=1) >= C + 1)[:, None]
    else:
        keys = np.arange(n, dtype=np.int64)[:, None] * K + batch
        if n * K <= 4 * CHUNK:
            big = np.bincount(keys.ravel(), minlength=n * K)[keys] >= C + 1
        else:  # too many arms for a count per (assignment, arm): count the keys drawn
            _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
            big = counts[inverse.reshape(keys.shape)] >= C + 1
    return big & (edge >= 0)


def _completing_row(edge: np.ndarray, hit: np.ndarray, need: np.ndarray) -> int:
    """Fewest leading rows of a chunk whose informative entries (``edge`` where ``hit``) give every edge its
    ``need``: the row where the slowest edge with positive need gets its need-th sample, plus one."""
    rows, users = np.nonzero(hit)  # row-major: rows increase, so do an edge's rows once grouped
    e = edge[rows, users]
    order = np.argsort(e, kind="stable")
    starts = np.zeros(len(need) + 1, dtype=np.int64)
    np.cumsum(np.bincount(e, minlength=len(need)), out=starts[1:])
    short = np.flatnonzero(need > 0)
    if not len(short):
        return 0
    return int(rows[order[starts[short] + need[short] - 1]].max()) + 1


def _merge_identical(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``compress`` of int8 assignments of multiplicity 1, by sorting rows as byte strings.

    Same result as :func:`~anondecomp.result.compress` (distinct rows in lexicographic order, each with its
    count), much faster than its sort of structured rows. Flipping the sign bit makes the bytes' order the
    order of the arm indices and leaves no zero byte (byte strings ignore trailing zeros when compared).
    """
    if len(a) <= 1:
        return a, np.ones(len(a), dtype=np.int64)
    rows = np.ascontiguousarray(a.view(np.uint8) ^ 0x80).view(f"S{a.shape[1]}").ravel()
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return a[order[starts]], np.diff(np.append(starts, len(a))).astype(np.int64)
