"""The sparse graph: dense and sparse input agree, nothing dense is built on the large paths, and the methods
whose models are dense refuse large graphs in one line naming their limit."""

import numpy as np
import pytest
from scipy.sparse import coo_array, csr_array

import anondecomp
from anondecomp import DemandGraph, MethodNotApplicableError, verify
from anondecomp.lower_bound import MET_BY
from anondecomp.validation import DENSE_CELLS
from anondecomp.verify import coverage, edge_coverage


def random_weights(seed: int, N: int = 30, K: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = np.where(rng.random((N, K)) < 0.4, rng.integers(1, 4, (N, K)) * rng.choice([0.5, 1.0], (N, K)), 0.0)
    w[np.arange(N), rng.integers(0, K, N)] += 1.0
    return w


@pytest.mark.parametrize("seed", range(5))
def test_dense_and_sparse_input_give_the_same_graph(seed):
    w = random_weights(seed)
    support = (w > 0) | (np.random.default_rng(seed).random(w.shape) < 0.1)
    dense = DemandGraph.from_weights(w, support=support)
    sparse = DemandGraph.from_weights(csr_array(w), support=coo_array(support))
    for name in ("edge_users", "edge_arms", "edge_weights", "edge_required", "indptr"):
        assert np.array_equal(getattr(dense, name), getattr(sparse, name)), name
    assert np.array_equal(sparse.toarray(), w) and np.array_equal(sparse.support, support)
    assert np.array_equal(sparse.tocsr("required").toarray(), np.ceil(w))
    assert sparse.lower_bound == int(np.ceil(w).sum(axis=1).max())
    assert np.array_equal(sparse.arm_degrees, support.sum(axis=0))
    batched = DemandGraph.from_batched(7, csr_array(w > 0))
    assert np.array_equal(batched.required, DemandGraph.from_batched(7, w > 0).required)


def test_the_graph_is_immutable_and_its_arrays_read_only():
    g = DemandGraph.from_weights([[1.0, 2.0], [3.0, 0.0]])
    with pytest.raises(AttributeError):
        g.users = ("a", "b")
    with pytest.raises(ValueError):
        g.edge_required[0] = 5
    with pytest.raises(ValueError):
        g.weights[0, 0] = 5.0


@pytest.mark.parametrize("seed", range(4))
def test_edge_coverage_agrees_with_dense_coverage(seed):
    w = random_weights(seed)
    g = DemandGraph.from_weights(w)
    rng = np.random.default_rng(seed)
    a = np.array([[rng.choice(np.flatnonzero(w[i] > 0)) for i in range(g.n_users)] for _ in range(12)])
    a[0, 0] = int(np.flatnonzero(w[0] == 0)[0]) if (w[0] == 0).any() else a[0, 0]
    m = rng.integers(1, 5, len(a))
    got, off = edge_coverage(g, a, m, 2)
    assert np.array_equal(got, coverage(a, m, 2, g.n_arms)[g.edge_users, g.edge_arms])
    assert [tuple(x) for x in off] == ([(0, 0)] if (w[0] == 0).any() else [])


def sparse_catalogue(n_users: int = 20_000, n_items: int = 5_000, per_item: int = 5) -> DemandGraph:
    """Users in groups of ``per_item`` sharing two items each: 4 x 10^4 edges, 10^8 users x items cells."""
    users = np.repeat(np.arange(n_users), 2)
    items = (users // per_item * 2 + np.tile([0, 1], n_users)) % n_items
    return DemandGraph.from_weights(csr_array((np.ones(2 * n_users), (users, items)), shape=(n_users, n_items)))


def test_optimal_refuses_users_x_arms_above_the_limit_and_auto_decomposes_it():
    g = sparse_catalogue()
    assert g.n_users * g.n_arms > DENSE_CELLS and g.nnz == 40_000
    with pytest.raises(MethodNotApplicableError, match="method 'optimal'.*DENSE_CELLS") as err:
        anondecomp.decompose(g, 4, method="optimal")
    assert "\n" not in str(err.value)
    # polytope's condition is read on the edges: refused for what it is, whatever the size
    with pytest.raises(MethodNotApplicableError, match="polytope needs every arm's column sum"):
        anondecomp.decompose(g, 4, method="polytope")
    res = anondecomp.decompose(g, 4)
    assert res.method == "sessions" and verify(g, 4, res).valid and res.total_assignments == g.lower_bound
    bound = anondecomp.lp_lower_bound(g, 4)  # no seed: sessions, the fast seed past DENSE_CELLS, meet the bound
    assert (bound.value, bound.how, bound.converged) == (g.lower_bound, MET_BY.format("sessions"), True)
    assert not g._dense  # no weights, support, required


def test_randomized_runs_on_the_edges_of_a_graph_above_dense_cells_and_a_seed_fixes_it():
    g = sparse_catalogue()
    res = anondecomp.decompose(g, 4, method="randomized", seed=3)
    assert res.method == "randomized" and verify(g, 4, res).valid and res.total_assignments >= g.lower_bound
    again = anondecomp.decompose(g, 4, method="randomized", rng=np.random.default_rng(3))
    assert np.array_equal(again.assignments, res.assignments)
    assert np.array_equal(again.multiplicities, res.multiplicities)
    other = anondecomp.decompose(g, 4, method="randomized", seed=4)
    assert verify(g, 4, other).valid and not np.array_equal(other.assignments, res.assignments)
    assert not g._dense


def one_arm_each(n_users: int, n_arms: int, demand: float, extra_arms: int = 0) -> DemandGraph:
    """User i wants arm i % n_arms only (``demand`` samples); with ``extra_arms``, its support also holds one of
    that many further arms, which nobody wants."""
    users = np.arange(n_users)
    active = csr_array((np.ones(n_users, bool), (users, users % n_arms)), shape=(n_users, n_arms + extra_arms))
    if not extra_arms:
        return DemandGraph.from_batched(demand, active)
    support = active + csr_array((np.ones(n_users, bool), (users, n_arms + users % extra_arms)), shape=active.shape)
    return DemandGraph.from_batched(demand, active, support=support)


def test_randomized_refuses_before_drawing_when_its_draws_would_not_fit():
    g = one_arm_each(200_000, 10, 3_000)  # every draw is informative: 3000 draws x 2 x 10^5 users
    assert g.n_users * g.n_arms < DENSE_CELLS
    with pytest.raises(
        MethodNotApplicableError,
        match="method 'randomized' would build 3000 assignments "
        "\\(the draws it expects to need, at least\\) x 200000 users = 6e\\+08 cells.*OUTPUT_CELLS",
    ) as err:
        anondecomp.decompose(g, 4, method="randomized")
    assert "\n" not in str(err.value)
    small = one_arm_each(2_000, 10, 3_000)  # the same with 2,000 users: 6 x 10^6 cells, drawn
    res = anondecomp.decompose(small, 4, method="randomized")
    assert verify(small, 4, res).valid and res.total_assignments == 3_000


def test_randomized_stops_drawing_at_the_output_limit(monkeypatch):
    from anondecomp import validation

    # u1 learns on arm 0 only when u2 sits there too, 1 draw in 900; the bound before drawing says 30
    w = np.zeros((3, 30))
    w[1, 0] = 1.0
    support = np.zeros((3, 30), bool)
    support[:, 0] = True
    support[1:, 1:] = True
    g = DemandGraph.from_weights(w, support=support)
    full = anondecomp.decompose(g, 2, method="randomized", seed=0)
    assert verify(g, 2, full).valid and full.total_assignments > 60
    monkeypatch.setattr(validation, "OUTPUT_CELLS", 60 * 3)
    with pytest.raises(MethodNotApplicableError, match="method 'randomized' would build .* x 3 users.*OUTPUT_CELLS"):
        anondecomp.decompose(g, 2, method="randomized", seed=0)


def test_block_and_polytope_refuse_by_their_own_point_only():
    g = one_arm_each(100_000, 600, 1)  # both take every arm in one face: 10^5 users x 600 arms
    for method, what in (("block", "its largest block's point"), ("polytope", "its point w/D on the wanted arms")):
        with pytest.raises(
            MethodNotApplicableError,
            match=f"method '{method}': {what}, 100000 users x 600 arms = 6e\\+07 cells, is above DENSE_CELLS",
        ) as err:
            anondecomp.decompose(g, 4, method=method)
        assert "\n" not in str(err.value)
    assert not g._dense
    # above DENSE_CELLS users x arms, but 10 arms wanted: the point is 20,000 users x 10 arms
    big = one_arm_each(20_000, 10, 3, extra_arms=2_990)
    assert big.n_users * big.n_arms > DENSE_CELLS
    for method in ("block", "polytope"):
        res = anondecomp.decompose(big, 4, method=method)
        assert verify(big, 4, res).valid and res.total_assignments == big.lower_bound == 3
    assert not big._dense


def test_greedy_refuses_an_output_above_its_limit_and_works_sparse_below():
    g = sparse_catalogue(50_000, 20_000)  # 20,000 wanted items x 50,000 users: 10^9 cells of output
    with pytest.raises(MethodNotApplicableError, match="OUTPUT_CELLS"):
        anondecomp.decompose(g, 4, method="greedy")
    small = sparse_catalogue(2_000, 400)
    res = anondecomp.decompose(small, 4, method="greedy")
    assert verify(small, 4, res).valid and res.total_assignments == 400 * small.lower_bound


def test_the_platform_limits_run_on_the_edges_of_a_graph_above_dense_cells():
    """Re-seating, an exposure cap and a capacity never build a users x arms array (docs/platform.md)."""
    g = sparse_catalogue(12_000)
    assert g.n_users * g.n_arms > DENSE_CELLS
    res = anondecomp.decompose(g, 4, capacity=10, max_surplus_exposure=2)
    report = verify(g, 4, res)
    assert report.valid and report.capacity == "10" and report.max_surplus_exposure == 2
    assert res.total_assignments >= res.lower_bound >= g.lower_bound
    assert not g._dense  # no dense view was built on the way
