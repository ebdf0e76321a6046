"""The checked boundary of the solver layer (issue 31, items 1 and 2): one table of rules, applied to every
public function and constructor; no blanket ``except Exception``; value objects frozen, arrays read-only."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import anondecomp
from anondecomp.validation import RULES

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = [
    "decompose",
    "verify",
    "coverage",
    "lp_lower_bound",
    "membership",
    "check_membership",
    "caratheodory",
    "check_u_batched",
    "method_info",
    "beta",
    "read_graph",
    "read_decomposition",
    "write_decomposition",
]
CONSTRUCTORS = [
    anondecomp.DemandGraph.__init__,
    anondecomp.DemandGraph.from_weights,
    anondecomp.DemandGraph.from_batched,
]
# parameters read as given (their checks are the function's own: an option bag, a choice made by name)
FREE = {"options", "vertices"}


@pytest.mark.parametrize(
    "fn",
    [getattr(anondecomp, n) for n in FUNCTIONS] + CONSTRUCTORS,
    ids=FUNCTIONS + ["DemandGraph", "from_weights", "from_batched"],
)
def test_every_public_function_checks_every_parameter_from_the_table(fn):
    assert hasattr(fn, "__wrapped__"), f"{fn.__qualname__} is not wrapped by anondecomp.validation.checked"
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.name not in ("self", "cls") and p.kind is not p.VAR_KEYWORD
    ]
    missing = [p.name for p in params if p.name not in RULES and p.name not in FREE]
    assert not missing, f"{fn.__qualname__}: no rule for {missing}"


def test_no_blanket_except_in_the_solver_layer():
    files = [
        *sorted((ROOT / "solvers" / "anondecomp").rglob("*.py")),
        *(ROOT / "src" / "anonbandits" / "cli" / f"{n}.py" for n in ("decompose", "verify", "beta")),
    ]
    found = [
        f"{f.relative_to(ROOT)}:{k}"
        for f in files
        for k, line in enumerate(f.read_text().splitlines(), 1)
        if re.search(r"except\s*(Exception\b|:)", line)
    ]
    assert not found, f"blanket except outside the command line's top level: {found}"


def test_results_are_frozen_and_their_arrays_read_only():
    g = anondecomp.DemandGraph.from_batched(6, np.ones((4, 2), bool))
    res = anondecomp.decompose(g, 1)
    for arr in (res.assignments, res.multiplicities, res.uncovered, g.edge_weights, g.edge_required, g.indptr):
        assert not arr.flags.writeable
    with pytest.raises(AttributeError):
        res.C = 2
    with pytest.raises(AttributeError):
        g.users = ("x",)
    car = anondecomp.caratheodory(np.full((4, 2), 0.5), 1)
    assert not car.weights.flags.writeable and not car.vertices.flags.writeable
    bound = anondecomp.lp_lower_bound(g, 1)
    assert not bound.faces.flags.writeable


def test_the_caller_array_keeps_its_flags():
    g = anondecomp.DemandGraph.from_batched(6, np.ones((4, 2), bool))
    a, m = np.zeros((1, 4), np.int64), np.array([6])
    anondecomp.Decomposition(g, 1, "by hand", a, m)
    assert a.flags.writeable and m.flags.writeable


def test_type_refusals_are_type_errors_too():
    with pytest.raises(TypeError, match="method must be a string"):
        anondecomp.method_info(["auto"])
    with pytest.raises(anondecomp.InvalidInputError, match=r"C must be an integer >= 1, got '2'"):
        anondecomp.decompose(anondecomp.DemandGraph.from_batched(6, np.ones((4, 2), bool)), "2")


def test_a_call_that_does_not_fit_the_signature_is_refused_by_name():
    with pytest.raises(anondecomp.InvalidInputError, match=r"coverage\(\).*unexpected keyword"):
        anondecomp.coverage(np.zeros((1, 4), int), np.array([1]), 1, 2, colour="red")


@pytest.mark.parametrize("view", ["weights", "required", "support", "toarray", "normalized"])
def test_dense_views_of_a_large_sparse_graph_are_refused_before_allocation(view, monkeypatch):
    """10^5 users x 10^4 arms with 2 edges each: every dense view would take 1-8 GB; each is refused in one
    line naming the view, and built under ``allowing_large`` (shown under a lowered limit)."""
    from scipy import sparse

    from anondecomp.validation import allowing_large

    def dense(graph):
        value = getattr(graph, view)
        return value() if callable(value) else value

    n, k = 10**5, 10**4
    rows = np.repeat(np.arange(n), 2)
    w = sparse.csr_matrix((np.ones(rows.size), (rows, (rows * 7 + np.tile([0, 1], n)) % k)), shape=(n, k))
    with pytest.raises(anondecomp.InvalidInputError, match=r"DemandGraph\.\w+: its dense view, 100000 users") as err:
        dense(anondecomp.DemandGraph.from_weights(w))
    assert "\n" not in str(err.value)
    monkeypatch.setattr("anondecomp.graph.DENSE_CELLS", 3)
    small = anondecomp.DemandGraph.from_weights([[1.0, 2.0], [0.0, 3.0]])
    with pytest.raises(anondecomp.InvalidInputError, match="dense view"):
        dense(small)
    with allowing_large():
        built = dense(small)
        assert (built[0] if view == "normalized" else built).shape == (2, 2)
