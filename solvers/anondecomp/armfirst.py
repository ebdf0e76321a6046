"""Arm-first rounds: a schedule for logs whose thin arms are wanted mostly by the busiest users.

On a log shaped like OBD at C = 50 (the ``real`` family's power-law graphs) an arm wanted by 51-101 users can
only be informative with more than half of its users on it at once, and most of those users are the busiest
ones (on the 3000 x 1000 graph two thirds of a thin arm's users want 100 items or more). Least-slack rounds
(:mod:`anondecomp.methods.slack`) send every user to its own most valuable arm and close the arms left short,
so they open about 13 arms per round there and the busiest users wait for their thin arms at the end (R = 1.45
times the lower bound). Here a round is built arm by arm instead:

1. **Weights.** A user with d_i pairs left (``rem_i`` of them distinct) and L rounds left weighs
   ``w_i = (d_i / L) / rem_i`` per pair: its urgency, shared over the pairs that can serve it (a user with no
   slack and few pairs left is the most pressing per pair).
2. **Pick.** Among the arms that C+1 users still free in this round may play, open the one of largest
   ``V_j (n_j / |B_j|)^2``: V_j is the weight of the free users who still need arm j, n_j their number and
   |B_j| the arm's users. The factor favours arms most of whose users still need them: one opening then
   serves nearly all of them, where a later one would need padders that are rarely free together.
3. **Fill.** Every free user who needs the arm goes on it, and free users of least urgency pad it up to C+1,
   among them first those who may play the fewest other arms with demand left (a padder that other arms
   could use is kept for them). Picks repeat until no arm can open; the assignment is repeated k times (k the
   smallest demand it serves, at most :data:`CHUNK_SHARE` of the rounds left), as least-slack rounds do.

Every round serves at least one pair (an arm with demand left always has its C+1 users free at the start of
a round), so the schedule ends; L is stretched, never missed. :func:`armfirst_rounds` returns it, and
:func:`anondecomp.improve.polish` tries it on logs when the decomposition it is given is above the trivial
bound. Measured (R against the lower bound max_i sum_j ceil(w_ij)): OBD at C = 50, 1333 = the bound (least-slack
rounds 1493); the 3000 x 1000 log at C = 50, 536 against 500 in 4-8 s (least-slack rounds 725 in 12-18 s).
"""

from __future__ import annotations

import time

import numpy as np

from anondecomp.methods._common import park
from anondecomp.result import arm_dtype, compress
from anondecomp.validation import Prepared

CHUNK_SHARE = 0.05  # an assignment is repeated for at most this share of the rounds left
FRESH_POWER = 2.0  # exponent of the share of an arm's users that still need it, in the pick's score
TIGHT = 1.0 - 1e-9  # urgency of a user without slack (its pairs left fill every round left)
NOISE = 0.3  # scale of the log-normal noise on the scores of a restart (``rng`` given)


def armfirst_rounds(
    prep: Prepared, deadline: float | None = None, tight_first: bool = False, rng: np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """(assignments, multiplicities) of the arm-first schedule of ``prep``'s demand (module docstring), or
    ``None`` when ``deadline`` (a :func:`time.perf_counter` value) passes first.

    With ``tight_first``, every round starts with the users without slack: each still free opens the thinnest
    arm it needs that can open (while that arm's users are all free), before the picks by score. That helps
    where thin arms hold up the busiest users at the end (the 3000 x 1000 log at C = 50: R = 536 against
    542) and hurts elsewhere (1500 x 500 at C = 50: 285 against 268);
    :func:`~anondecomp.improve.polish` runs both.

    With ``rng``, every pick's scores are multiplied by ``exp(NOISE z)`` (z standard normal per arm): a
    restart that explores other orders (on the 3000 x 1000 log, four seeds give R = 524-540 with
    ``tight_first``).

    Examples
    --------
    >>> import numpy as np
    >>> from anondecomp.graph import DemandGraph
    >>> from anondecomp.validation import prepare
    >>> w = np.array([[2, 1], [1, 2], [2, 1], [1, 2]], float)  # four users, two arms, C = 1
    >>> a, m = armfirst_rounds(prepare(DemandGraph.from_weights(w), 1, False))
    >>> int(m.sum())
    3
    """
    graph, C = prep.graph, prep.C
    N, K = graph.n_users, graph.n_arms
    su, sa = graph.edge_users.astype(np.int64), graph.edge_arms.astype(np.int64)  # edges, sorted by user
    ustart = graph.indptr
    by_arm = np.argsort(sa, kind="stable")
    astart = np.searchsorted(sa[by_arm], np.arange(K + 1))
    degree = np.maximum(np.bincount(sa, minlength=K), 1).astype(np.float64)
    left = prep.edge_required.copy()
    base = park(graph)
    target = prep.lower_bound
    t, rows, mults = 0, [], []
    while left.any():
        if deadline is not None and time.perf_counter() > deadline:
            return None
        wants = left > 0
        need = np.bincount(su, weights=left, minlength=N)
        span = max(target - t, int(need.max()))
        urgency = need / span
        weight = urgency / np.maximum(np.bincount(su, weights=wants, minlength=N), 1)
        free = np.ones(N, dtype=bool)
        count = np.bincount(sa, minlength=K).astype(np.int64)  # free users who may play the arm
        needing = np.bincount(sa, weights=wants, minlength=K)  # ... and still need it
        value = np.bincount(sa, weights=np.where(wants, weight[su], 0.0), minlength=K)
        arm = np.full(N, -1, dtype=np.int64)
        # arms with demand left that a user may pad: padders wanted elsewhere are taken last
        elsewhere = np.bincount(su, weights=needing[sa] > 0, minlength=N)
        # with tight_first, users without slack first: each opens its thinnest arm while its users are free
        tight = np.flatnonzero(urgency >= TIGHT) if tight_first else np.empty(0, np.int64)
        if len(tight):  # the user whose thinnest arm left is thinnest first
            thinnest = np.full(N, np.inf)
            np.minimum.at(thinnest, su[wants], degree[sa[wants]])
            tight = tight[np.argsort(thinnest[tight], kind="stable")]
        tight_queue = list(tight)
        while True:
            can = (count >= C + 1) & (needing > 0.5)
            if not can.any():
                break
            j = -1
            while tight_queue and j < 0:
                u = tight_queue.pop(0)
                if free[u]:
                    e = np.arange(ustart[u], ustart[u + 1])
                    e = e[wants[e] & can[sa[e]]]
                    if len(e):
                        j = int(sa[e[np.argmin(degree[sa[e]])]])
            if j < 0:
                score = value * (needing / degree) ** FRESH_POWER
                if rng is not None:
                    score = score * np.exp(NOISE * rng.standard_normal(K))
                j = int(np.argmax(np.where(can, score, -np.inf)))
            e = by_arm[astart[j] : astart[j + 1]]
            e = e[free[su[e]]]
            takes = su[e[wants[e]]]
            pads = su[e[~wants[e]]]
            short = C + 1 - len(takes)
            if short > 0:
                takes = np.concatenate([takes, pads[np.lexsort((elsewhere[pads], urgency[pads]))[:short]]])
            arm[takes] = j
            free[takes] = False
            # the taken users leave every arm's tallies
            lens = ustart[takes + 1] - ustart[takes]
            idx = np.repeat(ustart[takes] - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
            count -= np.bincount(sa[idx], minlength=K)
            needing -= np.bincount(sa[idx], weights=wants[idx], minlength=K)
            value = np.maximum(
                value - np.bincount(sa[idx], weights=np.where(wants[idx], weight[su[idx]], 0.0), minlength=K), 0.0
            )
        served = np.flatnonzero((arm[su] == sa) & wants)
        k = max(1, min(int(left[served].min()), int(CHUNK_SHARE * span)))
        left[served] -= np.minimum(k, left[served])
        rows.append(np.where(arm >= 0, arm, base))
        mults.append(k)
        t += k
    if not rows:
        return np.empty((0, N), dtype=arm_dtype(K)), np.empty(0, np.int64)
    return compress(np.array(rows, dtype=arm_dtype(K)), np.array(mults, dtype=np.int64))
