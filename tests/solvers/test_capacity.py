"""Capacity (anondecomp.capacity): at most M_j users on arm j in one assignment, whatever the method; its
refusals, its check by verify, the ``capacity`` column of a graph table, and the command line round trip. Every
decomposition made here goes through the exact verifier and a count of every (assignment, arm)."""

from __future__ import annotations

import contextlib
import io
import json
import signal
from dataclasses import replace

import numpy as np
import pytest

import anondecomp
from anondecomp import AnonDecompError, Decomposition, DemandGraph, InvalidInputError, InvalidTypeError
from anondecomp.bench.real import powerlaw_log
from anondecomp.capacity import capacity_lower_bound, check_capacity_fits
from anondecomp.columnar import read_capacity
from anondecomp.exposure import exposures, user_demand
from anondecomp.io import limits_from_header, read_decomposition_document
from tests.solvers.strategies import random_weights, supported_graph

# name -> (graph, C, [capacities]): one for every arm and one per arm, each seating every user
CASES = {
    "weights": (
        DemandGraph.from_weights(random_weights(0, 10, 3, 1, values=(0, 1, 2, 3))),
        1,
        [4, np.array([4, 5, 6])],
    ),
    "support": (supported_graph(1, 9, 3, 2), 2, [4, np.array([5, 3, 4])]),
    "batched": (
        DemandGraph.from_batched(7, (np.random.default_rng(3).random((30, 4)) < 0.6) | (np.arange(4) == 0)),
        3,
        [9, np.array([12, 9, 8, 10])],
    ),
    "full": (DemandGraph.from_batched(5, np.ones((8, 2), bool)), 1, [np.array([2, 6]), 5]),
    "log": (powerlaw_log(40, 8, 1, 2), 1, [10, np.arange(10, 10 + 8)]),
}
POLYTOPE = {"batched", "full", "log"}


def _options(method: str) -> dict:
    return {"time_limit": 5.0} if method == "optimal" else {}


def per_arm(graph: DemandGraph, capacity) -> np.ndarray:
    return np.broadcast_to(np.asarray(capacity, dtype=np.int64), (graph.n_arms,))


def loads(d: Decomposition) -> np.ndarray:
    """(assignments, arms): the users on every arm of every assignment."""
    return np.stack([np.bincount(row, minlength=d.graph.n_arms) for row in d.assignments.astype(np.int64)])


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message.strip(), message
    return message


# -- every method honours a capacity -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", anondecomp.METHODS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_method_honours_the_capacity(method, name):
    graph, C, capacities = CASES[name]
    if method == "polytope" and name not in POLYTOPE:
        with pytest.raises(anondecomp.MethodNotApplicableError):
            anondecomp.decompose(graph, C, method, capacity=capacities[0])
        return
    for capacity in capacities:
        cap = per_arm(graph, capacity)
        d = anondecomp.decompose(graph, C, method, capacity=capacity, **_options(method))
        assert (loads(d) <= cap).all(), f"{method}: an arm above its capacity"
        report = anondecomp.verify(graph, C, d)  # reads the capacity from info
        assert report.valid and report.n_over_capacity == 0 and report.capacity
        assert anondecomp.verify(graph, C, d, capacity=capacity).valid
        bound = capacity_lower_bound(graph, cap)
        assert d.lower_bound == bound == d.info["lower_bound"]
        assert d.total_assignments >= bound >= graph.lower_bound
        assert np.array_equal(d.info["capacity"], cap)
        assert d.info["exposure"]["exposure_total"] == exposures(d).sum()  # re-seated, its figures true


def test_the_capacity_bound_by_hand_and_attained():
    # six users want 2 samples of arm a and may also play z; at most 3 users on an arm: arm a serves at most 3
    # samples per assignment, 12 wanted -> R >= 4 (the demand alone gives 2)
    w = np.c_[np.full(6, 2.0), np.zeros(6)]
    g = DemandGraph.from_weights(w, arms=["a", "z"], support=np.ones((6, 2), bool))
    assert g.lower_bound == 2 and capacity_lower_bound(g, np.array([3, 3])) == 4
    assert capacity_lower_bound(g, np.array([6, 6])) == 2
    for method in ("auto", "greedy", "block", "polytope", "slack", "sessions", "optimal"):
        d = anondecomp.decompose(g, 1, method, capacity=3, **_options(method))
        assert d.total_assignments == 4 and (loads(d) <= 3).all() and anondecomp.verify(g, 1, d).valid
    assert "with capacity" in d.summary()
    assert "capacity             3 users per arm and assignment" in d.summary()


def test_a_capacity_above_every_group_changes_nothing_of_the_bound():
    graph, C, _ = CASES["full"]
    d = anondecomp.decompose(graph, C, capacity=10**12)
    assert d.lower_bound == graph.lower_bound and anondecomp.verify(graph, C, d).valid


def test_random_graphs_with_full_support():
    """Every user may play every arm: any capacity that seats everyone is honoured by every method."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        C = int(rng.integers(1, 3))
        N, K = int(rng.integers(2 * C + 3, 14)), int(rng.integers(2, 4))
        w = random_weights(seed, N, K, C)
        g = DemandGraph.from_weights(w, support=np.ones((N, K), bool))
        cap = rng.integers(max(C + 1, -(-N // K)), N + 1, K)
        for method in ("auto", "greedy", "block", "sessions", "randomized"):
            d = anondecomp.decompose(g, C, method, capacity=cap)
            assert (loads(d) <= cap).all() and anondecomp.verify(g, C, d).valid
            assert d.total_assignments >= capacity_lower_bound(g, cap)


def test_capacity_and_a_surplus_cap_together():
    graph, C, _ = CASES["weights"]
    loose = anondecomp.decompose(graph, C, capacity=5)
    S = loose.info["exposure"]["surplus_max"]
    d = anondecomp.decompose(graph, C, capacity=5, max_surplus_exposure=S)
    report = anondecomp.verify(graph, C, d)
    assert report.valid and report.max_surplus_exposure == S and report.capacity == "5"
    assert (exposures(d) - user_demand(graph, C) <= S).all() and (loads(d) <= 5).all()


# -- refusals ------------------------------------------------------------------------------------------------------


def test_a_capacity_below_C_plus_1_on_a_wanted_arm_is_refused_naming_it():
    g = DemandGraph.from_batched(4, np.ones((8, 2), bool), arms=["a", "b"])
    with pytest.raises(InvalidInputError) as exc:
        anondecomp.decompose(g, 2, capacity=[5, 2])
    assert one_line(exc) == "capacity of arm 'b' is 2, below C+1 = 3: it could never be observed"
    with pytest.raises(InvalidInputError, match="^capacity of arm 'a' is 1, below C\\+1 = 2"):
        anondecomp.decompose(g, 1, "greedy", capacity=1)


def test_users_that_cannot_all_be_seated_are_refused():
    g = DemandGraph.from_batched(2, np.ones((5, 1), bool), arms=["x"])  # 5 users whose only arm holds 3
    for capacity in (3, 4, [3]):
        with pytest.raises(InvalidInputError) as exc:
            anondecomp.decompose(g, 1, capacity=capacity)
        assert one_line(exc) == (
            "the arms' capacities cannot seat all 5 users at once (each user plays an arm of its support in every "
            "assignment)"
        )
    d = anondecomp.decompose(g, 1, capacity=5)
    assert d.total_assignments == 2 and anondecomp.verify(g, 1, d).valid
    check_capacity_fits(g, 1, np.array([5]))  # no exception
    # two arms of 4 and 3 seats for 8 users: refused; 4 and 4: seated
    g2 = DemandGraph.from_batched(4, np.ones((8, 2), bool))
    with pytest.raises(InvalidInputError, match="cannot seat all 8 users"):
        anondecomp.decompose(g2, 1, capacity=[4, 3])
    assert anondecomp.verify(g2, 1, anondecomp.decompose(g2, 1, capacity=[4, 4])).valid


def test_a_capacity_with_absence_is_refused():
    graph, C, _ = CASES["full"]
    with pytest.raises(InvalidInputError) as exc:
        anondecomp.decompose(graph, C, capacity=5, absence=0.2)
    assert one_line(exc) == "capacity cannot be combined with an absence above 0"
    assert anondecomp.verify(graph, C, anondecomp.decompose(graph, C, capacity=5, absence=0)).valid


@pytest.mark.parametrize(
    "bad, kind",
    [
        (0, InvalidInputError),
        (-1, InvalidInputError),
        (1.5, InvalidTypeError),
        ("3", InvalidTypeError),
        (np.nan, InvalidTypeError),
        (np.array([3, 3, 3]), InvalidInputError),
        ([3], InvalidInputError),
        (np.array([3.0, 4.0]), InvalidTypeError),
        (np.array([3, 0]), InvalidInputError),
        (np.ones((2, 2), int), InvalidInputError),
    ],
)
def test_a_bad_capacity_is_refused_naming_it(bad, kind):
    graph, C, _ = CASES["full"]
    with pytest.raises(kind) as exc:
        anondecomp.decompose(graph, C, capacity=bad)
    assert one_line(exc).startswith("capacity ")


def test_an_arm_full_of_users_that_can_sit_nowhere_else_is_refused_in_one_line():
    """Users 0 and 1 play only arm a, of capacity 2: user 2 can never join them. Refused in one line (after the
    passes of anondecomp.capacity.MAX_PASSES: the instance is infeasible, which is not detected up front)."""
    g = DemandGraph.from_weights([[3, 0], [0, 0], [2, 0]], arms=["a", "b"], support=[[1, 0], [1, 0], [1, 1]])
    with pytest.raises(AnonDecompError) as exc:
        anondecomp.decompose(g, 1, "greedy", capacity=[2, 5])
    assert "capacity" in one_line(exc)


def test_a_small_capacity_on_an_arm_without_demand_is_accepted():
    g = DemandGraph.from_weights([[2, 0], [2, 0], [1, 0]], arms=["a", "z"], support=np.ones((3, 2), bool))
    d = anondecomp.decompose(g, 1, capacity=[5, 1])
    assert (loads(d)[:, 1] <= 1).all() and anondecomp.verify(g, 1, d).valid


def test_slack_with_a_capacity_on_a_feasible_instance():
    active = np.array([[1, 1, 0], [1, 1, 1], [1, 1, 0], [1, 1, 0], [1, 1, 1], [1, 1, 0], [1, 0, 0]], bool)
    g = DemandGraph.from_batched(1, active, arms=["a", "b", "c"])
    assert anondecomp.verify(g, 1, anondecomp.decompose(g, 1, "block", capacity=3)).valid  # feasible
    d = anondecomp.decompose(g, 1, "slack", capacity=3)  # MethodNotApplicableError: still short after 64 passes
    assert anondecomp.verify(g, 1, d).valid


def test_sessions_refuses_a_capacity_below_C_plus_1():
    from anondecomp.methods.sessions import sessions_decomposition

    def give_up(signum, frame):
        raise TimeoutError("sessions_decomposition(capacity=[1, 1]) at C = 1 did not return within 2 s")

    g = DemandGraph.from_batched(4, np.ones((8, 2), bool))
    previous = signal.signal(signal.SIGALRM, give_up)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        with pytest.raises(InvalidInputError, match="capacity"):
            sessions_decomposition(g, 1, capacity=np.array([1, 1]))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- verify: (assignment, arm) above a capacity --------------------------------------------------------------------


def test_verify_flags_every_assignment_and_arm_above_its_capacity():
    g = DemandGraph.from_batched(2, np.ones((6, 2), bool), arms=["a", "b"])
    # block 0 (x2): 4 users on a, 2 on b; block 1: 2 on a, 4 on b
    d = Decomposition(g, 1, "hand", np.array([[0, 0, 0, 0, 1, 1], [1, 1, 1, 1, 0, 0]]), np.array([2, 1]))
    assert anondecomp.verify(g, 1, d).valid  # no capacity: valid
    report = anondecomp.verify(g, 1, d, capacity=3)
    assert not report.valid and report.n_short == 0
    assert report.n_over_capacity == 2 and report.over_capacity == [(0, "a", 4, 3), (1, "b", 4, 3)]
    assert "assignment 0: arm 'a' holds 4 users, above its capacity 3" in report.summary()
    assert "capacity 3: 2 (assignment, arm) above it" in report.summary()
    per = anondecomp.verify(g, 1, d, capacity=[4, 2])  # per arm: block 1 holds 4 on b
    assert per.over_capacity == [(1, "b", 4, 2)] and per.capacity == "per arm (2 to 4)"
    assert anondecomp.verify(g, 1, d, capacity=4).valid
    # the capacity read from info; an explicit one wins
    limited = replace(d, info={**d.info, "capacity": np.array([3, 5])})
    assert anondecomp.verify(g, 1, limited).over_capacity == [(0, "a", 4, 3)]
    assert anondecomp.verify(g, 1, limited, capacity=4).valid
    with pytest.raises(InvalidInputError, match="^capacity must hold one capacity per arm"):
        anondecomp.verify(g, 1, d, capacity=[3, 3, 3])


# -- the capacity column of a graph table, and the JSON header ------------------------------------------------------


def _table(tmp_path, text: str, name: str = "g.csv"):
    path = tmp_path / name
    path.write_text(text)
    graph, _ = anondecomp.read_graph(path)
    return path, graph


def test_read_capacity_from_a_csv_table(tmp_path):
    rows = "".join(f"u{i},{arm},{1 + i % 2},{cap}\n" for i in range(6) for arm, cap in (("b", 4), ("a", 3)))
    path, graph = _table(tmp_path, "user,arm,weight,capacity\n" + rows)
    got = read_capacity(path, graph)
    assert got.dtype == np.int64
    assert dict(zip(graph.arms, got.tolist(), strict=True)) == {"a": 3, "b": 4}
    plain, graph2 = _table(tmp_path, "user,arm,weight\nu,a,1\nv,a,1\n", "plain.csv")
    assert read_capacity(plain, graph2) is None
    doc = tmp_path / "g.json"
    doc.write_text('{"demand": 2, "active_sets": {"u": ["a"], "v": ["a"]}}')
    assert read_capacity(doc, anondecomp.read_graph(doc)[0]) is None


def test_read_capacity_from_a_parquet_table(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "g.parquet"
    table = {"user": ["u", "v", "w", "u"], "arm": ["a", "a", "a", "b"], "weight": [1.0, 2, 1, 1], "capacity": [3] * 4}
    pq.write_table(pa.table(table), path)
    graph, _ = anondecomp.read_graph(path)
    assert read_capacity(path, graph).tolist() == [3, 3]


@pytest.mark.parametrize(
    "cells, message",
    [
        (("3", "3", "4"), r"g\.csv: arm 'a' has capacity 3 and 4; give one value per arm"),
        (("3", "3", "2.5"), r"g\.csv: capacity of arm 'a' \(row 3\) is 2\.5; it must be a whole number of users >= 1"),
        (("3", "0", "3"), r"g\.csv: capacity of arm 'a' \(row 2\) is 0; it must be a whole number"),
        (("3", "x", "3"), r"g\.csv: column 'capacity' must hold numbers"),
    ],
)
def test_read_capacity_refuses_bad_values_in_one_line(tmp_path, cells, message):
    rows = "".join(f"{u},a,{w},{c}\n" for u, w, c in zip("uvw", (2, 3, 1), cells, strict=True))
    path = tmp_path / "g.csv"
    path.write_text("user,arm,weight,capacity\n" + rows)
    graph, _ = anondecomp.read_graph(path)
    with pytest.raises(InvalidInputError, match=message) as exc:
        read_capacity(path, graph)
    one_line(exc)


def test_limits_from_a_header():
    g = DemandGraph.from_batched(2, np.ones((4, 2), bool), arms=["a", "b"])
    got = limits_from_header({"capacity": {"b": 4, "a": 3}, "max_surplus_exposure": 2}, g, "d.json")
    assert got["capacity"].tolist() == [3, 4] and got["max_surplus_exposure"] == 2
    assert limits_from_header({"capacity": 3}, g, "d.json")["capacity"].tolist() == [3, 3]
    assert limits_from_header({}, g, "d.json") == {}
    for header, message in (
        ({"capacity": {"a": 3}}, r"^d\.json: capacity does not give arm 'b'"),
        ({"capacity": {"a": 3, "b": 3, "z": 3}}, r"^d\.json: capacity names unknown arm 'z'"),
        ({"capacity": "x"}, r"^d\.json: capacity must"),
        ({"capacity": 0}, r"^d\.json: capacity must be an integer >= 1"),
        ({"max_surplus_exposure": -1}, r"^d\.json: max_surplus_exposure must be an integer >= 0"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            limits_from_header(header, g, "d.json")


# -- the command line ----------------------------------------------------------------------------------------------


def _cli(*argv: str) -> tuple[int, str, str]:
    from anonbandits.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def _graph_csv(tmp_path, capacity_column: bool = False):
    path = tmp_path / ("gc.csv" if capacity_column else "g.csv")
    caps = {"a": 6, "b": 5, "c": 7}
    head = "user,arm,weight" + (",capacity" if capacity_column else "")
    rows = [
        f"u{i},{arm},{1 + (i + k) % 3}" + (f",{caps[arm]}" if capacity_column else "")
        for i in range(12)
        for k, arm in enumerate("abc")
    ]
    path.write_text("\n".join([head, *rows]) + "\n")
    return path


def test_cli_decompose_with_limits_then_verify(tmp_path):
    graph_path, out = _graph_csv(tmp_path), tmp_path / "out.json"
    graph, _ = anondecomp.read_graph(graph_path)
    code, _, err = _cli("decompose", graph_path, "--C", "2", "--capacity", "5", "-o", out)
    assert code == 0, err
    S = json.loads(out.read_text())["exposure"]["surplus_max"]  # the cap the plain run meets
    code, _, err = _cli("decompose", graph_path, "--C", "2", "--capacity", "5", "--max-surplus-exposure", S, "-o", out)
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["capacity"] == 5 and doc["max_surplus_exposure"] == S and doc["exposure"]["surplus_max"] <= S
    a, m, C, header = read_decomposition_document(out, graph)
    assert C == 2 and (np.stack([np.bincount(r, minlength=3) for r in a.astype(int)]) <= 5).all()
    code, stdout, err = _cli("verify", graph_path, out)
    assert code == 0, err
    assert "capacity 5: 0 (assignment, arm) above it" in stdout
    assert f"max surplus exposure {S}: 0 user(s) above it" in stdout
    # a tampered header: a smaller capacity than the groups hold
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps({**doc, "capacity": 3}))
    code, _, err = _cli("verify", graph_path, tampered)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "group(s) above capacity" in lines[0]
    # a cap below what the groups release
    if doc["exposure"]["surplus_max"] > 0:
        capped = tmp_path / "capped.json"
        capped.write_text(json.dumps({**doc, "max_surplus_exposure": doc["exposure"]["surplus_max"] - 1}))
        code, _, err = _cli("verify", graph_path, capped)
        assert code == 1 and "user(s) above the surplus exposure cap" in err


def test_cli_capacity_column_per_arm(tmp_path):
    graph_path, out = _graph_csv(tmp_path, capacity_column=True), tmp_path / "out.json"
    code, _, err = _cli("decompose", graph_path, "--C", "2", "-o", out)
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["capacity"] == {"a": 6, "b": 5, "c": 7}
    assert _cli("verify", graph_path, out)[0] == 0
    doc["capacity"]["b"] = 3
    out.write_text(json.dumps(doc))
    assert _cli("verify", graph_path, out)[0] == 1
    # --capacity wins over the column
    code, _, err = _cli("decompose", graph_path, "--C", "2", "--capacity", "4", "-o", out)
    assert code == 0, err
    assert json.loads(out.read_text())["capacity"] == 4


def test_cli_refuses_a_compact_output_with_limits(tmp_path):
    graph_path = _graph_csv(tmp_path)
    for flag, value in (("--capacity", "5"), ("--max-surplus-exposure", "40")):
        code, _, err = _cli("decompose", graph_path, "--C", "2", flag, value, "-o", tmp_path / "x.parquet")
        assert code == 2
        assert err.strip().endswith(
            f"a decomposition made with {flag} is written (and verified) as JSON; give -o OUT.json"
        )
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.parquet").exists()
