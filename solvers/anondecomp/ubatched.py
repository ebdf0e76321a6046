"""Is a batched graph U-batched? (paper Section 3.2: some assignment gives every arm at least U users)."""

from __future__ import annotations

import numpy as np

from anondecomp.validation import checked


@checked()
def check_u_batched(active: np.ndarray, U: int) -> np.ndarray:
    """Arms that cannot receive U users in an assignment of users to their active arms.

    An empty result means the graph is U-batched. Decided by one max-flow: source -> user (capacity 1),
    user -> active arm (1), arm -> sink (U). The graph is U-batched exactly when the flow saturates every
    arm (users left over can join any active arm without harm); otherwise the arms below U in that maximum
    flow are reported (a maximum flow leaves as few users missing as possible).

    Parameters
    ----------
    active : numpy.ndarray
        (N, K) boolean: the active sets A_i.
    U : int
        The number of users every arm must be able to receive.

    Returns
    -------
    numpy.ndarray
        The indices of the arms that fall short (empty when the graph is U-batched).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> check_u_batched(np.array([[1, 0], [1, 1], [0, 1], [1, 1]], bool), 2).size
    0
    >>> check_u_batched(np.array([[1, 1], [1, 0], [1, 0]], bool), 2).tolist()
    [1]
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    a = np.asarray(active, dtype=bool)
    N, K = a.shape
    s, t = N + K, N + K + 1
    ui, aj = np.nonzero(a)
    tail = np.concatenate([np.full(N, s), ui, N + np.arange(K)])
    head = np.concatenate([np.arange(N), N + aj, np.full(K, t)])
    # an arm never gets more than N users: a larger U is N + 1 (same answer, no int32 overflow)
    cap = np.concatenate([np.ones(N + len(ui)), np.full(K, min(U, N + 1))]).astype(np.int32)
    flow = maximum_flow(csr_matrix((cap, (tail, head)), shape=(N + K + 2, N + K + 2)), s, t).flow.tocsr()
    into_sink = np.asarray(flow[N + np.arange(K), np.full(K, t)]).ravel()
    return np.flatnonzero(into_sink < min(U, N + 1))
