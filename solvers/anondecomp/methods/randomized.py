"""Randomized decomposition (paper 000, Section 4 simulations; spec 4.6).

Every assignment sends each user to a uniformly random arm of its support; a pair is informative when its
arm drew at least C+1 users. Assignments are drawn until every pair has its demand [spec DECISION], or
fail after a cap with an error naming uncovered pairs. The cap is ``cap_factor`` times the larger of K * D
(the spec's suggestion) and D / p, where p is a lower bound on any pair's chance of being informative in one
assignment: user i picks arm j with probability 1/|A_i|, and each other user of B_j picks it with
probability at least q_j = min 1/|A_k|, so at least C of them do with probability >= P(Bin(|B_j|-1, q_j) >= C).
A baseline: it wastes the rounds in which an arm draws C or fewer users.
"""

from __future__ import annotations

import math
import time

import numpy as np

from anondecomp.errors import InfeasibleError
from anondecomp.graph import DemandGraph
from anondecomp.result import Decomposition, arm_dtype, compress
from anondecomp.validation import prepare
from anondecomp.verify import coverage

BATCH = 256
MAX_EXPECTED = 10_000_000


def informative_probability_bound(graph: DemandGraph, required: np.ndarray, C: int) -> float:
    """Lower bound on the chance that a wanted pair is informative in one uniformly random assignment."""
    from scipy import stats  # deferred: importing scipy.stats costs half a second of command start-up

    size = graph.support.sum(axis=1)
    wanted = required > 0
    arms = np.flatnonzero(wanted.any(axis=0))
    if len(arms) == 0:
        return 1.0
    inv = np.where(graph.support, 1.0 / size[:, None], np.inf)
    q = inv[:, arms].min(axis=0)
    crowd = stats.binom.sf(C - 1, graph.arm_degrees[arms] - 1, q)
    own = np.where(wanted[:, arms], 1.0 / size[:, None], np.inf).min(axis=0)
    return float((own * crowd).min())


def randomized_decomposition(graph: DemandGraph, C: int, *, rng: np.random.Generator | None = None,
                             seed: int | None = 0, best_effort: bool = False,
                             cap_factor: int = 20) -> Decomposition:
    """Draw uniformly random assignments until all demand is met (``rng``, else ``seed``, fixes the draws).

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
    size = graph.support.sum(axis=1)
    choices = np.argsort(~graph.support, axis=1, kind="stable")[:, :int(size.max())]
    D = max(int(prep.required.max()), 1)
    p = informative_probability_bound(graph, prep.required, prep.C)
    if D / max(p, 1e-300) > MAX_EXPECTED:
        raise InfeasibleError(f"randomized decomposition would need about {D / max(p, 1e-300):.3g} assignments "
                              "(arms rarely draw C+1 users at random); use method='polytope' or 'block'")
    cap = cap_factor * max(K * D, math.ceil(D / p))
    need = prep.required.copy()
    drawn: list[np.ndarray] = []
    total = 0
    while (need > 0).any():
        if total >= cap:
            left = np.argwhere(need > 0)
            pairs = ", ".join(f"({graph.users[i]!r}, {graph.arms[j]!r})" for i, j in left[:5])
            raise InfeasibleError(f"randomized decomposition hit its cap of {cap} assignments with "
                                  f"{len(left)} pair(s) still short, e.g. {pairs}",
                                  uncovered=[(graph.users[i], graph.arms[j]) for i, j in left])
        pick = (rng.random((BATCH, N)) * size).astype(np.int64)
        batch = np.take_along_axis(choices, pick.T, axis=1).T.astype(arm_dtype(K))
        ones = np.ones(BATCH, dtype=np.int64)
        if (coverage(batch, ones, prep.C, K) >= need).all():
            batch = batch[:_shortest_prefix(batch, need, prep.C, K)]
            ones = ones[:len(batch)]
        need -= coverage(batch, ones, prep.C, K)
        drawn.append(batch)
        total += len(batch)
    a = np.concatenate(drawn) if drawn else np.empty((0, N), dtype=arm_dtype(K))
    m = np.ones(len(a), dtype=np.int64)
    if a.size <= 10_000_000:
        a, m = compress(a, m)
    return Decomposition(graph, prep.C, "randomized", a, m, uncovered=prep.uncovered,
                         wall_time=time.perf_counter() - start)


def _shortest_prefix(batch: np.ndarray, need: np.ndarray, C: int, K: int) -> int:
    """Fewest leading assignments of ``batch`` that cover ``need`` (binary search on the prefix length)."""
    lo, hi = 1, len(batch)
    while lo < hi:
        mid = (lo + hi) // 2
        if (coverage(batch[:mid], np.ones(mid, np.int64), C, K) >= need).all():
            hi = mid
        else:
            lo = mid + 1
    return lo
