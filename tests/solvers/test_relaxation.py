"""The aggregate relaxation (cvxpy): a lower bound between the trivial bound and the certified LP bound."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anondecomp import DemandGraph, InfeasibleError, InvalidInputError, decompose, lp_lower_bound, verify
from anondecomp.relaxation import aggregate_relaxation
from tests.solvers.strategies import batched_graphs, weighted_graphs

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.one_of(batched_graphs(), weighted_graphs()))
def test_sits_between_the_trivial_bound_and_the_certified_bound(case):
    graph, C = case
    value = aggregate_relaxation(graph, C).solve()
    assert value >= graph.lower_bound - 1e-6
    certified = lp_lower_bound(graph, C)
    assert value <= certified.value + 1e-6
    for method in ("block", "optimal"):
        res = decompose(graph, C, method)
        assert verify(graph, C, res).valid
        assert value <= res.total_assignments + 1e-6


def test_counts_open_rounds_where_the_trivial_bound_does_not():
    """User 4 wants arm 0 only, 10 times; each of those rounds needs C+1 = 4 users on arm 0, so users 0-3 spend
    30 rounds there in all besides their 5 + 5 samples: on average 12.5 rounds each, above the trivial 10."""
    active = np.array([[1, 1]] * 4 + [[1, 0]], bool)
    graph = DemandGraph.from_batched(10, active)
    assert graph.lower_bound == 10
    assert aggregate_relaxation(graph, 3).solve() == pytest.approx(12.5)
    res = decompose(graph, 3, "optimal")
    assert verify(graph, 3, res).valid and res.total_assignments >= 13


def test_side_constraints_and_other_solvers():
    active = np.repeat(np.eye(3, dtype=bool), 4, axis=0)
    model = aggregate_relaxation(DemandGraph.from_batched(5, active), C=3)
    assert model.solve() == pytest.approx(5)
    assert model.solve(solver="CLARABEL") == pytest.approx(5, rel=1e-5)
    assert model.with_constraints(cp.sum(model.y) <= model.R).solve() == pytest.approx(15)
    assert model.pairs.shape == (12, 2) and model.user_rows.shape == (12, 12) and model.arm_rows.shape == (3, 12)
    with pytest.raises(InvalidInputError, match="infeasible"):
        model.with_constraints(model.y[0] <= 2).solve()


def test_thin_arms_are_refused_or_left_out():
    active = np.array([[1, 1], [1, 0], [1, 0], [1, 0], [1, 0]], bool)
    graph = DemandGraph.from_batched(4, active)
    with pytest.raises(InfeasibleError):
        aggregate_relaxation(graph, 3)
    assert aggregate_relaxation(graph, 3, best_effort=True).solve() == pytest.approx(4)


def test_is_built_from_the_edges_alone(monkeypatch):
    """The model's pairs are the graph's edges with demand, or on a wanted arm (padding): no dense array."""
    from anondecomp.validation import Prepared

    w = np.array([[2, 0, 1], [1, 0, 0], [1, 1, 0], [0, 3, 1]], float)
    support = w > 0
    support[1, 2] = support[0, 1] = True  # users 0 and 1 may pad arms they do not want
    graph = DemandGraph.from_weights(w, support=support)

    def refuse(self):
        raise AssertionError("dense users x arms array built")

    monkeypatch.setattr(Prepared, "required", property(refuse))
    for name in ("weights", "required", "support"):
        monkeypatch.setattr(DemandGraph, name, property(refuse))
    model = aggregate_relaxation(graph, 1)
    assert model.pairs.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1], [3, 1], [3, 2]]
    assert round(model.solve(), 6) >= graph.lower_bound
