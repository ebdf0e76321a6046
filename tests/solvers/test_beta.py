"""beta(G) of Lemma 3 (paper 000): the disjunctive LP and column generation against brute-force vertex
enumeration, the certified interval, Lemma 5, and the ``beta`` command."""

import json

import numpy as np
import pytest

from anonbandits.cli.main import main
from anondecomp import DemandGraph, InvalidInputError, beta, decompose
from anondecomp.bench.families import abundant, scarce
from tests.solvers import brute


@pytest.mark.parametrize("case", range(30))
@pytest.mark.parametrize("sense", ["dominate", "equal"])
def test_disjunctive_lp_agrees_with_brute_force(case, sense):
    graph, C = brute.tiny_graphs(30, seed=5, feasible=False)[case]
    expected = brute.beta(graph, C, sense)
    for method in ("disjunctive", "colgen"):
        res = beta(graph, C, method=method, sense=sense)
        assert res.exact
        assert res.lower == pytest.approx(expected, abs=1e-6)


def test_lemma_5_beta_is_one_when_clusters_are_large():
    inst = abundant(60, 3, 2, D=20, seed=1)  # U = 20 >= K(C+1) = 9
    res = beta(inst.graph, inst.C)
    assert res.exact and res.lower == pytest.approx(1.0, abs=1e-7)


def test_domination_matches_the_inverse_covering_lp_and_bounds_every_decomposition():
    inst = scarce(40, 4, 2, 5, D=1000, seed=3)
    res = beta(inst.graph, inst.C)
    assert res.exact and 0 < res.lower < 1
    opt = decompose(inst.graph, inst.C, "optimal")
    # Lemma 3 converse (domination): R assignments for demand D give beta >= D / R (up to ceil(w) effects)
    assert res.lower >= 1000 / opt.total_assignments - 1e-9
    assert opt.total_assignments <= res.lemma3_bound(inst.graph)


def test_column_generation_interval_is_certified_and_contains_the_exact_value():
    inst = scarce(60, 6, 3, 6, D=100, seed=0)
    exact = beta(inst.graph, inst.C, method="disjunctive")
    cut = beta(inst.graph, inst.C, method="colgen", time_limit=0.01)
    assert cut.lower - 1e-7 <= exact.lower <= cut.upper + 1e-7
    full = beta(inst.graph, inst.C, method="colgen")
    assert full.exact and full.lower == pytest.approx(exact.lower, abs=1e-6)


def test_equality_reading_is_zero_for_a_lone_user_on_a_thin_column():
    # user 0 wants only arm 0; arm 0's other users spread thin: no point of P_C serves it exactly
    active = np.array([[1, 0, 0]] + [[1, 1, 1]] * 3 + [[0, 1, 1]] * 6, bool)
    graph = DemandGraph.from_batched(30, active)
    assert beta(graph, 3, sense="equal").lower == pytest.approx(0.0, abs=1e-9)
    assert beta(graph, 3, sense="dominate").lower > 0.1


def test_bad_arguments():
    graph = DemandGraph.from_batched(3, np.ones((4, 2), bool))
    with pytest.raises(InvalidInputError, match="beta method"):
        beta(graph, 1, method="simplex")
    with pytest.raises(InvalidInputError, match="C must be"):
        beta(graph, 0)


def test_cli_beta(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"C": 1, "demand": 6, "active_sets": {f"u{i}": ["a", "b"] for i in range(4)}}))
    out = tmp_path / "b.json"
    assert main(["beta", str(path), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "beta(G)" in text and "(exact" in text and "Lemma 3 bound" in text
    doc = json.loads(out.read_text())
    assert doc["exact"] and doc["beta_lower"] == pytest.approx(1.0)
    assert main(["beta", str(path), "--time-limit", "-1"]) == 2


def test_column_generation_cut_by_its_time_limit_is_not_called_exact():
    inst = scarce(60, 6, 3, 6, D=100, seed=0)
    res = beta(inst.graph, inst.C, method="colgen", time_limit=1e-9)
    assert not res.exact
    assert 0.0 <= res.lower <= res.upper <= 1.0
