"""Time limits honoured by every phase of ``decompose --certify`` (issue 20): auto's phases (least-slack rounds,
block, time-shared faces), the bound, and the command's summary saying when a result was cut. No timings here:
a limit already passed, or none, makes every outcome deterministic."""

from __future__ import annotations

import json

import numpy as np
import pytest

import anondecomp
import anondecomp.armfirst
from anondecomp.bench import real
from anondecomp.methods import slack
from anondecomp.methods.auto import auto_decomposition
from anondecomp.methods.block import block_decomposition
from anondecomp.validation import prepare

PAST = -1.0  # a deadline (time.perf_counter() value) already passed


def _reference_open_arms(edges, value, C):
    """open_arms as first written: every pass scans all edges, closed arms' edges valued -1."""
    K = edges.K
    is_open = edges.degree >= C + 1
    while True:
        v = np.where(is_open[edges.arm], value, -1.0)
        top, first = edges.best(v)
        gains = top > 0
        arm = np.where(gains, edges.arm[np.minimum(first, len(v) - 1)], -1)
        count = np.bincount(arm[gains], minlength=K)
        worth = np.bincount(arm[gains], weights=top[gains], minlength=K)
        is_open &= count > 0
        short = np.where(is_open, np.maximum(C + 1 - count, 0), 0)
        free = ~gains & (top == 0)
        while free.any() and short.any():
            pad = free[edges.user] & (short[edges.arm] > 0)
            rank = np.where(pad, worth[edges.arm] / np.maximum(short[edges.arm], 1), -1.0)
            ptop, pfirst = edges.best(rank)
            chosen = np.flatnonzero(ptop >= 0)
            parm = edges.arm[pfirst[chosen]]
            keep = (np.bincount(parm, minlength=K) >= short)[parm]
            chosen, parm = chosen[keep], parm[keep]
            order = np.argsort(parm, kind="stable")
            chosen, parm = chosen[order], parm[order]
            take = np.arange(len(parm)) - np.searchsorted(parm, parm) < short[parm]
            if not take.any():
                break
            arm[chosen[take]] = parm[take]
            free[chosen[take]] = False
            short[np.unique(parm[take])] = 0
        if not short.any():
            return arm
        weak = np.flatnonzero(short > 0)
        weak = weak[np.argsort(worth[weak] / short[weak], kind="stable")]
        is_open[weak[: max(1, int(slack.CLOSE_SHARE * len(weak)))]] = False


@pytest.mark.parametrize("seed", range(6))
def test_open_arms_scanning_open_arms_only_matches_the_full_scan(seed):
    rng = np.random.default_rng(seed)
    w = (rng.random((60, 8)) < 0.5) * rng.integers(1, 4, size=(60, 8))
    g = anondecomp.DemandGraph.from_weights(w[w.sum(axis=1) > 0].astype(float))
    edges = slack.Edges(g)
    for C in (1, 3, 6):
        # zeros (padding), ties and distinct values, as the rounds and the greedy pricer give them
        value = np.where(rng.random(len(edges.user)) < 0.3, 0.0, rng.integers(0, 4, len(edges.user)) / 3)
        assert np.array_equal(slack.open_arms(edges, value, C), _reference_open_arms(edges, value, C))


def test_slack_past_its_deadline_serves_the_rest_greedily_and_says_so():
    g = real.powerlaw_log(300, 40, C=5, seed=1)
    d = slack.slack_decomposition(g, 5, deadline=PAST)
    assert anondecomp.verify(g, 5, d).valid
    assert d.info["steps"] == 0 and d.info["time_limit_reached"]
    # the repair opens every wanted arm to all its users once per unit of its largest demand
    assert d.total_assignments == d.info["repaired"] == int(prepare(g, 5, False).required.max(axis=0).sum())
    assert "time_limit_reached" not in slack.slack_decomposition(g, 5).info


def test_block_gives_up_past_its_deadline_only():
    g = real.powerlaw_log(300, 40, C=5, seed=1)
    assert block_decomposition(g, 5, deadline=PAST) is None
    assert anondecomp.verify(g, 5, block_decomposition(g, 5, deadline=None)).valid


def test_auto_past_its_time_limit_returns_a_valid_decomposition_marked_as_cut():
    g = real.powerlaw_log(300, 40, C=5, seed=1)
    d = anondecomp.decompose(g, 5, "auto", time_limit=1e-9, improve=False)  # the route without sessions
    assert anondecomp.verify(g, 5, d).valid
    assert d.method == "slack" and d.info["time_limit_reached"]
    full = anondecomp.decompose(g, 5, "auto", improve=False)
    assert "time_limit_reached" not in full.info and full.total_assignments < d.total_assignments
    # the default tries sessions first: they meet the lower bound here, whatever the limit
    best = anondecomp.decompose(g, 5, "auto", time_limit=1e-9)
    assert best.method == "sessions" and best.total_assignments == g.lower_bound


def test_auto_on_a_batched_graph_keeps_block_as_its_fallback_past_the_limit():
    active = np.zeros((12, 4), bool)
    active[:, :2] = True
    active[6:, 2:] = True
    g = anondecomp.DemandGraph.from_batched(8, active)
    d = auto_decomposition(g, 3, time_limit=1e-9)
    assert anondecomp.verify(g, 3, d).valid
    assert d.method == "block" and d.info["time_limit_reached"]


def test_the_bound_says_how_it_is_certified():
    g = real.powerlaw_log(300, 40, C=5, seed=1)
    seed = slack.slack_decomposition(g, 5, deadline=PAST)  # above the trivial bound: the LP is needed
    assert seed.total_assignments > g.lower_bound
    cut = anondecomp.lp_lower_bound(g, 5, seed=seed, time_limit=1e-9)
    assert (cut.value, cut.converged, cut.how) == (g.lower_bound, False, "time limit: trivial bound")
    met = anondecomp.lp_lower_bound(anondecomp.DemandGraph.from_batched(10, np.ones((8, 2), bool)), 3)
    assert (met.value, met.converged, met.how) == (
        10.0,
        True,
        "trivial bound max_i sum_j ceil(w_ij), met by a polytope decomposition",
    )
    active = np.array([[1, 1]] * 4 + [[1, 0]], bool)  # above the trivial bound 10: the LP is solved
    done = anondecomp.lp_lower_bound(anondecomp.DemandGraph.from_batched(10, active), 3)
    assert (done.value, done.converged, done.how) == (15.0, True, "LP optimum over 2 user types")


def test_certify_cut_by_its_time_limit_says_so_and_verifies(tmp_path, capsys, monkeypatch):
    from anonbandits.cli.main import main

    # no seed meets the bound in time
    monkeypatch.setattr(anondecomp.lower_bound, "fast_seed", lambda *args: [])
    monkeypatch.setattr(anondecomp.armfirst, "armfirst_rounds", lambda *args: None)
    # and sessions, which meet it here, give way to a long decomposition: auto's other route is then cut
    monkeypatch.setattr(
        anondecomp.methods.auto,
        "sessions_decomposition",
        lambda graph, C, best_effort=False: anondecomp.decompose(graph, C, "greedy"),
    )
    g = real.powerlaw_log(300, 40, C=5, seed=1)
    path, out = tmp_path / "g.parquet", tmp_path / "out.json"
    real.write_edge_table(g, path, C=5)
    assert main(["decompose", str(path), "--certify", "--time-limit", "1e-6", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "(certified; time limit: trivial bound)" in text
    assert "status               time limit reached" in text
    assert json.loads(out.read_text())["lp_lower_bound"] == g.lower_bound
    assert main(["verify", str(path), str(out)]) == 0
