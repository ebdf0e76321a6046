"""Arm-first rounds (:mod:`anondecomp.armfirst`): valid schedules, never below the integer optimum, and the seed
the bound tries on logs."""

from __future__ import annotations

import numpy as np
import pytest

import anondecomp
from anondecomp.armfirst import armfirst_rounds
from anondecomp.bench import real
from anondecomp.validation import prepare
from tests.solvers.brute import optimum, tiny_graphs


@pytest.mark.parametrize("seed", range(4))
def test_armfirst_verifies_and_is_never_below_the_integer_optimum(seed):
    for graph, C in tiny_graphs(6, seed):
        a, m = armfirst_rounds(prepare(graph, C, False))
        assert anondecomp.verify(graph, C, a, m).valid
        assert int(m.sum()) >= optimum(graph, C)[1] >= graph.lower_bound


@pytest.mark.parametrize("seed", range(3))
def test_armfirst_verifies_on_weighted_graphs_with_padding_users(seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, size=(60, 7)).astype(float) * (rng.random((60, 7)) < 0.5)
    support = (w > 0) | (rng.random((60, 7)) < 0.2)  # users who may pad arms they do not want
    support[np.arange(60), rng.integers(0, 7, size=60)] = True
    g = anondecomp.DemandGraph.from_weights(w, support=support)
    prep = prepare(g, 3, True)
    a, m = armfirst_rounds(prep)
    assert anondecomp.verify(g, 3, a, m, best_effort=True).valid


def test_armfirst_gives_up_past_its_deadline():
    assert armfirst_rounds(prepare(real.powerlaw_log(300, 40, C=5, seed=1), 5, False), deadline=-1.0) is None


def test_armfirst_beats_least_slack_rounds_on_a_log_with_thin_arms_and_the_bound_returns_it(monkeypatch):
    g = real.powerlaw_log(600, 300, C=20, seed=0)  # R: lower bound 150, slack 183, arm-first 157
    slack = anondecomp.decompose(g, 20, "slack")
    a, m = armfirst_rounds(prepare(g, 20, False))
    assert anondecomp.verify(g, 20, a, m).valid
    assert g.lower_bound <= int(m.sum()) < slack.total_assignments
    # no rounds removed first, no master solved (as when the time limit comes first): no rounding, polish
    # returns the arm-first seed
    monkeypatch.setattr(anondecomp.improve, "shorter", lambda d, **kwargs: d)
    monkeypatch.setattr(anondecomp.lower_bound.ColumnGeneration, "run", lambda self, *args, **kwargs: None)
    polished = anondecomp.improve.polish(slack)
    # arm-first rounds, perhaps with rounds removed by rerouting (anondecomp.improve.shorten_long)
    assert polished.method in ("slack+armfirst", "slack+armfirst+improve")
    assert polished.info["lp_how"] == "time limit: trivial bound"
    tight = armfirst_rounds(prepare(g, 20, False), tight_first=True)[1]
    assert polished.total_assignments <= min(int(m.sum()), int(tight.sum()))  # the shortest variant
    assert anondecomp.verify(g, 20, polished).valid


@pytest.mark.parametrize("seed", range(3))
def test_armfirst_with_users_without_slack_first_verifies(seed):
    for graph, C in tiny_graphs(6, seed):
        a, m = armfirst_rounds(prepare(graph, C, False), tight_first=True)
        assert anondecomp.verify(graph, C, a, m).valid
        assert int(m.sum()) >= optimum(graph, C)[1]
    g = real.powerlaw_log(600, 300, C=20, seed=seed)
    a, m = armfirst_rounds(prepare(g, 20, False), tight_first=True)
    assert anondecomp.verify(g, 20, a, m).valid


def test_armfirst_restarts_are_reproducible_and_valid():
    prep = prepare(real.powerlaw_log(600, 300, C=20, seed=1), 20, False)
    runs = [armfirst_rounds(prep, tight_first=True, rng=np.random.default_rng(7)) for _ in range(2)]
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert anondecomp.verify(prep.graph, 20, *runs[0]).valid
