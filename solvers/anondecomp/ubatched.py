"""Is a batched graph U-batched? (spec section 3: some assignment gives every arm at least U users)."""

from __future__ import annotations

import numpy as np

from anondecomp.flows import bounded_assignment


def check_u_batched(active: np.ndarray, U: int) -> np.ndarray:
    """Arms that cannot receive U users in any assignment of users to their active arms.

    An empty result means the graph is U-batched. Arms with fewer than U possible users are always
    reported; otherwise a max-flow with lower bound U on every arm decides, and when it is infeasible the
    arms short of U in a maximum flow are reported.

    Examples
    --------
    >>> import numpy as np
    >>> check_u_batched(np.array([[1, 0], [1, 1], [0, 1], [1, 1]], bool), 2).size
    0
    """
    a = np.asarray(active, dtype=bool)
    N, K = a.shape
    deg = a.sum(axis=0)
    short = np.flatnonzero(deg < U)
    if len(short):
        return short
    lo = np.full(K, U, dtype=np.int64)
    if bounded_assignment(a, np.ones(N, np.int64), lo, np.full(K, N, dtype=np.int64)) is not None:
        return np.empty(0, dtype=np.int64)
    # infeasible: relax arm lower bounds to find which arms fall short in a best assignment
    best = bounded_assignment(a, np.ones(N, np.int64), np.zeros(K, np.int64), np.full(K, N, dtype=np.int64))
    counts = np.bincount(best[best >= 0], minlength=K) if best is not None else np.zeros(K, int)
    return np.flatnonzero(counts < U)
