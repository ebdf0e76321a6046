"""The master's rounding (anondecomp.rounding) and the heuristic pricer of the column generation."""

from __future__ import annotations

import numpy as np
import pytest

from anondecomp import DemandGraph, decompose, lp_lower_bound
from anondecomp.lower_bound import ColumnGeneration, GreedyPricer, UserTypes, column_generation, seed_faces
from anondecomp.rounding import round_down, round_faces, round_master
from anondecomp.validation import prepare
from anondecomp.verify import verify


def log_graph(seed: int, N: int = 40, K: int = 6, p: float = 0.6) -> DemandGraph:
    rng = np.random.default_rng(seed)
    w = np.where(rng.random((N, K)) < p, rng.integers(1, 6, (N, K)), 0).astype(float)
    empty = w.sum(axis=1) == 0
    w[empty, rng.integers(0, K, int(empty.sum()))] = 1.0  # every user wants something
    return DemandGraph.from_weights(w)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rounded_master_verifies_and_beats_a_long_seed(seed):
    g = log_graph(seed)
    C = 4
    greedy = decompose(g, C, method="greedy")
    prep = prepare(g, C, False)
    faces = seed_faces(prep, [(greedy.assignments, greedy.multiplicities)])
    cg = column_generation(prep, faces, floor=float(prep.lower_bound))
    bound, how = cg.certificate(float(prep.lower_bound))
    assert cg.converged and how == f"LP optimum over {cg.types.n_types} user types"
    a, m = round_master(prep, cg.types, *cg.last_solution())
    assert verify(g, C, a, m).valid
    assert int(np.ceil(bound - 1e-6)) <= m.sum() < greedy.total_assignments
    # the bound alone, from the same seed: the same LP optimum, and no decomposition
    alone = lp_lower_bound(g, C, seed=greedy)
    assert alone.value == pytest.approx(bound, abs=1e-6) and not hasattr(alone, "decomposition")


SOURCES = ("armfirst", "armfirst+improve", "lp", "polytope", "timeshare")


@pytest.mark.parametrize("seed", [0, 1])
def test_polish_searches_past_round_removal_and_records_the_bound(seed, monkeypatch):
    import anondecomp.improve as improve

    g = log_graph(seed)
    C = 4
    greedy = decompose(g, C, method="greedy")
    monkeypatch.setattr(improve, "shorter", lambda d, **kw: d)  # no rounds removed: the search alone
    polished = improve.polish(greedy, time_limit=20)
    assert verify(g, C, polished).valid
    assert polished.method in {f"greedy+{source}" for source in SOURCES}
    assert polished.info["improved_from"] == "greedy" and polished.info["seed_total"] == greedy.total_assignments
    bound = polished.info["lp_lower_bound"]
    assert polished.info["lp_converged"] and polished.info["lp_how"]
    assert bound == pytest.approx(lp_lower_bound(g, C, seed=greedy).value, abs=1e-6)
    assert int(np.ceil(bound - 1e-6)) <= polished.total_assignments < greedy.total_assignments


def test_polish_rounds_the_master_of_the_bound_when_no_seed_is_shorter(monkeypatch):
    import anondecomp.armfirst
    import anondecomp.improve as improve
    import anondecomp.lower_bound

    g = log_graph(0)
    C = 4
    greedy = decompose(g, C, method="greedy")
    monkeypatch.setattr(improve, "shorter", lambda d, **kw: d)
    monkeypatch.setattr(anondecomp.armfirst, "armfirst_rounds", lambda *args: None)
    monkeypatch.setattr(anondecomp.lower_bound, "fast_seed", lambda *args: [])
    polished = improve.polish(greedy, time_limit=20)
    assert polished.method == "greedy+lp" and verify(g, C, polished).valid
    how = polished.info["lp_how"]
    assert how.startswith("LP optimum over ") and how.endswith(" user types") and polished.info["lp_converged"]
    assert int(np.ceil(polished.info["lp_lower_bound"] - 1e-6)) <= polished.total_assignments
    assert polished.total_assignments < greedy.total_assignments


@pytest.mark.parametrize("seed", [0, 1])
def test_round_faces_of_a_converged_master(seed):
    g = log_graph(seed)
    C = 4
    prep = prepare(g, C, False)
    types = UserTypes.from_prepared(prep)
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
    assert ((per_arm == 0) | (per_arm >= C + 1)).all()  # every open arm holds C+1 users
    assert (per_type <= types.counts).all()  # a user on at most one arm
