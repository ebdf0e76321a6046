"""Supports wider than the demand and users with zero demand (issue 22, item 2): such users play an arm of
their support in every assignment and pad its groups; only ceil(w_ij) must be covered. Every method, the
lower bounds and the exact verifier honour the split (paper 000, Section 3.2: a decomposition places every
user in every assignment; an arm is informative with at least C+1 users on it, whoever they are)."""

import json
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings

import anondecomp
from anondecomp import (
    DemandGraph,
    InfeasibleError,
    InvalidInputError,
    MethodNotApplicableError,
    decompose,
    lp_lower_bound,
    scale,
    verify,
)
from anondecomp.compact import verify_compact
from anondecomp.io import graph_from_document, read_graph
from anondecomp.lower_bound import UserTypes
from anondecomp.methods.timeshare import timeshare
from anondecomp.schemas import load_schema
from anondecomp.validation import prepare
from tests.solvers.strategies import supported_graphs

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
METHODS = anondecomp.METHODS  # auto, greedy, block, polytope, randomized, slack, optimal


def padding_graph() -> tuple[DemandGraph, int]:
    """C = 2. Arm 'a' has two users with demand and one user with zero demand (u2, support {b, a}): only u2
    makes a's groups reach C+1 = 3. Arm 'b' comes first, so a user parked on its first support arm (what a
    method ignoring padding does) sits on 'b' and leaves 'a' with two users: never informative."""
    w = np.array([[0, 3], [0, 3], [0, 0], [3, 0], [3, 0], [3, 0]], float)  # arms (b, a)
    support = w > 0
    support[2] = True
    return DemandGraph.from_weights(w, ["u0", "u1", "u2", "u3", "u4", "u5"], ["b", "a"], support=support), 2


def run(graph, C, method, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", anondecomp.AnonDecompWarning)
        return decompose(graph, C, method=method, **kw)


def assert_valid(graph, C, res, **kw):
    report = verify(graph, C, res, **kw)
    assert report.valid, report.summary()
    assert res.total_assignments >= graph.lower_bound


# -- the graph ---------------------------------------------------------------------------------------------


def test_support_defaults_to_the_demand_and_keeps_every_message():
    g = DemandGraph.from_weights([[1, 0], [0.5, 2]])
    assert g.support.tolist() == [[True, False], [True, True]] and not g.explicit_support
    with pytest.raises(InvalidInputError, match=r"^user 'u1' has no demand \(all weights 0\)$"):
        DemandGraph.from_weights([[1, 0], [0, 0]])
    with pytest.raises(InvalidInputError, match=r"^user 'u1' has an empty active set$"):
        DemandGraph.from_batched(4, [[1, 0], [0, 0]])


def test_a_user_with_zero_demand_is_valid_with_a_support():
    g = DemandGraph.from_weights([[1, 0], [0, 0]], support=[[1, 0], [0, 1]])
    assert g.required.tolist() == [[1, 0], [0, 0]] and g.explicit_support
    assert g.support.dtype == bool and g.support.tolist() == [[True, False], [False, True]]
    assert g.lower_bound == 1 and g.arm_degrees.tolist() == [1, 1]
    b = DemandGraph.from_batched(6, [[1, 1], [0, 0], [0, 1]], support=[[1, 1], [1, 0], [0, 1]])
    assert b.required.tolist() == [[3, 3], [0, 0], [0, 6]] and b.demand == 6.0
    assert b.support[1].tolist() == [True, False]


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: DemandGraph.from_weights([[1, 2], [0, 0]], support=[[1, 0], [1, 1]]),
            r"^user 'u0' has positive weight on arm 'a1', which is not in its support$",
        ),
        (
            lambda: DemandGraph.from_weights([[1, 0], [0, 0]], ["x", "y"], support=[[1, 0], [0, 0]]),
            r"^user 'y' has an empty support \(no arm it may play\)$",
        ),
        (lambda: DemandGraph.from_weights([[1, 0]], support=[[1, 0, 0]]), "support must have the shape"),
        (lambda: DemandGraph.from_weights([[1, 0]], support=[[2, 0]]), "support must hold booleans"),
        (
            lambda: DemandGraph.from_batched(4, [[1, 1], [0, 0]], support=[[1, 0], [1, 1]]),
            r"^user 'u0' has in its active set arm 'a1', which is not in its support$",
        ),
        (
            lambda: DemandGraph.from_batched(4, [[1, 1], [0, 0]], support=[[1, 1], [0, 0]]),
            r"^user 'u1' has an empty support",
        ),
    ],
)
def test_bad_supports_name_the_user_and_arm(make, message):
    with pytest.raises(InvalidInputError, match=message):
        make()


def test_thin_arms_count_the_users_that_may_pad():
    graph, C = padding_graph()
    assert graph.thin_arms(C).size == 0  # 'a': u0, u1 with demand and u2 padding
    assert graph.thin_arms(3).tolist() == [1]  # C+1 = 4: 'b' has u2 to u5, 'a' only three users
    support = graph.support.copy()
    support[2, 1] = False  # u2 may only play 'b'
    no_pad = DemandGraph.from_weights(graph.weights, graph.users, graph.arms, support=support)
    assert no_pad.thin_arms(C).tolist() == [1]  # without u2, 'a' can never be observed
    with pytest.raises(InfeasibleError, match="'a'"):
        decompose(no_pad, C, method="greedy")


# -- every method, every output through the exact verifier ----------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_a_zero_demand_user_completes_the_group_in_every_method(method):
    graph, C = padding_graph()
    res = run(graph, C, method)
    assert_valid(graph, C, res)
    with_u2 = (res.assignments[:, :3] == 1).all(axis=1)
    assert res.multiplicities[with_u2].sum() >= 3  # u0 and u1 learn on 'a' only beside u2
    # the same schedule with u2 parked on its first support arm instead is invalid: u2 was needed
    parked = res.assignments.copy()
    parked[:, 2] = 0
    assert not verify(graph, C, parked, res.multiplicities).valid


def test_the_padding_example_meets_the_lower_bound_where_it_should():
    graph, C = padding_graph()
    for method in ("polytope", "block", "slack", "optimal", "auto"):
        assert run(graph, C, method).total_assignments == graph.lower_bound == 3, method
    assert lp_lower_bound(graph, C).value == pytest.approx(3.0)


@pytest.mark.parametrize("method", METHODS)
def test_every_user_is_placed_on_its_support_in_every_assignment(method):
    graph, C = padding_graph()
    res = run(graph, C, method)
    assert graph.support[np.arange(graph.n_users)[None, :], res.assignments].all()


@SETTINGS
@given(supported_graphs())
def test_every_method_is_valid_on_random_supports(case):
    graph, C = case
    totals = {}
    for method in METHODS:
        try:
            res = run(graph, C, method, seed=1)
        except MethodNotApplicableError:
            assert method == "polytope"  # the one method with a precondition (Corollary 1): a clear refusal
            continue
        assert_valid(graph, C, res)
        totals[method] = res.total_assignments
    found = timeshare(prepare(graph, C, False), budget=5.0)
    if found is not None:
        assert verify(graph, C, found[0], found[1]).valid
    assert totals["optimal"] <= min(totals.values())
    # the certified LP bound must stay below what the methods achieve (a bound ignoring padding would not)
    assert lp_lower_bound(graph, C).value <= totals["optimal"] + 1e-6


@SETTINGS
@given(supported_graphs(max_C=2))
def test_best_effort_with_supports(case):
    graph, C = case
    C += 1  # some arms may now be thin: best effort covers the rest
    for method in ("auto", "greedy", "block", "slack", "randomized"):
        res = run(graph, C, method, best_effort=True, seed=0)
        report = verify(graph, C, res, best_effort=True)
        assert report.valid, (method, report.summary())


@pytest.mark.parametrize("method", METHODS)
def test_no_user_with_demand_gives_the_empty_decomposition(method):
    graph = DemandGraph.from_weights(np.zeros((3, 2)), support=np.ones((3, 2), bool))
    res = run(graph, 1, method)
    assert res.total_assignments == 0 and res.ratio == 1.0 and verify(graph, 1, res).valid


def test_a_batched_graph_with_stopped_users():
    """Algorithm 1's situation: users that stopped keep playing their recommendation and pad its groups."""
    active = np.zeros((9, 3), bool)
    active[:2, 0] = active[3:6, 1] = active[6:, 2] = True  # arm 0 wanted by two users only
    support = active.copy()
    support[2, 0] = True  # the stopped user recommended arm 0
    graph = DemandGraph.from_batched(12, active, support=support)
    for method in METHODS:
        res = run(graph, 2, method)
        assert_valid(graph, 2, res)
    assert run(graph, 2, "auto").total_assignments == 12


# -- lower bounds -----------------------------------------------------------------------------------------


def test_user_types_keep_supports_apart():
    req = np.array([[1, 0], [1, 0], [0, 0], [0, 0]])
    support = np.array([[1, 0], [1, 1], [1, 0], [0, 1]], bool)
    types = UserTypes.from_required(req, support)
    # u0 and u1 differ on arm 1, which nobody wants: one type; u2 pads arm 0; u3 may only play an unwanted arm
    assert types.n_types == 3 and types.counts.tolist() == [1, 1, 2]
    assert sorted(zip(types.ti.tolist(), types.aj.tolist(), strict=True)) == [(1, 0), (2, 0)]
    assert types.n_covering == 1
    plain = UserTypes.from_required(req[:2])
    same = UserTypes.from_required(req[:2], req[:2] > 0)
    assert plain.required.tolist() == same.required.tolist() and plain.ti.tolist() == same.ti.tolist()


def test_beta_lets_padding_users_fill_a_face():
    """beta of Lemma 3 with u2 padding 'a': the face {a, b} holds u0, u1, u2 on 'a' and u3..u5 on 'b', so
    w_hat itself is dominated (beta = 1); without u2, 'a' can never open and beta = 0."""
    graph, C = padding_graph()
    res = anondecomp.beta(graph, C)
    assert res.exact and res.lower == pytest.approx(1.0)
    alone = DemandGraph.from_weights(graph.weights[[0, 1, 3, 4, 5]])
    assert anondecomp.beta(alone, C).lower == pytest.approx(0.0)


def test_the_aggregate_relaxation_counts_padding_users():
    pytest.importorskip("cvxpy")
    from anondecomp.relaxation import aggregate_relaxation

    graph, C = padding_graph()
    model = aggregate_relaxation(graph, C)
    assert model.solve() == pytest.approx(3.0)
    assert [2, 1] in model.pairs.tolist()  # u2's padding pair on 'a'


# -- the sharded path --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shards", [1, 3])
def test_sharded_decomposition_of_a_general_graph_with_supports(tmp_path, shards):
    rng = np.random.default_rng(5)
    N, K, C = 90, 4, 2
    w = rng.integers(1, 4, (N, K)) * (rng.random((N, K)) < 0.4).astype(float)
    w[:30] = 0.0  # a third of the users have zero demand
    support = (w > 0) | (rng.random((N, K)) < 0.3)
    support[~support.any(axis=1), 0] = True
    graph = DemandGraph.from_weights(w, support=support)
    data = scale.from_graph(graph)
    assert data.demand is None and data.explicit_support
    res = scale.decompose_sharded(data, C, f"{tmp_path}/out/", n_shards=shards)
    report = verify_compact(graph, C, tmp_path / "out")
    assert report.valid, report.summary()
    assert res.total_assignments >= graph.lower_bound


def test_a_batched_graph_with_a_wider_support_is_not_sharded_as_batched():
    active = np.eye(3, dtype=bool).repeat(3, axis=0)
    graph = DemandGraph.from_batched(5, active, support=active | np.eye(3, dtype=bool)[[1] * 9])
    data = scale.from_graph(graph)
    assert data.demand is None and np.array_equal(data.support, graph.support)


def test_a_shard_without_demand_still_places_its_users():
    w = np.zeros((4, 1))
    rows, R, _ = scale.solve_shard((w, np.ones((4, 1), bool)), None, 0, 1)
    assert R == 0 and rows[0].tolist() == [0, 1, 2, 3] and rows[1].tolist() == [0] * 4


# -- formats -----------------------------------------------------------------------------------------------


def test_a_zero_weight_link_is_support_without_demand():
    doc = {
        "C": 2,
        "nodes": [{"id": n, "bipartite": 0} for n in ("u0", "u1", "u2")]
        + [{"id": "b", "bipartite": 1}, {"id": "a", "bipartite": 1}],
        "links": [
            {"source": "u0", "target": "a", "weight": 3},
            {"source": "u1", "target": "a", "weight": 3},
            {"source": "u2", "target": "a", "weight": 0},
            {"source": "u2", "target": "b", "weight": 0},
        ],
    }
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, load_schema("graph"))
    graph, C = graph_from_document(doc)
    assert graph.required.tolist() == [[0, 3], [0, 3], [0, 0]]
    assert graph.support.tolist() == [[False, True], [False, True], [True, True]]
    res = decompose(graph, C)
    assert_valid(graph, C, res)
    bad = {**doc, "links": doc["links"] + [{"source": "u0", "target": "b", "weight": -1}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, load_schema("graph"))


def test_old_node_link_files_keep_their_meaning():
    doc = {
        "nodes": [{"id": "u", "bipartite": 0}, {"id": "v", "bipartite": 0}, {"id": "a", "bipartite": 1}],
        "links": [{"source": "u", "target": "a", "weight": 1}],
    }
    with pytest.raises(InvalidInputError, match=r"user 'v' has no demand \(all weights 0\)"):
        graph_from_document(doc)
    with_zero = {**doc, "links": doc["links"] + [{"source": "u", "target": "a", "weight": 0}]}
    with pytest.raises(InvalidInputError, match="duplicate edge"):
        graph_from_document(with_zero)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_zero_weight_row_is_support_without_demand(tmp_path, suffix):
    rows = {"user": ["u0", "u1", "u2", "u2"], "arm": ["a", "a", "a", "b"], "weight": [3.0, 3.0, 0.0, 0.0]}
    path = tmp_path / f"g{suffix}"
    if suffix == ".csv":
        path.write_text("user,arm,weight\n" + "".join(f"{u},{a},{w}\n" for u, a, w in zip(*rows.values(), strict=True)))
    else:
        pq.write_table(pa.table(rows), path)
    graph, _ = read_graph(path)
    assert graph.required.tolist() == [[3, 0], [3, 0], [0, 0]]
    assert graph.support[2].tolist() == [True, True] and graph.explicit_support
    assert_valid(graph, 2, decompose(graph, 2))


def test_a_streamed_parquet_edge_table_with_zero_weights_is_read_whole(tmp_path):
    rows = {"user": [0, 1, 2, 2], "arm": ["a", "a", "a", "b"], "weight": [3, 3, 0, 0]}
    pq.write_table(pa.table(rows), tmp_path / "g.parquet")
    data, _ = scale.read_support(tmp_path / "g.parquet")
    assert isinstance(data, DemandGraph) and data.explicit_support
    assert json.dumps(data.required.tolist()) == "[[3, 0], [3, 0], [0, 0]]"
