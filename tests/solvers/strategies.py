"""Hypothesis strategies for demand graphs, and the benchmarks' random support."""

import numpy as np
from hypothesis import strategies as st

from anondecomp import DemandGraph


def random_weights(seed: int, N: int, K: int, C: int, values=(0, 0, 1, 2, 3, 0.5, 2.5)) -> np.ndarray:
    """(N, K) random weights from ``values``: every user wants some arm, every arm with demand has C+1 users."""
    rng = np.random.default_rng(seed)
    w = rng.choice(values, size=(N, K)).astype(float)
    w[~(w > 0).any(axis=1), 0] = 1.0
    for j in np.flatnonzero((w > 0).sum(axis=0) < C + 1):
        w[: C + 1, j] = np.maximum(w[: C + 1, j], 1.0)
    return w


def supported_graph(seed: int, N: int, K: int, C: int) -> DemandGraph:
    """:func:`random_weights` with a support wider than the demand (users that may pad an arm they do not want)."""
    w = random_weights(seed, N, K, C)
    support = (w > 0) | (np.random.default_rng(seed + 1000).random((N, K)) < 0.4)
    return DemandGraph.from_weights(w, support=support)


def random_support(N: int, K: int, seed: int) -> np.ndarray:
    """The generator of benchmarks/decompose_speed.py: an optimal arm per user, other arms with probability 1/2."""
    rng = np.random.default_rng(seed)
    active = rng.random((N, K)) < 0.5
    active[np.arange(N), rng.integers(0, K, N)] = True
    return active


@st.composite
def batched_graphs(draw, max_users=14, max_arms=4, max_C=3, feasible=True):
    """(graph, C): random active sets; with ``feasible`` every arm has at least C+1 possible users."""
    C = draw(st.integers(1, max_C))
    K = draw(st.integers(1, max_arms))
    N = draw(st.integers(C + 1, max(max_users, C + 1)))
    bits = draw(st.lists(st.lists(st.booleans(), min_size=K, max_size=K), min_size=N, max_size=N))
    active = np.array(bits, dtype=bool)
    empty = ~active.any(axis=1)
    active[empty, draw(st.integers(0, K - 1))] = True
    if feasible:
        for j in np.flatnonzero(active.sum(axis=0) < C + 1):
            active[: C + 1, j] = True
    demand = draw(st.one_of(st.integers(1, 60), st.floats(0.5, 60, allow_nan=False)))
    return DemandGraph.from_batched(demand, active), C


@st.composite
def weighted_graphs(draw, max_users=12, max_arms=4, max_C=3):
    """(graph, C): integer or fractional weights; every arm with demand has at least C+1 users."""
    C = draw(st.integers(1, max_C))
    K = draw(st.integers(1, max_arms))
    N = draw(st.integers(C + 1, max(max_users, C + 1)))
    w = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from([0, 0, 1, 2, 3, 5, 8, 0.5, 2.5]), min_size=K, max_size=K),
                min_size=N,
                max_size=N,
            )
        ),
        dtype=float,
    )
    w[~(w > 0).any(axis=1), 0] = 1.0
    for j in np.flatnonzero(((w > 0).sum(axis=0) < C + 1) & ((w > 0).sum(axis=0) > 0)):
        w[: C + 1, j] = np.maximum(w[: C + 1, j], 1.0)
    return DemandGraph.from_weights(w), C


@st.composite
def supported_graphs(draw, max_users=12, max_arms=4, max_C=3):
    """(graph, C): supports wider than the demand and users with zero demand; every arm with demand has at
    least C+1 users in its support (padding users included), so every method must place them to succeed."""
    C = draw(st.integers(1, max_C))
    K = draw(st.integers(1, max_arms))
    N = draw(st.integers(C + 1, max(max_users, C + 1)))
    w = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 0.5, 2.5]), min_size=K, max_size=K), min_size=N, max_size=N
            )
        ),
        dtype=float,
    )
    idle = np.array(draw(st.lists(st.booleans(), min_size=N, max_size=N)))
    w[idle] = 0.0  # users with zero demand
    extra = np.array(draw(st.lists(st.lists(st.booleans(), min_size=K, max_size=K), min_size=N, max_size=N)))
    support = (w > 0) | extra
    support[~support.any(axis=1), draw(st.integers(0, K - 1))] = True
    for j in np.flatnonzero(((w > 0).sum(axis=0) > 0) & (support.sum(axis=0) < C + 1)):
        support[np.argsort(~support[:, j], kind="stable")[: C + 1], j] = True  # fill with support, not demand
    return DemandGraph.from_weights(w, support=support), C
