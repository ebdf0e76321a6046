"""Absent users (the "platform" issue): robust decompositions, the exact tails behind them, verification, and
re-planning. Every decomposition made here goes through the exact verifier; the tails are checked against
sums of fractions written out from the definition."""

from __future__ import annotations

import itertools
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anondecomp
from anondecomp import DemandGraph, InvalidInputError
from anondecomp.absence import group_meets, presence, simulate_received
from anondecomp.io import absence_from_header, read_decomposition_document
from tests.solvers.strategies import batched_graphs, supported_graphs, weighted_graphs

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def tail(absences, C) -> Fraction:
    """P(at least C+1 present) from the definition: the sum over every set of present users."""
    a = [Fraction(float(x)) for x in absences]
    total = Fraction(0)
    for present in itertools.product((0, 1), repeat=len(a)):
        if sum(present) > C:
            total += math.prod((1 - x) if p else x for x, p in zip(a, present, strict=True))
    return total


def binomial_tail(n: int, C: int, A: float) -> Fraction:
    a = Fraction(A)
    return sum((math.comb(n, k) * (1 - a) ** k * a ** (n - k) for k in range(C + 1, n + 1)), Fraction(0))


def groups(result):
    """(assignment, arm, users) of every group of a decomposition."""
    for r, row in enumerate(np.asarray(result.assignments)):
        for j in np.unique(row):
            yield r, int(j), np.flatnonzero(row == j)


# -- A = 0 is today's behaviour, bit for bit -----------------------------------------------------------------------

GRAPHS = [
    (DemandGraph.from_batched(10, np.array([[1, 1], [1, 0], [0, 1], [1, 1], [1, 1], [1, 1]], bool)), 1),
    (DemandGraph.from_weights(np.array([[3, 0, 2], [1, 2, 0], [0, 4, 1], [2, 2, 2], [5, 0, 1], [0, 1, 3.5]])), 1),
    (DemandGraph.from_batched(7, (np.random.default_rng(3).random((30, 4)) < 0.6) | (np.arange(4) == 0)), 3),
]


@pytest.mark.parametrize("method", anondecomp.METHODS)
@pytest.mark.parametrize("case", range(len(GRAPHS)))
def test_absence_zero_is_todays_decomposition_bit_for_bit(method, case):
    graph, C = GRAPHS[case]
    kw = {"time_limit": 5.0} if method == "optimal" else {}
    try:
        today = anondecomp.decompose(graph, C, method, **kw)
    except anondecomp.MethodNotApplicableError as exc:  # refused alike, in the same words
        with pytest.raises(anondecomp.MethodNotApplicableError, match=re.escape(str(exc))):
            anondecomp.decompose(graph, C, method, absence=0.0, **kw)
        return
    for zero in (0.0, 0, np.zeros(graph.n_users)):
        again = anondecomp.decompose(graph, C, method, absence=zero, **kw)
        assert np.array_equal(again.assignments, today.assignments)
        assert np.array_equal(again.multiplicities, today.multiplicities)
        assert again.method == today.method and again.info.keys() == today.info.keys()
    assert anondecomp.verify(graph, C, today, absence=0.0) == anondecomp.verify(graph, C, today)


# -- exact tails ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "C, A, Q", [(1, 0.1, 0.95), (3, 0.3, 0.9), (5, 0.05, 0.99), (2, 0.5, 0.5), (1, 0.5, 0.25), (50, 0.1, 0.95)]
)
def test_robust_group_size_is_the_smallest_size_meeting_the_exact_binomial_tail(C, A, Q):
    n = anondecomp.robust_group_size(C, A, Q)
    assert binomial_tail(n, C, A) >= Fraction(Q)
    assert n == C + 1 or binomial_tail(n - 1, C, A) < Fraction(Q)


def test_robust_group_size_decides_an_exact_tie_exactly():
    # two users absent with probability 1/2 keep both present with probability exactly 1/4
    assert anondecomp.robust_group_size(1, 0.5, 0.25) == 2
    assert anondecomp.robust_group_size(1, 0.5, float(np.nextafter(0.25, 1))) == 3
    assert anondecomp.robust_group_size(7, 0.0, 0.999) == 8


@SETTINGS
@given(
    st.lists(st.sampled_from([0.0, 0.01, 0.1, 0.25, 0.5, 0.7, 0.9, 1 / 3]), min_size=1, max_size=9),
    st.integers(1, 4),
    st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.25]),
)
def test_group_meets_is_the_exact_poisson_binomial_tail(absences, C, Q):
    a = np.sort(np.array(absences))
    got = group_meets(a, np.array([0]), np.array([len(a)]), C, Q)[0]
    assert got == (len(a) > C and tail(a, C) >= Fraction(Q))


def test_group_meets_falls_back_to_integers_on_a_tie():
    # P(both present) = 1/4 exactly: the float recursion cannot tell, the integer sum can
    half = np.array([0.5, 0.5])
    assert group_meets(half, np.array([0]), np.array([2]), 1, 0.25)[0]
    assert not group_meets(half, np.array([0]), np.array([2]), 1, float(np.nextafter(0.25, 1)))[0]


# -- robust decompositions ------------------------------------------------------------------------------------------


def assert_robust(graph, C, result, A, Q):
    """Every group that gives samples meets Q by the exact tail (or holds its at-risk arm's whole support), the
    report is valid, and sizes reach the robust size where the arm allows."""
    report = anondecomp.verify(graph, C, result, best_effort=bool(len(result.uncovered)))
    assert report.valid, report.summary()
    a = np.broadcast_to(np.asarray(A, dtype=float), (graph.n_users,))
    deg = graph.arm_degrees
    at_risk = set(result.info.get("at_risk_arms", ()))
    for _, j, users in groups(result):
        if len(users) <= C:
            continue
        whole = len(users) == deg[j]
        meets = tail(a[users], C) >= Fraction(Q) if len(users) <= 12 else None
        if graph.arms[j] in at_risk:
            assert meets is None or not meets or whole
        if meets is not None and whole and graph.arms[j] not in at_risk:
            assert meets  # a whole support that is not at risk is robust
    return report


@SETTINGS
@given(st.one_of(batched_graphs(max_users=10), weighted_graphs(max_users=10), supported_graphs(max_users=10)))
def test_robust_decompositions_are_valid_and_their_counted_groups_meet_q(case):
    graph, C = case
    for A, Q in ((0.2, 0.9), (0.05, 0.95)):
        res = anondecomp.decompose(graph, C, absence=A, confidence=Q)
        assert res.info["absence"] == A and res.info["confidence"] == Q
        assert res.info["robust_size"] == anondecomp.robust_group_size(C, A, Q)
        assert_robust(graph, C, res, A, Q)
        pres = presence(graph, C, A, Q)
        counted, sizes = pres.counted(np.asarray(res.assignments, dtype=np.int64))
        threshold = np.tile(pres.threshold, len(res.assignments))
        assert (sizes[counted] >= threshold[counted]).all()  # counted groups reach the robust size or the support


@SETTINGS
@given(st.one_of(weighted_graphs(max_users=9), supported_graphs(max_users=9)), st.data())
def test_per_user_absence_decompositions_are_valid_and_exact(case, data):
    graph, C = case
    A = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 0.02, 0.1, 0.3]), min_size=graph.n_users, max_size=graph.n_users))
    )
    A[0] = 0.05  # someone is absent (all zeros would be the decomposition without absence)
    res = anondecomp.decompose(graph, C, absence=A, confidence=0.9)
    report = assert_robust(graph, C, res, A, 0.9)
    pres = presence(graph, C, A, 0.9)
    for r, j, users in groups(res):
        if len(users) > C and len(users) < graph.arm_degrees[j]:
            block = np.asarray(res.assignments[r : r + 1], dtype=np.int64)
            counted, _ = pres.counted(block)
            assert counted[j] == (tail(A[users], C) >= Fraction(0.9))
    assert report.absence.startswith("per user")


def test_at_risk_arms_are_counted_and_hold_their_whole_support():
    # arm z: 5 users; with C = 3 and A = 0.1 a robust group needs 6 (P(>= 4 of 5 present) = 0.92 < 0.95)
    active = np.zeros((12, 3), bool)
    active[:, 0] = True
    active[6:, 1] = True
    active[:5, 2] = True
    graph = DemandGraph.from_batched(6, active, arms=["a", "b", "z"])
    res = anondecomp.decompose(graph, 3, absence=0.1)
    assert res.info["robust_size"] == 6 and res.info["at_risk_arms"] == ["z"]
    assert "arms at risk         1" in res.summary()
    assert_robust(graph, 3, res, 0.1, 0.95)
    z_groups = [users for _, j, users in groups(res) if j == 2 and len(users) > 3]
    assert z_groups and all(len(users) == 5 for users in z_groups)
    report = anondecomp.verify(graph, 3, res)
    assert report.at_risk == ["z"] and report.valid


def test_verify_refuses_a_plan_whose_group_misses_q():
    graph = DemandGraph.from_batched(4, np.ones((12, 4), bool))
    res = anondecomp.decompose(graph, 2, absence=0.2, confidence=0.9)
    assert anondecomp.verify(graph, 2, res).valid
    # today's decomposition: groups of C+1 users, which keep C+1 present users with probability 0.8^3 only
    today = anondecomp.decompose(graph, 2)
    report = anondecomp.verify(graph, 2, today, absence=0.2, confidence=0.9)
    assert not report.valid and report.n_fragile > 0 and anondecomp.verify(graph, 2, today).valid
    # the robust one with one user moved out of a group that gives samples: that group misses Q
    a = np.array(res.assignments)
    r, j, users = next((r, j, u) for r, j, u in groups(res) if len(u) >= res.info["robust_size"])
    a[r, users[: len(users) - res.info["robust_size"] + 1]] = (j + 1) % 4  # one user short of the robust size
    broken = anondecomp.verify(graph, 2, a, res.multiplicities, absence=0.2, confidence=0.9)
    assert not broken.valid and broken.n_short > 0


@pytest.mark.slow
def test_monte_carlo_groups_keep_c_plus_1_present_users_at_rate_q():
    rng = np.random.default_rng(7)
    active = rng.random((120, 5)) < 0.5
    active[np.arange(120), np.arange(120) % 5] = True
    graph = DemandGraph.from_batched(20, active)
    C, A, Q = 4, 0.15, 0.9
    res = anondecomp.decompose(graph, C, absence=A, confidence=Q)
    assert anondecomp.verify(graph, C, res).valid
    pres = presence(graph, C, A, Q)
    rows = np.asarray(res.assignments, dtype=np.int64)
    counted, _ = pres.counted(rows)
    released = trials = 0
    for r in range(len(rows)):
        here = rng.random((2000, graph.n_users)) >= A
        for j in np.flatnonzero(counted[r * graph.n_arms : (r + 1) * graph.n_arms]):
            on = rows[r] == j
            released += int(((here[:, on]).sum(axis=1) > C).sum())
            trials += 2000
    rate = released / trials
    assert rate >= Q - 4 * math.sqrt(Q * (1 - Q) / trials), rate
    # and the schedule meets most demands when run once (today's leaves many short)
    dem = graph.edge_required > 0
    got = simulate_received(graph, res.assignments, res.multiplicities, C, A, rng)
    base = anondecomp.decompose(graph, C)
    before = simulate_received(graph, base.assignments, base.multiplicities, C, A, rng)
    assert np.mean(got[dem] >= graph.edge_required[dem]) > np.mean(before[dem] >= graph.edge_required[dem])


# -- files ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["d.json", "d.parquet"])
def test_written_decompositions_carry_the_absence_and_verify_reads_it(tmp_path, name):
    from anondecomp.compact import read_header, verify_compact

    graph = DemandGraph.from_batched(4, np.ones((12, 4), bool))
    res = anondecomp.decompose(graph, 2, absence=0.2, confidence=0.9)
    path = tmp_path / name
    anondecomp.write_decomposition(res, path)
    if name.endswith(".json"):
        doc = json.loads(path.read_text())
        assert doc["absence"] == 0.2 and doc["confidence"] == 0.9 and doc["robust_size"] == 5
        a, m, C, header = read_decomposition_document(path, graph)
        robust = absence_from_header(header, graph, str(path))
        assert anondecomp.verify(graph, C, a, m, **robust).valid
    else:
        robust = absence_from_header(read_header(path), graph, str(path))
        assert robust == {"absence": 0.2, "confidence": 0.9}
        assert verify_compact(graph, 2, path, **robust).valid
        today = tmp_path / "today.parquet"
        anondecomp.write_decomposition(anondecomp.decompose(graph, 2), today)
        assert not verify_compact(graph, 2, today, **robust).valid


def test_per_user_absence_round_trips_through_json(tmp_path):
    graph = DemandGraph.from_batched(4, np.ones((10, 2), bool))
    A = np.linspace(0, 0.3, 10)
    res = anondecomp.decompose(graph, 2, absence=A)
    anondecomp.write_decomposition(res, tmp_path / "d.json")
    a, m, C, header = read_decomposition_document(tmp_path / "d.json", graph)
    robust = absence_from_header(header, graph, "d.json")
    assert np.array_equal(robust["absence"], A)
    assert anondecomp.verify(graph, C, a, m, **robust).valid
    header["absence"].pop("u3")
    with pytest.raises(InvalidInputError, match="d.json: absence does not give user 'u3'"):
        absence_from_header(header, graph, "d.json")


def test_graph_tables_give_one_absence_per_user_and_received_tables_counts(tmp_path):
    from anondecomp.columnar import read_absence, read_received

    path = tmp_path / "g.csv"
    path.write_text("user,arm,weight,absence\nu,a,2,0.1\nu,b,1,0.1\nv,a,3,0\nw,a,1,0.5\n")
    graph, _ = anondecomp.read_graph(path)
    assert read_absence(path, graph).tolist() == [0.1, 0.0, 0.5]
    path.write_text("user,arm,weight,absence\nu,a,2,0.1\nu,b,1,0.2\nv,a,3,0\nw,a,1,0.5\n")
    with pytest.raises(InvalidInputError, match="user 'u' has absence 0.1 and 0.2"):
        read_absence(path, graph)
    received = tmp_path / "r.csv"
    received.write_text("user,arm,count\nv,a,2\nu,b,5\n")
    counts = read_received(received, graph)
    assert counts.toarray().tolist() == [[0, 5], [2, 0], [0, 0]]
    received.write_text("user,arm,count\nv,a,1.5\n")
    with pytest.raises(InvalidInputError, match=r"count of user 'v' on arm 'a' \(row 1\) is 1.5"):
        read_received(received, graph)


# -- re-planning ---------------------------------------------------------------------------------------------------


def test_replan_of_nothing_received_with_an_empty_plan_is_a_cold_decomposition():
    for graph, C in GRAPHS:
        empty = anondecomp.Decomposition(graph, C, "plan", np.empty((0, graph.n_users), int), np.empty(0, int))
        res = anondecomp.replan(graph, empty, np.zeros(graph.shape, dtype=np.uint8))
        assert res.total_assignments == anondecomp.decompose(graph, C).total_assignments
        assert anondecomp.verify(res.graph, C, res).valid
        robust = anondecomp.replan(graph, empty, sp.csr_array(graph.shape), absence=0.1)
        assert robust.total_assignments == anondecomp.decompose(graph, C, absence=0.1).total_assignments


@SETTINGS
@given(st.one_of(batched_graphs(max_users=10), weighted_graphs(max_users=10)), st.data())
def test_replan_covers_exactly_the_residual_and_is_never_longer_than_cold(case, data):
    graph, C = case
    A = data.draw(st.sampled_from([0.0, 0.1]))
    plan = anondecomp.decompose(graph, C, absence=A)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    done = data.draw(st.integers(0, len(plan.multiplicities)))  # the plan's first assignments have run
    got = simulate_received(graph, plan.assignments[:done], plan.multiplicities[:done], C, A, rng)
    received = sp.coo_array((got, (graph.edge_users, graph.edge_arms)), shape=graph.shape)
    left = anondecomp.Decomposition(
        graph, C, "plan", plan.assignments[done:], plan.multiplicities[done:], info=plan.info
    )
    res = anondecomp.replan(graph, left, received.astype(np.float32), compare_cold=True)
    assert np.array_equal(res.graph.edge_required, np.maximum(graph.edge_required - got, 0))
    assert res.graph.edge_users.tolist() == graph.edge_users.tolist() and res.graph.users == graph.users
    assert anondecomp.verify(res.graph, C, res).valid  # absence read from the result's info
    assert res.info.get("absence", 0) == plan.info.get("absence", 0)
    if res.graph.edge_required.any():
        cold = anondecomp.decompose(res.graph, C, absence=A)
        assert res.total_assignments <= cold.total_assignments
        assert res.info["cold_total"] == cold.total_assignments


def test_replan_keeps_the_plan_when_it_still_serves_the_residual():
    graph = DemandGraph.from_batched(10, np.ones((6, 2), bool))
    plan = anondecomp.decompose(graph, 1)
    res = anondecomp.replan(graph, plan, np.full((6, 2), 3))
    assert res.info["replan"] == "warm" and res.info["plan_kept"] == res.total_assignments == 4
    assert res.info["cold_total"] is None  # the warm start alone: never slower than a cold decomposition
    assert anondecomp.verify(res.graph, 1, res).valid
    full = anondecomp.replan(graph, plan, np.full((6, 2), 10))
    assert full.total_assignments == 0 and not full.graph.edge_required.any()


def test_replan_refuses_a_plan_of_other_users_and_bad_counts():
    graph = DemandGraph.from_batched(10, np.ones((6, 2), bool))
    other = DemandGraph.from_batched(10, np.ones((6, 2), bool), users=[f"x{i}" for i in range(6)])
    plan = anondecomp.decompose(other, 1)
    with pytest.raises(InvalidInputError, match="plan must decompose a graph of the same users and arms"):
        anondecomp.replan(graph, plan, np.zeros((6, 2)))
    good = anondecomp.decompose(graph, 1)
    with pytest.raises(InvalidInputError, match=r"received must hold whole non-negative counts, got 0.5 at \(1, 0\)"):
        anondecomp.replan(graph, good, sp.csr_array(np.array([[0, 0], [0.5, 0], [0, 0], [0, 0], [0, 0], [0, 0]])))


# -- the command line ----------------------------------------------------------------------------------------------


def _cli(*argv: str) -> int:
    import contextlib
    import io

    from anonbandits.cli.main import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


def test_cli_absence_zero_writes_todays_file_byte_for_byte(tmp_path):
    graph = tmp_path / "g.csv"
    graph.write_text("user,arm,weight\n" + "".join(f"u{i},{a},{1 + (i % 3)}\n" for i in range(12) for a in "abc"))
    for name, extra in (("today.json", ()), ("zero.json", ("--absence", "0")), ("today.parquet", ())):
        assert _cli("decompose", str(graph), "--C", "2", "-o", str(tmp_path / name), *extra) == 0
    assert (tmp_path / "today.json").read_bytes() == (tmp_path / "zero.json").read_bytes()
    assert _cli("decompose", str(graph), "--C", "2", "--absence", "0", "-o", str(tmp_path / "zero.parquet")) == 0
    assert (tmp_path / "today.parquet").read_bytes() == (tmp_path / "zero.parquet").read_bytes()


def test_cli_decompose_verify_replan_verify(tmp_path):
    """The round trip of docs/platform.md: a robust plan, half of it run, re-planned, checked on the residual."""
    graph_path = tmp_path / "g.csv"
    graph_path.write_text(
        "user,arm,weight,absence\n"
        + "".join(f"u{i},{a},{2 + (i % 3)},{0.05 * (i % 3)}\n" for i in range(14) for a in "ab")
    )
    plan_path, out, residual = tmp_path / "plan.json", tmp_path / "out.json", tmp_path / "left.csv"
    assert _cli("decompose", str(graph_path), "--C", "2", "-o", str(plan_path)) == 0  # absence from the column
    assert _cli("verify", str(graph_path), str(plan_path)) == 0
    graph, _ = anondecomp.read_graph(graph_path)
    a, m, C, header = read_decomposition_document(plan_path, graph)
    assert isinstance(header["absence"], dict) and header["absence"]["u2"] == 0.1
    robust = absence_from_header(header, graph, "plan.json")
    got = simulate_received(graph, a, m, C, robust["absence"], np.random.default_rng(1))
    received = tmp_path / "r.csv"
    received.write_text(
        "user,arm,count\n"
        + "".join(
            f"{graph.users[graph.edge_users[e]]},{graph.arms[graph.edge_arms[e]]},{got[e]}\n" for e in range(graph.nnz)
        )
    )
    empty = {**json.loads(plan_path.read_text()), "assignments": []}
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    args = ("replan", str(graph_path), str(tmp_path / "empty.json"), str(received), "-o", str(out))
    assert _cli(*args, "--residual", str(residual)) == 0
    assert _cli("verify", str(residual), str(out)) == 0
    left, _ = anondecomp.read_graph(residual)
    assert left.edge_required.tolist() == np.maximum(graph.edge_required - got, 0).tolist()
    assert json.loads(out.read_text())["absence"] == header["absence"]


def _max_of_negative_binomials(demands, absences) -> float:
    """E[max_i T_i] by the distribution of the maximum built one user at a time from negative binomial pmfs
    (scipy.stats.nbinom: failures before the d-th success), truncated where the mass left is below 1e-13."""
    from scipy.stats import nbinom

    top = 0
    cdf = np.ones(1)  # P(max <= t) for t = 0, 1, ...
    for d, a in zip(demands, absences, strict=True):
        if d == 0:
            continue
        t_max = int(nbinom.ppf(1 - 1e-13, d, 1 - a)) + d
        top = max(top, t_max)
        own = np.zeros(top + 1)
        own[d : t_max + 1] = np.cumsum(nbinom.pmf(np.arange(t_max - d + 1), d, 1 - a))
        own[t_max + 1 :] = 1.0
        cdf = np.concatenate([cdf, np.full(top + 1 - len(cdf), cdf[-1])])[: top + 1] * own
    return float(np.sum(1.0 - cdf))


@pytest.mark.parametrize(
    ("demands", "absences"),
    [([5], [0.2]), ([3, 3], [0.1, 0.1]), ([7, 2, 7, 1], [0.3, 0.05, 0.3, 0.5]), ([40] * 30 + [12], [0.1] * 31)],
)
def test_completion_bound_is_the_expected_largest_negative_binomial(demands, absences):
    from anondecomp.absence import completion_bound, user_demand_bound

    w = np.array(demands, dtype=np.float64)[:, None]
    g = DemandGraph.from_weights(w)
    bound = completion_bound(g, np.array(absences))
    assert bound == pytest.approx(_max_of_negative_binomials(demands, absences), abs=1e-7)
    assert bound >= user_demand_bound(g, np.array(absences)) - 1e-9
    if len(demands) == 1:  # one user: the negative binomial's mean d / (1 - A)
        assert bound == pytest.approx(demands[0] / (1 - absences[0]), abs=1e-9)


def test_completion_bound_is_above_a_simulated_schedule_of_every_block():
    """Every user on its arm in every block (C = 0: every present user is served): the blocks until all are
    served, simulated, average the completion bound."""
    from anondecomp.absence import completion_bound

    rng = np.random.default_rng(5)
    demands, A = np.array([6, 9, 9, 4]), 0.25
    present = rng.random((20_000, 80, len(demands))) >= A
    done = (np.cumsum(present, axis=1) >= demands).argmax(axis=1).max(axis=1) + 1
    g = DemandGraph.from_weights(demands.astype(np.float64)[:, None])
    assert done.mean() == pytest.approx(completion_bound(g, A), abs=4 * done.std() / np.sqrt(len(done)))


@pytest.mark.parametrize("seed", range(4))
def test_robust_auto_on_a_log_is_never_longer_than_the_session_calendar_or_its_own_route(seed):
    """Robust ``auto`` on a log weighs the session calendar against its own route (least-slack rounds, block):
    it is never longer than either, whether or not the improvement step runs."""
    from anondecomp.absence import robust_decomposition
    from anondecomp.bench.real import powerlaw_log
    from anondecomp.methods.auto import auto_decomposition

    graph, C, A = powerlaw_log(300, 60, 5, seed), 5, 0.1
    calendar = anondecomp.decompose(graph, C, absence=A, method="sessions")
    route = robust_decomposition(
        graph, C, lambda g, c: auto_decomposition(g, c, best_effort=True, improve=False), A, None, False
    )
    robust = anondecomp.decompose(graph, C, absence=A, improve=False)
    assert anondecomp.verify(graph, C, robust).valid
    assert robust.total_assignments <= min(calendar.total_assignments, route.total_assignments)


def test_completion_bound_takes_tails_below_the_smallest_float_and_absences_near_one(recwarn):
    from anondecomp.absence import completion_bound, user_demand_bound

    many = DemandGraph.from_batched(2000, np.ones((3, 1), bool))  # P(present in all first 2000) = 0.5^2000 = 0
    assert user_demand_bound(many, 0.5) < completion_bound(many, 0.5) < 1.02 * user_demand_bound(many, 0.5)
    one = DemandGraph.from_weights(np.array([[2.0]]))  # a tail of millions of blocks, summed in doubling steps
    assert completion_bound(one, 0.99999) == pytest.approx(2 / 1e-5, rel=1e-6)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("bad", [1.0, -0.1, float("nan"), "0.1", [0.1, 0.2]])
def test_the_bounds_refuse_a_bad_absence_in_one_line(bad):
    from anondecomp.absence import completion_bound, user_demand_bound

    g = DemandGraph.from_weights(np.ones((3, 1)))
    for bound in (completion_bound, user_demand_bound):
        with pytest.raises(InvalidInputError, match="^absence") as info:
            bound(g, bad)
        assert "\n" not in str(info.value)


def test_a_method_the_robust_size_rules_out_names_that_size():
    g = anondecomp.DemandGraph.from_batched(10, np.ones((8, 2), bool))  # column sums of w/D: 4 per arm
    assert anondecomp.decompose(g, 2, method="polytope").total_assignments == 10  # C+1 = 3
    with pytest.raises(anondecomp.MethodNotApplicableError, match=r"the robust group size 6, for C = 2\)$"):
        anondecomp.decompose(g, 2, method="polytope", absence=0.2)


@pytest.fixture
def counting_bound(monkeypatch):
    """benchmarks/absence_residual.py's bound on a residual decomposed with groups of the robust size."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from absence_residual import counting_bound

    return counting_bound


@pytest.mark.parametrize("seed", range(4))
def test_the_residual_counting_bound_is_below_every_robust_decomposition(seed, counting_bound):
    rng = np.random.default_rng(seed)
    w = (rng.random((90, 12)) < 0.15) * 1.0  # a thin residual on a wide support
    support = (rng.random((90, 12)) < 0.5) | (w > 0)
    g = DemandGraph(w, w.astype(np.int64), [f"u{i}" for i in range(90)], [f"a{j}" for j in range(12)], support=support)
    for method in ("auto", "sessions", "greedy"):
        d = anondecomp.decompose(g, 3, method=method, absence=0.1, best_effort=True)
        assert max(counting_bound(g, d.info["robust_size"], k)[1] for k in (5, 10, 20, 50)) <= d.total_assignments


def test_the_residual_counting_bound_is_met_where_thin_items_share_their_users(counting_bound):
    """10 items, each of the same 5 users (the robust size at C = 2, A = 0.1) and each wanted by one of them:
    every group holds all 5, so 10 assignments, where each user wants only 2 samples."""
    s, m = anondecomp.robust_group_size(2, 0.1, 0.95), 10
    w = np.zeros((s, m))
    w[np.arange(m) % s, np.arange(m)] = 1.0
    g = DemandGraph.from_weights(w, support=np.ones((s, m), bool))
    assert (s, g.lower_bound) == (5, 2)
    assert counting_bound(g, s, s) == (s * m, m)
    assert anondecomp.decompose(g, 2, method="sessions", absence=0.1).total_assignments == m
