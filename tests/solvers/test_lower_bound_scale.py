"""The LP bound at scale: user types read from the edges (exactly the dense types), and a certified bound above
the trivial one on a graph past DENSE_CELLS users x arms, in bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import anondecomp.lower_bound as lower_bound
from anondecomp import DemandGraph
from anondecomp.lower_bound import UserTypes
from anondecomp.validation import prepare

ROOT = Path(__file__).resolve().parents[2]


def random_graph(rng: np.random.Generator, padding: bool, duplicates: bool) -> DemandGraph:
    """A small weighted graph; with ``padding`` an explicit support wider than the demand, with ``duplicates``
    many users sharing a row (so that types merge)."""
    N, K = int(rng.integers(2, 40)), int(rng.integers(1, 8))
    w = (rng.integers(0, 4, (N, K)) * (rng.random((N, K)) < 0.5)).astype(float)
    if duplicates:
        w = w[rng.integers(0, N, N)]
    support = None
    if padding:
        support = (w > 0) | (rng.random((N, K)) < 0.3)
        support[np.arange(N), rng.integers(0, K, N)] = True
    else:
        empty = w.sum(axis=1) == 0
        w[empty, rng.integers(0, K, int(empty.sum()))] = 1.0
    return DemandGraph.from_weights(w, support=support)


def assert_same_types(graph: DemandGraph, C: int) -> None:
    prep = prepare(graph, C, True)
    sparse = UserTypes.from_prepared(prep)
    dense = UserTypes.from_required(prep.required, graph.support)
    # the same partition of the users, in the same order, with the same pairs and demands
    assert sparse.of_user.tolist() == dense.of_user.tolist()
    assert sparse.counts.tolist() == dense.counts.tolist()
    assert sparse.ti.tolist() == dense.ti.tolist() and sparse.aj.tolist() == dense.aj.tolist()
    assert sparse.q.tolist() == dense.q.tolist()
    # and it is the partition of the dense rows: users share a type exactly when their rows agree
    req = np.asarray(prep.required)
    may = (req > 0) | (graph.support & (req > 0).any(axis=0)[None, :])
    rows = [tuple(r) + tuple(m) for r, m in zip(req.tolist(), may.tolist(), strict=True)]
    for i in range(graph.n_users):
        same = [rows[k] == rows[i] for k in range(graph.n_users)]
        assert same == (sparse.of_user == sparse.of_user[i]).tolist()


@pytest.mark.parametrize("padding", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_types_from_edges_are_the_dense_types(seed, padding):
    rng = np.random.default_rng(seed)
    for k in range(15):
        assert_same_types(random_graph(rng, padding, duplicates=k % 2 == 0), int(rng.integers(1, 3)))


@pytest.mark.parametrize("forced", ["all equal", "by length parity"])
def test_types_stay_exact_when_the_hash_collides(monkeypatch, forced):
    """Every row hashes alike (or only two hashes exist): the check pair by pair must still separate them."""
    collide = {
        "all equal": lambda ptr, arms, values: np.zeros(len(ptr) - 1, np.uint64),
        "by length parity": lambda ptr, arms, values: (np.diff(ptr) % 2).astype(np.uint64),
    }[forced]
    monkeypatch.setattr(lower_bound, "_row_hash", collide)
    rng = np.random.default_rng(7)
    for k in range(20):
        assert_same_types(random_graph(rng, padding=k % 3 == 0, duplicates=True), 1)


def test_rows_left_after_the_last_check_become_types_of_their_own(monkeypatch):
    """Past SPLIT_ROUNDS checks the rows still unmatched become singleton types: finer types, never merged
    ones, and the LP over them has the same value."""
    w = np.array([[1, 0], [0, 1], [0, 1], [2, 0], [1, 0], [0, 1]], float)  # three distinct rows of one pair each
    g = DemandGraph.from_weights(w)
    exact = lower_bound.lp_lower_bound(g, 1).value
    monkeypatch.setattr(lower_bound, "_row_hash", lambda ptr, arms, values: np.zeros(len(ptr) - 1, np.uint64))
    monkeypatch.setattr(lower_bound, "SPLIT_ROUNDS", 1)
    types = UserTypes.from_prepared(prepare(g, 1, False))
    of = types.of_user
    assert of[0] == of[4] and len({of[0], of[1], of[2], of[3], of[5]}) == 5  # users 1, 2 and 5 split apart
    assert types.n_types == 5 and types.counts.sum() == 6
    assert lower_bound.lp_lower_bound(g, 1).value == pytest.approx(exact)


def test_the_bound_has_no_dense_users_x_arms_array(monkeypatch):
    """The LP path reads the edges only: the dense demand of Prepared and the graph's dense views stay unbuilt."""
    from anondecomp.validation import Prepared

    def refuse(self):
        raise AssertionError("dense users x arms array built on the LP path")

    monkeypatch.setattr(Prepared, "required", property(refuse))
    monkeypatch.setattr(DemandGraph, "support", property(refuse))
    monkeypatch.setattr(DemandGraph, "required", property(refuse))
    # no fast seed (the dense methods' own models are theirs): the types, master and pricers alone
    monkeypatch.setattr(lower_bound, "fast_seed", lambda *args: [])
    g = DemandGraph.from_batched(10, np.array([[1, 1]] * 4 + [[1, 0]], bool))
    bound = lower_bound.lp_lower_bound(g, 3)
    assert bound.converged and bound.value == pytest.approx(15.0) and bound.how == "LP optimum over 2 user types"


SCALE_SCRIPT = textwrap.dedent("""
    import json, resource, time
    import numpy as np
    from scipy.sparse import csr_array
    import anondecomp
    from anondecomp.validation import DENSE_CELLS

    # 200 disjoint triangles of arms; in each, groups {a, b}, {b, c}, {a, c} of 166 users. An arm is wanted by
    # its two groups, 332 users = C + 1: open, it takes all of them, so a triangle opens one arm per round and
    # needs 3 x 10 rounds where every user needs only 20 (the trivial bound)
    n_tri, group, D = 200, 166, 20
    pairs = np.array([[0, 1], [1, 2], [0, 2]])
    tri = np.repeat(np.arange(n_tri), 3 * group)
    grp = np.tile(np.repeat(np.arange(3), group), n_tri)
    N, K, C = len(tri), 3 * n_tri, 2 * group - 1
    users = np.repeat(np.arange(N), 2)
    arms = (3 * tri[:, None] + pairs[grp]).ravel()
    g = anondecomp.DemandGraph.from_batched(D, csr_array((np.ones(2 * N, bool), (users, arms)), shape=(N, K)))
    start = time.perf_counter()
    bound = anondecomp.lp_lower_bound(g, C, time_limit=20)
    seconds = time.perf_counter() - start
    d = anondecomp.decompose(g, C, method="sessions")
    print(json.dumps({"cells": g.n_users * g.n_arms, "dense_cells": DENSE_CELLS, "trivial": g.lower_bound,
                      "bound": bound.value, "how": bound.how, "converged": bound.converged, "seconds": seconds,
                      "R": d.total_assignments, "valid": anondecomp.verify(g, C, d).valid,
                      "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
""")


def test_a_graph_past_dense_cells_gets_a_certified_bound_above_the_trivial_one():
    """10^5 users x 600 arms (6 x 10^7 cells, past DENSE_CELLS, where the bound used to be the trivial one): the
    LP over 600 user types certifies 30 rounds against the trivial 20, in its own process within 2 GB."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "solvers"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCALE_SCRIPT], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["cells"] > out["dense_cells"]
    assert out["bound"] > out["trivial"] and out["how"] != lower_bound.TOO_LARGE
    assert out["converged"] and out["bound"] == pytest.approx(30.0) and out["how"] == "LP optimum over 600 user types"
    assert out["seconds"] < 20
    assert out["valid"] and out["bound"] <= out["R"] + 1e-6
    assert out["peak_bytes"] < 2 * 2**30


def test_a_type_level_model_above_max_pairs_gets_the_named_trivial_bound(monkeypatch):
    monkeypatch.setattr(lower_bound, "MAX_PAIRS", 1)
    monkeypatch.setattr(lower_bound, "fast_seed", lambda *args: [])
    g = DemandGraph.from_batched(10, np.array([[1, 1]] * 4 + [[1, 0]], bool))  # 2 types, 3 pairs
    bound = lower_bound.lp_lower_bound(g, 3)
    assert (bound.value, bound.converged, bound.how) == (10.0, False, lower_bound.TOO_LARGE)
    assert "MAX_PAIRS" in lower_bound.TOO_LARGE
    assert lower_bound.column_generation(prepare(g, 3, False)) is None
