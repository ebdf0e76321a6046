"""A Decomposition refuses an assignment off its user's support, whichever way the support is looked up: one
bitmap of every user, a bitmap of a slice of users at a time, or binary searches (so many arms that a slice
would hold a few users)."""

import numpy as np
import pytest

from anondecomp import Decomposition, InvalidInputError
from anondecomp import result as result_module
from tests.solvers.strategies import supported_graph

PATHS = {
    "whole bitmap": {},
    "user slices": {"_TABLE_CELLS": 0, "_SLICE_CELLS": 40, "_SLICE_USERS": 2},
    "binary search": {"_TABLE_CELLS": 0, "_SLICE_CELLS": 40, "_SLICE_USERS": 100},
}


def on_support(graph, R: int, seed: int) -> np.ndarray:
    """(R, N) random assignments, each user on an arm of its support."""
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, np.diff(graph.indptr)[None, :], size=(R, graph.n_users))
    return graph.edge_arms[graph.indptr[:-1][None, :] + pick]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("seed", range(6))
def test_on_support_passes_and_one_entry_off_it_is_named(monkeypatch, path, seed):
    for name, value in PATHS[path].items():
        monkeypatch.setattr(result_module, name, value)
    graph = supported_graph(seed, N=23, K=7, C=2)
    a = on_support(graph, R=9, seed=seed)
    Decomposition(graph, 2, "test", a, np.ones(len(a), dtype=np.int64))  # accepted
    rng = np.random.default_rng(seed)
    partial = np.flatnonzero(np.diff(graph.indptr) < graph.n_arms)  # users with an arm off their support
    r, i = int(rng.integers(9)), int(rng.choice(partial))
    off = np.setdiff1d(np.arange(graph.n_arms), graph.edge_arms[graph.indptr[i] : graph.indptr[i + 1]])
    a[r, i] = off[0]
    message = (
        f"^assignment {r} puts user {graph.users[i]!r} on arm {graph.arms[off[0]]!r}, which is not in its support$"
    )
    with pytest.raises(InvalidInputError, match=message):
        Decomposition(graph, 2, "test", a, np.ones(len(a), dtype=np.int64))
