"""The master's rounding (anondecomp.rounding) and the heuristic pricer of the column generation."""

from __future__ import annotations

import numpy as np
import pytest

from anondecomp import DemandGraph, decompose, lp_lower_bound
from anondecomp.lower_bound import ColumnGeneration, GreedyPricer, UserTypes
from anondecomp.rounding import round_down, round_faces, round_master
from anondecomp.validation import prepare
from anondecomp.verify import verify


def log_graph(seed: int, N: int = 40, K: int = 6, p: float = 0.6) -> DemandGraph:
    rng = np.random.default_rng(seed)
    w = np.where(rng.random((N, K)) < p, rng.integers(1, 6, (N, K)), 0).astype(float)
    empty = w.sum(axis=1) == 0
    w[empty, rng.integers(0, K, int(empty.sum()))] = 1.0   # every user wants something
    return DemandGraph.from_weights(w)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rounded_master_verifies_and_beats_a_long_seed(seed):
    g = log_graph(seed)
    C = 4
    greedy = decompose(g, C, method="greedy")
    bound = lp_lower_bound(g, C, seed=greedy)
    assert bound.decomposition is not None
    a, m = bound.decomposition
    assert verify(g, C, a, m).valid
    assert int(np.ceil(bound.value - 1e-6)) <= m.sum() < greedy.total_assignments


@pytest.mark.parametrize("seed", [0, 1])
def test_round_faces_of_a_converged_master(seed):
    g = log_graph(seed)
    C = 4
    prep = prepare(g, C, False)
    types = UserTypes.from_required(prep.required, g.support)
    cg = ColumnGeneration(types, C, g.n_arms)
    cg.add_initial_faces([])
    cg.run()
    assert cg.converged
    point = cg.last_solution()
    totals = []
    for rounding in (round_faces, round_down):
        a, m = rounding(prep, types, *point)
        assert verify(g, C, a, m).valid
        assert m.sum() >= np.ceil(cg.bound - 1e-6)
        totals.append(int(m.sum()))
    assert round_master(prep, types, *point)[1].sum() == min(totals)


def test_greedy_pricer_returns_a_vertex_of_P_C():
    g = log_graph(3, N=60, K=8)
    C = 5
    prep = prepare(g, C, False)
    types = UserTypes.from_required(prep.required, g.support)
    prices = np.random.default_rng(0).random(types.n_pairs)
    x = GreedyPricer(types, C, g.n_arms).solve(prices)
    per_arm = np.bincount(types.aj, weights=x, minlength=g.n_arms)
    per_type = np.bincount(types.ti, weights=x, minlength=types.n_types)
    assert x.sum() > 0
    assert ((per_arm == 0) | (per_arm >= C + 1)).all()   # every open arm holds C+1 users
    assert (per_type <= types.counts).all()              # a user on at most one arm
