"""``allow_large`` (``decompose --allow-large``) lifts the methods' size limits, issue 31 item 5.

Every limit of a method (``DENSE_CELLS`` for its dense model, ``OUTPUT_CELLS`` for its output) refuses in one
line naming the size, its value and the limit, and saying how to confirm it; ``allow_large=True`` confirms it and
the method runs, with the decomposition it gives without the limit. The limits are monkeypatched small, so the
graphs are small and the tests fast.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import anondecomp
from anonbandits.cli.main import main
from anondecomp import validation

GRAPH = anondecomp.DemandGraph.from_batched(4, np.ones((8, 3), bool))
LIMITED = ("optimal", "greedy", "polytope", "block", "randomized")
LIMIT_NAME = {
    "optimal": "DENSE_CELLS",
    "polytope": "DENSE_CELLS",
    "block": "DENSE_CELLS",
    "greedy": "OUTPUT_CELLS",
    "randomized": "OUTPUT_CELLS",
}


@pytest.fixture
def small_limits(monkeypatch):
    """Limits of 10 cells: every method's model or output of the 8 x 3 graph is above them."""
    monkeypatch.setattr(validation, "DENSE_CELLS", 10)
    monkeypatch.setattr(validation, "OUTPUT_CELLS", 10)


@pytest.mark.parametrize("method", LIMITED)
def test_limit_refuses_without_allow_large_and_runs_with_it(method, monkeypatch):
    expected = anondecomp.decompose(GRAPH, 1, method)  # within the real limits
    monkeypatch.setattr(validation, "DENSE_CELLS", 10)
    monkeypatch.setattr(validation, "OUTPUT_CELLS", 10)
    with pytest.raises(anondecomp.MethodNotApplicableError) as err:
        anondecomp.decompose(GRAPH, 1, method)
    message = str(err.value)
    assert "\n" not in message
    assert f"method {method!r}" in message and "cells" in message
    assert f"1e+01 (anondecomp.validation.{LIMIT_NAME[method]})" in message
    assert "pass allow_large=True (--allow-large)" in message
    res = anondecomp.decompose(GRAPH, 1, method, allow_large=True)
    assert anondecomp.verify(GRAPH, 1, res).valid
    assert np.array_equal(res.assignments, expected.assignments)  # the same decomposition, bit for bit
    assert np.array_equal(res.multiplicities, expected.multiplicities)
    assert not validation.large_allowed()  # the confirmation ends with the call


@pytest.mark.parametrize("method", anondecomp.METHODS)
def test_allow_large_is_accepted_silently_by_every_method(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = anondecomp.decompose(GRAPH, 1, method, allow_large=True)
    base = anondecomp.decompose(GRAPH, 1, method)
    assert np.array_equal(res.assignments, base.assignments)
    assert np.array_equal(res.multiplicities, base.multiplicities)


@pytest.mark.parametrize("value", ["yes", 1, None, np.nan])
def test_allow_large_must_be_a_bool(value):
    if value is None:  # an option given as None is as if not given (decompose's rule for every option)
        assert anondecomp.decompose(GRAPH, 1, "greedy", allow_large=value).total_assignments == 12
        return
    with pytest.raises(anondecomp.InvalidInputError, match="allow_large must be True or False"):
        anondecomp.decompose(GRAPH, 1, "greedy", allow_large=value)


def test_allow_large_false_keeps_the_limit(small_limits):
    with pytest.raises(anondecomp.MethodNotApplicableError, match="OUTPUT_CELLS"):
        anondecomp.decompose(GRAPH, 1, "greedy", allow_large=False)


def test_randomized_draws_past_the_output_limit_with_allow_large(monkeypatch):
    """The output limit also stops randomized's draws once they reach it (after its up-front estimate passed):
    with allow_large they go on to the cap."""
    expected = anondecomp.decompose(GRAPH, 1, "randomized", seed=3)
    fewest = anondecomp.methods.randomized.fewest_expected_draws(GRAPH, GRAPH.edge_required, 1)
    monkeypatch.setattr(validation, "OUTPUT_CELLS", int(np.ceil(fewest)) * GRAPH.n_users)  # estimate fits
    if expected.total_assignments * GRAPH.n_users > validation.OUTPUT_CELLS:
        with pytest.raises(anondecomp.MethodNotApplicableError, match="OUTPUT_CELLS.*allow_large=True"):
            anondecomp.decompose(GRAPH, 1, "randomized", seed=3)
    res = anondecomp.decompose(GRAPH, 1, "randomized", seed=3, allow_large=True)
    assert np.array_equal(res.assignments, expected.assignments)
    assert np.array_equal(res.multiplicities, expected.multiplicities)


def test_allowing_large_context_nests():
    with validation.allowing_large():
        assert validation.large_allowed()
        with validation.allowing_large(False):
            assert not validation.large_allowed()
        assert validation.large_allowed()
    assert not validation.large_allowed()


def _graph_file(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"demand": 4, "active_sets": {f"u{i}": ["a", "b", "c"] for i in range(8)}}))
    return str(path)


@pytest.mark.parametrize("method", ["optimal", "greedy"])
def test_command_line_allow_large(method, tmp_path, small_limits, capsys):
    graph = _graph_file(tmp_path)
    assert main(["decompose", graph, "--C", "1", "--method", method]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pass allow_large=True (--allow-large)" in err, err
    out = tmp_path / "d.json"
    assert main(["decompose", graph, "--C", "1", "--method", method, "--allow-large", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"method               {method}" in captured.out, captured.err
    g, _ = anondecomp.read_graph(graph)
    assignments, multiplicities, _ = anondecomp.read_decomposition(out, g)
    assert anondecomp.verify(g, 1, assignments, multiplicities).valid
