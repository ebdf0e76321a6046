"""Every method's output passes the exact verifier and respects its paper bound (paper 000, Sec. 3.4)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anondecomp
from anondecomp import DemandGraph, InfeasibleError, MethodNotApplicableError, decompose, verify
from anondecomp.methods.polytope import polytope_applies
from tests.solvers.strategies import batched_graphs, weighted_graphs

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
graphs = st.one_of(batched_graphs(), weighted_graphs())


def _U_alpha(graph, C):
    wanted = (graph.required > 0).any(axis=0)
    K = int(wanted.sum())
    U = int(graph.arm_degrees[wanted].min())
    return K, U, math.ceil(K * (C + 1) / U)


def _assert_valid(graph, C, res):
    report = verify(graph, C, res)
    assert report.valid, report.summary()
    assert res.total_assignments >= graph.lower_bound
    assert (res.multiplicities >= 1).all()


@SETTINGS
@given(graphs)
def test_greedy_is_the_papers_K_times_D(case):
    graph, C = case
    res = decompose(graph, C, "greedy")
    _assert_valid(graph, C, res)
    K, _, _ = _U_alpha(graph, C)
    D = math.ceil(graph.demand) if graph.demand is not None else graph.lower_bound
    assert res.total_assignments == K * D
    assert res.n_distinct == K


@pytest.mark.parametrize("K, D", [(5, 100), (3, 7), (8, 1)])
def test_greedy_on_an_all_active_graph_uses_K_times_D(K, D):
    """Section 3.4.1: D copies of each M_j, K D in all, although D assignments would do here."""
    graph = DemandGraph.from_batched(D, np.ones((K * 4, K), bool))
    res = decompose(graph, 3, "greedy")
    _assert_valid(graph, 3, res)
    assert res.total_assignments == K * D
    assert decompose(graph, 3, "polytope").total_assignments <= D + K * 3 + 1


def test_greedy_on_a_scarce_graph_uses_K_times_D():
    """U = C+1 users per arm, each user with one or two active arms: still exactly K D."""
    K, C, D = 4, 2, 9
    active = np.zeros((K * (C + 1), K), bool)
    active[np.arange(K * (C + 1)), np.repeat(np.arange(K), C + 1)] = True
    active[::2, 0] = True
    graph = DemandGraph.from_batched(D, active)
    res = decompose(graph, C, "greedy")
    _assert_valid(graph, C, res)
    assert res.total_assignments == K * D


@SETTINGS
@given(graphs)
def test_block_valid_and_within_corollary_2(case):
    graph, C = case
    res = decompose(graph, C, "block")
    _assert_valid(graph, C, res)
    K, U, alpha = _U_alpha(graph, C)
    D = graph.demand if graph.demand is not None else graph.weights.sum(axis=1).max()
    assert res.total_assignments <= alpha * math.ceil(D) + graph.n_users * graph.n_arms + 1


@SETTINGS
@given(graphs, st.sampled_from(["auto", "colouring", "caratheodory"]))
def test_polytope_valid_and_within_corollary_1(case, vertices):
    graph, C = case
    if len(polytope_applies(graph, C)):
        with pytest.raises(MethodNotApplicableError, match="use method='block'"):
            decompose(graph, C, "polytope")
        return
    res = decompose(graph, C, "polytope", vertices=vertices)
    _assert_valid(graph, C, res)
    D = graph.demand if graph.demand is not None else graph.weights.sum(axis=1).max()
    assert res.total_assignments <= math.ceil(D) + graph.n_users * graph.n_arms + 1


def _randomized_one_block_at_a_time(graph, C, rng):
    """The randomized method (Section 4 simulations) as a plain loop: blocks of BATCH uniform assignments until the
    demand is met, cut at the first assignment that meets it (the sampling the method vectorises)."""
    from anondecomp.methods import randomized
    from anondecomp.result import compress
    from anondecomp.verify import coverage

    choices = [np.flatnonzero(row) for row in graph.support]
    need = np.asarray(graph.required, np.int64).copy()
    drawn = []
    while (need > 0).any():
        u = rng.random((randomized.BATCH, graph.n_users))
        block = np.array(
            [
                [choices[i][int(u[r, i] * len(choices[i]))] for i in range(graph.n_users)]
                for r in range(randomized.BATCH)
            ],
            dtype=np.int8,
        )
        for r in range(randomized.BATCH):
            need -= coverage(block[r : r + 1], np.ones(1, np.int64), C, graph.n_arms)
            drawn.append(block[r])
            if (need <= 0).all():
                break
    return compress(np.array(drawn), np.ones(len(drawn), np.int64))


@pytest.mark.parametrize("block", [None, 16])
def test_randomized_matches_a_plain_loop(block, monkeypatch):
    """Same assignments and the same generator state after it as the plain loop, however many blocks one draw
    takes (with blocks of 16 assignments, draws span several blocks and the last one is cut and rewound)."""
    from anondecomp.methods import randomized

    if block:
        monkeypatch.setattr(randomized, "BATCH", block)
    rng = np.random.default_rng(5)
    support = rng.random((24, 3)) < 0.8
    support[np.arange(24), np.arange(24) % 3] = True
    graph = DemandGraph.from_weights(np.where(support, rng.integers(0, 150, (24, 3)), 0), support=support)
    for seed in range(3):
        mine, plain = np.random.default_rng(seed), np.random.default_rng(seed)
        res = decompose(graph, 2, "randomized", rng=mine)
        a, m = _randomized_one_block_at_a_time(graph, 2, plain)
        assert np.array_equal(res.assignments, a) and np.array_equal(res.multiplicities, m)
        assert mine.random() == plain.random()
        _assert_valid(graph, 2, res)


@SETTINGS
@given(graphs, st.integers(0, 2**32 - 1))
def test_randomized_valid(case, seed):
    graph, C = case
    res = decompose(graph, C, "randomized", seed=seed)
    _assert_valid(graph, C, res)


@SETTINGS
@given(batched_graphs(feasible=False))
def test_infeasible_exactly_when_an_arm_has_1_to_C_users(case):
    graph, C = case
    deg = graph.arm_degrees
    thin = np.flatnonzero((deg > 0) & (deg <= C))
    if len(thin) == 0:
        _assert_valid(graph, C, decompose(graph, C))
        return
    with pytest.raises(InfeasibleError) as err:
        decompose(graph, C, "greedy")
    assert set(err.value.arms) == {graph.arms[j] for j in thin}
    res = decompose(graph, C, "auto", best_effort=True)
    assert {tuple(p) for p in res.uncovered} == {(i, j) for i, j in np.argwhere(graph.required > 0) if j in thin}
    report = verify(graph, C, res, required=np.where(np.isin(np.arange(graph.n_arms), thin), 0, graph.required))
    assert report.valid, report.summary()


def test_polytope_reaches_lower_bound_on_a_large_u_batched_graph():
    rng = np.random.default_rng(7)
    N, K, C = 2000, 8, 5
    active = rng.random((N, K)) < 0.4
    active[np.arange(N), rng.integers(0, K, N)] = True
    graph = DemandGraph.from_batched(500, active)
    res = decompose(graph, C, "polytope")
    _assert_valid(graph, C, res)
    assert res.total_assignments == graph.lower_bound
    assert res.info["route"] == "schedule"
    assert res.n_distinct <= K * (K + 1) // 2 + 1


def test_block_beats_greedy_when_polytope_does_not_apply():
    rng = np.random.default_rng(3)
    N, K, C = 24, 6, 4  # total mass N = 24 < K(C+1) = 30: some column of w_hat is below C+1
    opt = np.repeat(np.arange(K), N // K)
    active = rng.random((N, K)) < 0.5
    active[np.arange(N), opt] = True
    graph = DemandGraph.from_batched(300, active)
    assert len(polytope_applies(graph, C))
    blk, grd = decompose(graph, C, "block"), decompose(graph, C, "greedy")
    assert decompose(graph, C, "auto", improve=False, reseat=False).method == "block"  # the paper's route
    best = decompose(graph, C, "auto")  # sessions first and the improvement step: never longer
    _assert_valid(graph, C, best)
    assert best.total_assignments <= blk.total_assignments
    _assert_valid(graph, C, blk)
    assert blk.total_assignments < grd.total_assignments


@pytest.mark.parametrize("vertices", ["auto", "colouring", "caratheodory"])
def test_every_vertex_route_is_exact_on_a_tight_instance(vertices):
    # every arm's column of w_hat sums to exactly C+1: no slack for the schedule's rotations
    C, K = 2, 3
    active = np.zeros((9, K), bool)
    for i in range(9):
        active[i, i % K] = True
    active[:3] = True  # three users on every arm
    active[3:6, :] = np.eye(3, dtype=bool)
    graph = DemandGraph.from_batched(12, active)
    res = decompose(graph, C, "polytope", vertices=vertices)
    _assert_valid(graph, C, res)
    assert res.total_assignments == graph.lower_bound == 12


def test_result_reports_summary_figures():
    graph = DemandGraph.from_batched(30, np.ones((8, 2), bool))
    res = anondecomp.decompose(graph, 3, "polytope")
    text = res.summary()
    for needle in ("polytope", "R (assignments)", "lower bound", "R / lower bound", "distinct assignments"):
        assert needle in text
    assert res.ratio == res.total_assignments / graph.lower_bound


def test_unknown_method_and_bad_C():
    graph = DemandGraph.from_batched(3, np.ones((4, 1), bool))
    with pytest.raises(anondecomp.InvalidInputError, match="unknown method 'simplex'"):
        decompose(graph, 1, "simplex")
    with pytest.raises(anondecomp.InvalidInputError, match="C must be an integer >= 1"):
        decompose(graph, 0)


def test_u_batched_check():
    active = np.array([[1, 0], [1, 0], [1, 1], [0, 1]], bool)
    assert anondecomp.check_u_batched(active, 2).size == 0
    assert len(anondecomp.check_u_batched(active, 3)) == 1  # 4 users cannot give both arms 3
    assert list(anondecomp.check_u_batched(np.array([[1, 0], [1, 0], [1, 0]], bool), 1)) == [1]
