"""The session calendar (anondecomp.methods.sessions): every result through the exact verifier."""

import numpy as np
import pytest
from scipy.sparse import random_array

import anondecomp
from anondecomp import DemandGraph, lp_lower_bound, verify
from anondecomp.lower_bound import TRIVIAL
from anondecomp.methods.auto import auto_decomposition
from anondecomp.methods.sessions import LARGE_EDGES, sessions_decomposition


def sparse_log(n_users: int, n_arms: int, density: float, seed: int, high: int = 1) -> DemandGraph:
    """A random sparse log (integer weights 1..high), every user with at least one arm, thin arms kept."""
    rng = np.random.default_rng(seed)
    m = random_array((n_users, n_arms), density=density, rng=rng, format="lil")
    for i in np.flatnonzero(m.count_nonzero(axis=1) == 0):
        m[i, rng.integers(n_arms)] = 1.0
    m = m.tocsr()
    m.data = rng.integers(1, high + 1, size=m.nnz).astype(float)
    return DemandGraph.from_weights(m)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("C", [1, 3, 8])
def test_sessions_verify_and_never_beat_the_bound(seed, C):
    g = sparse_log(120, 15, 0.2, seed, high=3)
    res = sessions_decomposition(g, C, best_effort=True)
    assert verify(g, C, res, best_effort=True).valid
    assert res.total_assignments >= res.lower_bound or len(res.uncovered)
    assert res.method == "sessions"


def test_sessions_meet_the_bound_on_a_power_law_log():
    from anondecomp.bench.real import powerlaw_log

    g = powerlaw_log(3000, 300, C=10, seed=1)
    res = sessions_decomposition(g, 10)
    assert verify(g, 10, res).valid
    assert res.total_assignments == g.lower_bound
    assert res.info["added_rounds"] == 0


def test_a_thin_arm_whose_users_are_never_free_together_gets_a_new_round():
    # users 0-1 want arms 0 and 1 (C = 1: groups of 2), user 2 wants arm 1 only; with L = 2 rounds
    w = np.array([[1, 1], [1, 1], [0, 1]], float)
    res = sessions_decomposition(DemandGraph.from_weights(w), 1)
    assert verify(DemandGraph.from_weights(w), 1, res).valid
    assert res.total_assignments == 2


def test_padders_fill_a_group_short_of_needing_users():
    # arm 1 is wanted by user 0 only at C = 2, but users 1 and 2 may play it (support without demand)
    w = np.array([[1, 1, 0], [1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1]], float)
    support = w > 0
    support[1:3, 1] = True
    g = DemandGraph.from_weights(w, support=support)
    res = sessions_decomposition(g, 2)
    assert verify(g, 2, res).valid
    assert res.info["padded_sessions"] >= 1


def test_auto_schedules_large_logs_by_sessions_and_the_bound_needs_no_lp():
    from anondecomp.bench.real import powerlaw_log

    g = powerlaw_log(6000, 600, C=20, seed=2)
    assert g.nnz >= LARGE_EDGES
    res = auto_decomposition(g, 20)
    assert res.method == "sessions" and verify(g, 20, res).valid
    assert anondecomp.decompose(g, 20).total_assignments == res.total_assignments
    bound = lp_lower_bound(g, 20, seed=res)
    assert bound.how == TRIVIAL and bound.value == res.total_assignments == g.lower_bound
