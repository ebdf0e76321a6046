"""The sparse graph: dense and sparse input agree, nothing dense is built on the large paths, and the methods
whose models are dense refuse large graphs in one line naming their limit."""

import numpy as np
import pytest
from scipy.sparse import coo_array, csr_array

import anondecomp
from anondecomp import DemandGraph, MethodNotApplicableError, verify
from anondecomp.lower_bound import TOO_LARGE
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


def test_dense_methods_refuse_a_graph_above_the_limit_and_auto_decomposes_it():
    g = sparse_catalogue()
    assert g.n_users * g.n_arms > DENSE_CELLS and g.nnz == 40_000
    for method in ("block", "polytope", "randomized", "optimal"):
        with pytest.raises(MethodNotApplicableError, match=f"method '{method}'.*DENSE_CELLS"):
            anondecomp.decompose(g, 4, method=method)
    res = anondecomp.decompose(g, 4)
    assert res.method == "sessions" and verify(g, 4, res).valid and res.total_assignments == g.lower_bound
    bound = anondecomp.lp_lower_bound(g, 4)   # no seed: the LP is not built, the trivial bound stands
    assert bound.how == TOO_LARGE and bound.value == g.lower_bound and not bound.converged


def test_greedy_refuses_an_output_above_its_limit_and_works_sparse_below():
    g = sparse_catalogue(50_000, 20_000)   # 20,000 wanted items x 50,000 users: 10^9 cells of output
    with pytest.raises(MethodNotApplicableError, match="OUTPUT_CELLS"):
        anondecomp.decompose(g, 4, method="greedy")
    small = sparse_catalogue(2_000, 400)
    res = anondecomp.decompose(small, 4, method="greedy")
    assert verify(small, 4, res).valid and res.total_assignments == 400 * small.lower_bound
