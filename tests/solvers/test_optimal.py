"""The optimal method and the column-generation LP bound (beyond the paper, Lemma 3 and Open Problem 1): brute
force on tiny graphs, the bound below every verified decomposition, exact realisation steps, time limits and the
command line."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anondecomp
from anonbandits.cli.main import main
from anondecomp import DemandGraph, decompose, lp_lower_bound, verify
from anondecomp.bench.families import niche_groups, scarce
from anondecomp.lower_bound import UserTypes
from anondecomp.methods._common import Prepared
from anondecomp.methods.optimal import _realize, face_solution
from anondecomp.realize import colour_face, split_type, transport
from tests.solvers import brute
from tests.solvers.strategies import batched_graphs, weighted_graphs

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("case", range(40))
def test_column_generation_reaches_the_brute_force_optimum(case):
    graph, C = brute.tiny_graphs(40, seed=11)[case]
    lp_value, ip_value = brute.optimum(graph, C)
    bound = lp_lower_bound(graph, C)
    assert bound.converged
    assert bound.value == pytest.approx(lp_value, abs=1e-6)
    res = decompose(graph, C, "optimal")
    assert verify(graph, C, res).valid
    assert res.total_assignments == ip_value
    assert res.info["lp_lower_bound"] == pytest.approx(lp_value, abs=1e-6)


@SETTINGS
@given(st.one_of(batched_graphs(max_users=10), weighted_graphs(max_users=10)))
def test_lp_bound_never_exceeds_a_verified_decomposition(case):
    graph, C = case
    bound = lp_lower_bound(graph, C).value
    assert bound >= graph.lower_bound - 1e-9
    for method in ("greedy", "block", "randomized", "optimal"):
        res = decompose(graph, C, method)
        assert verify(graph, C, res).valid
        assert bound <= res.total_assignments + 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_optimal_beats_block_on_scarce_clusters_and_is_certified(seed):
    inst = scarce(80, 6, 3, 8, 120, seed=seed)
    blk, opt = decompose(inst.graph, inst.C, "block"), decompose(inst.graph, inst.C, "optimal")
    assert verify(inst.graph, inst.C, opt).valid
    assert opt.total_assignments < blk.total_assignments
    # certified: R / ceil(LP) - 1 is the reported gap, and it is within 1% here
    assert opt.info["lp_converged"]
    assert opt.total_assignments <= 1.01 * opt.info["lp_lower_bound"]
    assert opt.info["gap"] == pytest.approx(opt.total_assignments / np.ceil(opt.info["lp_lower_bound"] - 1e-6) - 1)


def test_identical_users_are_one_type_and_realised_exactly():
    # 6 groups of 3 identical users (C = 2): block needs several blocks, rotating the groups meets D
    inst = niche_groups(6, 2, 2, D=60, seed=0)
    assert decompose(inst.graph, inst.C, "block").total_assignments > inst.graph.lower_bound
    res = decompose(inst.graph, inst.C, "optimal")
    assert verify(inst.graph, inst.C, res).valid
    assert res.total_assignments == inst.graph.lower_bound  # the rotation meets D exactly
    assert res.info["gap"] == 0.0
    # the exact realisation of an integer face solution over user types, from block's faces
    prep = Prepared(inst.graph, inst.C, inst.graph.required, np.empty((0, 2), np.int64))
    types = UserTypes.from_required(prep.required)
    assert types.n_types == 6
    blk = decompose(inst.graph, inst.C, "block")
    faces, lengths, Y = face_solution(blk.assignments, blk.multiplicities, types, prep)
    a, m = _realize(prep, types, faces, lengths, Y)
    assert verify(inst.graph, inst.C, a, m).valid and m.sum() == lengths.sum()


def test_time_limit_returns_a_valid_decomposition_with_its_gap():
    inst = scarce(300, 8, 4, 12, 400, seed=0, niche=2)
    res = decompose(inst.graph, inst.C, "optimal", time_limit=0.05)
    assert verify(inst.graph, inst.C, res).valid
    bound = res.info["lp_lower_bound"]
    assert bound <= res.total_assignments
    assert res.info["gap"] >= 0
    assert res.total_assignments <= res.info["seed_total"]


def test_best_effort_covers_everything_coverable():
    active = np.array([[1, 1], [1, 0], [1, 0], [1, 1], [0, 1]], bool)  # arm 1 has 3 users, C = 3
    graph = DemandGraph.from_batched(6, active)
    with pytest.raises(anondecomp.InfeasibleError):
        decompose(graph, 3, "optimal")
    res = decompose(graph, 3, "optimal", best_effort=True)
    assert {tuple(p) for p in res.uncovered} == {(0, 1), (3, 1), (4, 1)}
    assert verify(graph, 3, res, required=np.where([False, True], 0, graph.required)).valid


def test_split_type_is_exact_and_each_profile_feasible():
    rng = np.random.default_rng(0)
    lengths, q, k = np.array([5, 3, 4]), np.array([2, 3, 1, 0]), 7
    allowed = rng.random((3, 4)) < 0.8
    allowed[:, :3] = True
    # a feasible total: k random feasible profiles added up
    Y = np.zeros((3, 4), np.int64)
    for _ in range(k):
        P = np.zeros((3, 4), np.int64)
        for j in range(3):
            for _ in range(q[j]):
                f = rng.choice(np.flatnonzero((P.sum(axis=1) < lengths) & allowed[:, j]))
                P[f, j] += 1
        Y += P
    out = split_type(Y, allowed, lengths, q, k)
    assert sum(c for _, c in out) == k
    assert (sum(c * P for P, c in out) == Y).all()
    for P, _ in out:
        assert (P.sum(axis=1) <= lengths).all() and (P.sum(axis=0) >= q).all() and (P[~allowed] == 0).all()


def test_colour_face_meets_every_degree_and_group_size():
    rng = np.random.default_rng(1)
    C, L, n, m = 2, 9, 12, 3
    H = np.zeros((n, m), np.int64)
    while not (H.sum(axis=0) >= (C + 1) * L).all():  # random rows with sum <= L, columns >= (C+1) L
        H = np.stack([np.bincount(rng.integers(0, m, int(rng.integers(5, L + 1))), minlength=m) for _ in range(n)])
    classes = colour_face(H, L, C)
    assert sum(c for _, c in classes) == L
    got = np.zeros_like(H)
    for arm, c in classes:
        on = arm >= 0
        assert (np.bincount(arm[on], minlength=m) >= C + 1).all()
        got[np.flatnonzero(on), arm[on]] += c
    assert (got == H).all()


def test_transport_reports_infeasible_bounds():
    er, ec = np.array([0, 1]), np.array([0, 0])
    assert transport(2, 1, er, ec, np.array([1, 1]), [1, 1], [1, 1], [3], [3]) is None
    flow = transport(2, 1, er, ec, np.array([2, 2]), [1, 1], [2, 2], [3], [3])
    assert flow is not None and flow.sum() == 3


@pytest.mark.parametrize("seed", range(3))
def test_transport_agrees_with_the_lp_and_meets_every_bound(seed):
    # the max-flow route reads each edge's flow back by position among the edges it keeps (zero-capacity edges
    # dropped): a wrong place would break a bound, and a wrong feasibility verdict would disagree with the LP
    from anondecomp.flows import _transport_lp

    rng = np.random.default_rng(seed)
    feasible = 0
    for _ in range(150):
        n, m = (int(v) for v in rng.integers(1, 9, 2))
        er, ec = np.nonzero(rng.random((n, m)) < rng.uniform(0.3, 1.0))
        cap = rng.integers(0, 4, len(er))  # zero capacities included
        row_lo = rng.integers(0, 3, n)
        row_hi = row_lo + rng.integers(0, 5, n)
        col_lo = rng.integers(0, 4, m)
        col_hi = col_lo + rng.integers(0, 5, m)
        flow = transport(n, m, er, ec, cap, row_lo, row_hi, col_lo, col_hi)
        lp = _transport_lp(n, m, er, ec, cap, row_lo, row_hi, col_lo, col_hi) if len(er) else None
        if flow is None:
            assert lp is None or not len(er) and (row_lo.any() or col_lo.any())
            continue
        feasible += 1
        assert lp is not None or not len(er)
        rows = np.bincount(er, weights=flow, minlength=n)
        cols = np.bincount(ec, weights=flow, minlength=m)
        assert ((flow >= 0) & (flow <= cap)).all()
        assert ((rows >= row_lo) & (rows <= row_hi)).all() and ((cols >= col_lo) & (cols <= col_hi)).all()
    assert feasible >= 20


def test_cli_certify_and_optimal(tmp_path, capsys):
    graph = {"C": 2, "demand": 12, "active_sets": {f"u{i}": ["a", "b"] if i < 3 else ["b", "c"] for i in range(6)}}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(graph))
    out = tmp_path / "d.json"
    assert main(["decompose", str(path), "--method", "block", "--certify", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "LP lower bound" in text and "R / LP lower bound" in text
    doc = json.loads(out.read_text())
    assert doc["lp_lower_bound"] <= doc["total_assignments"]
    assert main(["decompose", str(path), "--method", "optimal", "--time-limit", "30", "-o", str(out)]) == 0
    assert "status" in capsys.readouterr().out
    assert json.loads(out.read_text())["method"] == "optimal"
    assert main(["verify", str(path), str(out)]) == 0
    assert main(["decompose", str(path), "--method", "optimal", "--time-limit", "0"]) == 2
    assert "argument --time-limit: must be a positive finite number" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [0, 1, 6, 26])  # time-shared faces win; on 6 and 26 above the trivial bound
def test_uncoloured_timeshare_seed_is_exact_at_large_demand(seed):
    # the optimal method takes time-shared faces as its seed without colouring them (their face solution read
    # off the filled faces): on small graphs with a large demand, that face solution must be a feasible integer
    # point whose exact realisation verifies with R = its total, the same total as the coloured seed (the old
    # path), and the optimal result may never be longer than that seed
    from anondecomp.methods.auto import auto_decomposition
    from anondecomp.methods.route import TimeShared, auto_choice
    from anondecomp.validation import prepare

    rng = np.random.default_rng(seed)
    active = rng.random((14, 5)) < 0.5
    active[np.arange(14), rng.integers(0, 5, 14)] = True
    graph = DemandGraph.from_batched(5_000 + 977 * seed, active)
    C = 2
    prep = prepare(graph, C, False)
    chosen = auto_choice(graph, C, rng=np.random.default_rng(0))
    assert isinstance(chosen, TimeShared)
    old = auto_decomposition(graph, C, rng=np.random.default_rng(0), improve=False)  # the coloured seed
    assert old.method == "timeshare" and old.total_assignments == chosen.total_assignments
    assert verify(graph, C, old).valid
    types = UserTypes.from_required(prep.required, graph.support)
    faces, lengths, Y = chosen.plan.face_solution(types)
    assert lengths.sum() == chosen.total_assignments
    # the face program's rows: a type's samples fit its users' time, each open arm holds C+1 users per
    # assignment, and every pair gets its demand
    per_type = np.zeros((len(faces), types.n_types), dtype=np.int64)
    np.add.at(per_type, (slice(None), types.ti), Y)
    assert (per_type <= lengths[:, None] * types.counts[None, :]).all()
    for f, S in enumerate(faces):
        on_arm = np.bincount(types.aj, weights=Y[f], minlength=graph.n_arms)
        assert (on_arm[S] >= (C + 1) * lengths[f]).all()
        assert (Y[f][~S[types.aj]] == 0).all()
    assert (Y.sum(axis=0) >= types.demand).all()
    a, m = _realize(prep, types, faces, lengths, Y)
    assert verify(graph, C, a, m).valid and m.sum() == chosen.total_assignments
    # the old path: the coloured seed's face solution is the same (no parked users open a further arm here)
    old_faces, old_lengths, old_Y = face_solution(old.assignments, old.multiplicities, types, prep)
    assert np.array_equal(old_faces, faces) and np.array_equal(old_lengths, lengths)
    assert np.array_equal(old_Y, Y)
    res = decompose(graph, C, "optimal", rng=np.random.default_rng(0))
    assert verify(graph, C, res).valid
    assert res.info["seed"] == "timeshare" and res.total_assignments <= old.total_assignments
