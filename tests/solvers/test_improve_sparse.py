"""Round removal and the master's rounding on the edges (anondecomp.improve, anondecomp.rounding): no dense
users x arms array on their paths, padding users of an explicit support, and the same results as plain dense
references of the same algorithms on small graphs."""

from __future__ import annotations

import numpy as np
import pytest

import anondecomp
import anondecomp.lower_bound as lower_bound
from anondecomp import Decomposition, DemandGraph, decompose
from anondecomp.bench.real import powerlaw_log
from anondecomp.flows import transport
from anondecomp.improve import (
    EdgeIndex,
    drop_round,
    polish,
    reroute,
    rounds_of,
    shorten,
    shorten_long,
    shorter,
    unique_samples,
)
from anondecomp.lower_bound import ColumnGeneration, UserTypes, column_generation, seed_faces
from anondecomp.rounding import MU_TOL, round_down, round_faces, round_master, user_split
from anondecomp.validation import Prepared, prepare
from tests.solvers.improve_reference import reroute_reference, unique_reference


def padded_graph(seed: int, N: int = 60, K: int = 7) -> DemandGraph:
    """Weighted demand on an explicit support wider than it: users may pad arms they do not want (some users
    want nothing at all and only pad)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, size=(N, K)).astype(float) * (rng.random((N, K)) < 0.5)
    support = (w > 0) | (rng.random((N, K)) < 0.25)
    support[np.arange(N), rng.integers(0, K, size=N)] = True
    return DemandGraph.from_weights(w, support=support)


def small_log(seed: int, N: int = 40, K: int = 6) -> DemandGraph:
    rng = np.random.default_rng(seed)
    w = np.where(rng.random((N, K)) < 0.6, rng.integers(1, 6, (N, K)), 0).astype(float)
    empty = w.sum(axis=1) == 0
    w[empty, rng.integers(0, K, int(empty.sum()))] = 1.0
    return DemandGraph.from_weights(w)


def dense(graph: DemandGraph, per_edge, dtype=np.int64) -> np.ndarray:
    """A per-edge array as an (N, K) table (for the references only, built here, not by the package)."""
    out = np.zeros(graph.shape, dtype=dtype)
    out[graph.edge_users, graph.edge_arms] = per_edge
    return out


@pytest.fixture
def no_dense(monkeypatch):
    """The dense (N, K) views of the graph and of the demand raise when read."""

    def refuse(self):
        raise AssertionError("dense users x arms array built on a sparse path")

    for cls, name in (
        (DemandGraph, "weights"),
        (DemandGraph, "required"),
        (DemandGraph, "support"),
        (Prepared, "required"),
    ):
        monkeypatch.setattr(cls, name, property(refuse))


# -- (a) no dense array on the paths ------------------------------------------------------------------------


def test_round_removal_reads_the_edges_only(no_dense):
    for graph, C, best_effort in ((powerlaw_log(150, 20, 5, 0), 5, False), (padded_graph(0), 3, True)):
        prep = prepare(graph, C, best_effort)
        seed = decompose(graph, C, method="greedy", best_effort=best_effort)
        rounds = rounds_of(seed.assignments, seed.multiplicities)
        assert unique_samples(prep, rounds).shape == (len(rounds),)
        out = drop_round(prep, rounds, int(np.argmin(unique_samples(prep, rounds))))
        if out is not None:
            assert anondecomp.verify(graph, C, out, np.ones(len(out), np.int64), best_effort=best_effort).valid
        for found in (
            shorten(prep, seed.assignments, seed.multiplicities),
            shorten_long(prep, seed.assignments, seed.multiplicities),
        ):
            assert found is not None and anondecomp.verify(graph, C, *found, best_effort=best_effort).valid
        short = shorter(seed, best_effort=best_effort)
        assert short.total_assignments < seed.total_assignments
        assert anondecomp.verify(graph, C, short, best_effort=best_effort).valid


def test_polish_and_the_rounded_master_read_the_edges_only(no_dense, monkeypatch):
    # the fast seed (polytope, time-shared faces) builds the dense models of those methods: left out here
    monkeypatch.setattr(lower_bound, "fast_seed", lambda *args: [])
    for graph, C, best_effort in (
        (powerlaw_log(300, 40, 5, 0), 5, False),
        (small_log(0), 4, False),
        (padded_graph(1), 3, True),
    ):
        seed = decompose(graph, C, method="greedy", best_effort=best_effort)
        polished = polish(seed, best_effort=best_effort, time_limit=20)
        assert polished.total_assignments < seed.total_assignments
        assert anondecomp.verify(graph, C, polished, best_effort=best_effort).valid
        prep = prepare(graph, C, best_effort)
        cg = column_generation(
            prep, seed_faces(prep, [(seed.assignments, seed.multiplicities)]), floor=float(prep.lower_bound)
        )
        a, m = round_master(prep, cg.types, *cg.last_solution())
        assert anondecomp.verify(graph, C, a, m, best_effort=best_effort).valid


def test_polish_rounds_the_master_on_the_edges(no_dense, monkeypatch):
    import anondecomp.armfirst
    import anondecomp.improve as improve

    graph = small_log(0)
    seed = decompose(graph, 4, method="greedy")
    monkeypatch.setattr(improve, "shorter", lambda d, **kw: d)  # the master's rounding is the only source
    monkeypatch.setattr(anondecomp.armfirst, "armfirst_rounds", lambda *args: None)
    monkeypatch.setattr(lower_bound, "fast_seed", lambda *args: [])
    polished = polish(seed, time_limit=20)
    assert polished.method == "greedy+lp" and anondecomp.verify(graph, 4, polished).valid


# -- (b) an explicit support: users pad arms they do not want ------------------------------------------------


def test_a_padder_without_demand_opens_an_arm():
    # C = 2: arm 0 is wanted by users 0 and 1 only, so it opens only with user 2, who wants nothing and may play
    # either arm (its edges have demand 0); users 3-5 want arm 1, which users 0-2 may pad too
    w = np.array([[1, 0], [1, 0], [0, 0], [0, 1], [0, 1], [0, 1]], float)
    support = np.array([[1, 1], [1, 1], [1, 1], [0, 1], [0, 1], [0, 1]], bool)
    g = DemandGraph.from_weights(w, support=support)
    assert g.explicit_support and g.nnz == 9
    rounds = np.array([[1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1]])
    assert anondecomp.verify(g, 2, rounds, np.ones(2, np.int64)).valid
    prep = prepare(g, 2, False)
    assert unique_samples(prep, rounds).tolist() == [0, 2]  # round 1: users 0 and 1's only samples
    assert drop_round(prep, rounds, 0).tolist() == [[0, 0, 0, 1, 1, 1]]  # nothing lost
    # deleting round 1, arm 0 opens in round 0: users 0 and 1 with user 2 padding it
    assert drop_round(prep, rounds, 1).tolist() == [[0, 0, 0, 1, 1, 1]]
    assert reroute(g, prep.edge_required, 3, rounds[:1]) is None  # rerouting opens no arm
    short = shorter(Decomposition(g, 2, "given", rounds, np.ones(2, np.int64)))
    assert short.total_assignments == 1 and anondecomp.verify(g, 2, short).valid


def test_a_user_never_moves_off_its_support():
    # user 2 may play arm 0 only; rerouting must find another way than moving it to arm 1
    w = np.array([[1, 1], [1, 1], [1, 0], [0, 1]], float)
    g = DemandGraph.from_weights(w)
    rounds = np.array([[0, 0, 0, 1], [1, 1, 0, 1], [0, 1, 0, 1]])
    prep = prepare(g, 1, False)
    for d in range(3):
        out = drop_round(prep, rounds, d)
        if out is not None:
            assert (out[:, 2] == 0).all() and anondecomp.verify(g, 1, out, np.ones(len(out), np.int64)).valid
        found = reroute(g, prep.edge_required, 2, np.delete(rounds, d, axis=0))
        if found is not None:
            assert (found[:, 2] == 0).all() and anondecomp.verify(g, 1, found, np.ones(2, np.int64)).valid


@pytest.mark.parametrize("seed", range(4))
def test_padded_graphs_polish_with_padders_and_verify(seed):
    g = padded_graph(seed)
    d = decompose(g, 3, method="greedy", best_effort=True)
    for out in (shorter(d, best_effort=True), polish(d, best_effort=True, time_limit=20)):
        assert out.total_assignments <= d.total_assignments
        assert anondecomp.verify(g, 3, out, best_effort=True).valid


# -- (c) the same results as dense references -------------------------------------------------------------


def test_edge_index_finds_every_pair_and_only_the_support():
    g = padded_graph(2, N=30, K=9)
    ix = EdgeIndex(g)
    table = np.full(g.shape, -1)
    table[g.edge_users, g.edge_arms] = np.arange(g.nnz)
    users, arms = np.meshgrid(np.arange(g.n_users), np.arange(g.n_arms), indexing="ij")
    assert np.array_equal(ix.of(users, arms), table)
    assert all(ix.one(i, j) == table[i, j] for i in range(g.n_users) for j in range(g.n_arms))
    players, start = ix.players
    for j in range(g.n_arms):
        assert players[start[j] : start[j + 1]].tolist() == np.flatnonzero(table[:, j] >= 0).tolist()


def split_reference(prep: Prepared, types: UserTypes, faces: np.ndarray, Y: np.ndarray, lengths: np.ndarray):
    """The split of the demand over the faces on dense (F, N, K) tables, one flow row per (user, face), as
    :func:`anondecomp.rounding.user_split` defines it; returned as (face, edge, demand) entries."""
    g = prep.graph
    req = dense(g, prep.edge_required)
    N, K = req.shape
    F = len(faces)
    pair = {(int(t), int(a)): p for p, (t, a) in enumerate(zip(types.ti, types.aj, strict=True))}
    share = np.zeros((F, N, K))
    for f in range(F):
        for i, j in zip(*np.nonzero(req), strict=True):
            if faces[f, j]:
                t = types.of_user[i]
                share[f, i, j] = max(Y[f, pair[int(t), int(j)]] / types.counts[t], 0.0)
    total = share.sum(axis=0)
    if (total < req - 1e-6).any():
        return None
    z = share * (req / np.maximum(total, 1e-12))[None]
    f, i, j = np.nonzero(z > 1e-12)
    y = z[f, i, j]
    lo, hi = np.floor(y + 1e-9).astype(np.int64), np.ceil(y - 1e-9).astype(np.int64)
    cols = {(int(a), int(b)): c for c, (a, b) in enumerate(zip(*np.nonzero(req), strict=True))}
    col = np.array([cols[int(a), int(b)] for a, b in zip(i, j, strict=True)], dtype=np.int64)
    r = req[req > 0]
    row = i * F + f
    flow = transport(
        N * F,
        len(r),
        row,
        col,
        hi - lo,
        np.zeros(N * F, np.int64),
        np.tile(lengths, N) - np.bincount(row, weights=lo, minlength=N * F).astype(np.int64),
        r - np.bincount(col, weights=lo, minlength=len(r)).astype(np.int64),
        r - np.bincount(col, weights=lo, minlength=len(r)).astype(np.int64),
    )
    if flow is None:
        return None
    table = np.full(g.shape, -1)
    table[g.edge_users, g.edge_arms] = np.arange(g.nnz)
    return f, table[i, j], lo + flow


def cases(logs: int = 3):
    """Small graphs and decompositions of them: logs (greedy and least-slack seeds) and padded graphs."""
    out = []
    for s in range(logs):
        g = powerlaw_log(150, 20, 5, s)
        out += [(g, 5, False, decompose(g, 5, method=m)) for m in ("greedy", "slack")]
    for s in range(3):
        g = padded_graph(s, N=40, K=6)
        out += [(g, 3, True, decompose(g, 3, method=m, best_effort=True)) for m in ("greedy", "slack")]
    return out


def test_unique_samples_and_rerouting_are_those_of_the_dense_reference():
    repaired = 0
    for g, C, best_effort, d in cases(logs=1):  # the reference's plain loops are slow: one log
        prep = prepare(g, C, best_effort)
        req = dense(g, prep.edge_required)
        support = dense(g, True, bool)
        rounds = rounds_of(d.assignments, d.multiplicities).astype(np.int64)
        assert unique_samples(prep, rounds).tolist() == unique_reference(req, rounds, C + 1)
        for r in range(len(rounds)):
            kept = np.delete(rounds, r, axis=0)
            found, expected = reroute(g, prep.edge_required, C + 1, kept), reroute_reference(support, req, C + 1, kept)
            assert (found is None) == (expected is None)
            if found is not None:
                repaired += 1
                assert np.array_equal(found, expected)
    assert repaired > 50


def test_the_split_of_the_master_is_that_of_the_dense_reference():
    checked = 0
    for g, C, best_effort, d in cases() + [(small_log(s), 4, False, None) for s in range(3)]:
        prep = prepare(g, C, best_effort)
        if d is None:  # a converged master from no seed
            types = UserTypes.from_prepared(prep)
            cg = ColumnGeneration(types, C, g.n_arms)
            cg.add_initial_faces([])
            cg.run()
        else:
            cg = column_generation(
                prep, seed_faces(prep, [(d.assignments, d.multiplicities)]), floor=float(prep.lower_bound)
            )
        faces, mu, Y = cg.last_solution()
        keep = mu > MU_TOL
        faces, mu, Y = np.asarray(faces)[keep], mu[keep], Y[keep]
        lengths = np.ceil(mu - 1e-9).astype(np.int64)
        found = user_split(prep, cg.types, faces, mu, Y, lengths)
        expected = split_reference(prep, cg.types, faces, Y, lengths)
        assert (found is None) == (expected is None)
        if found is not None:
            checked += 1
            for x, y in zip(found, expected, strict=True):
                assert np.array_equal(x, y)
            # the demand, split exactly; each user within a face's length
            assert np.array_equal(np.bincount(found[1], weights=found[2], minlength=g.nnz), prep.edge_required)
        for rounding in (round_faces, round_down, round_master):
            a, m = rounding(prep, cg.types, faces, mu, Y)
            assert anondecomp.verify(g, C, a, m, best_effort=best_effort).valid
    assert checked >= 9


def test_deleting_the_only_round_finds_nothing():
    g = DemandGraph.from_weights(np.ones((3, 1)))
    prep = prepare(g, 2, False)
    assert drop_round(prep, np.zeros((1, 3), np.int64), 0) is None
