"""The ``real`` family (OBD and log-shaped synthetic graphs) and least-slack rounds, its fastest method."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import anondecomp
from anondecomp.bench import real, suite
from anondecomp.methods.optimal import TIME_LIMIT_STATUS, optimal_decomposition
from anondecomp.methods.slack import slack_decomposition

OBD = Path(os.environ.get(suite.OBD_ARCHIVE_ENV, Path(__file__).resolve().parents[2] / "build" / "obd"
                          / "obp-0.5.7.tar.gz"))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("C", [1, 3])
def test_slack_verifies_on_random_weighted_graphs(seed, C):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, size=(40, 6)).astype(float) * (rng.random((40, 6)) < 0.6)
    w[np.arange(40), rng.integers(0, 6, size=40)] += 1
    g = anondecomp.DemandGraph.from_weights(w)
    d = slack_decomposition(g, C, best_effort=True)
    assert anondecomp.verify(g, C, d, best_effort=True).valid
    assert d.total_assignments >= d.lower_bound


def test_slack_meets_the_lower_bound_on_a_log():
    g = real.powerlaw_log(1000, 100, C=10, seed=0)
    d = slack_decomposition(g, 10)
    assert anondecomp.verify(g, 10, d).valid
    assert d.total_assignments == d.lower_bound == 50       # block needs 100 here
    assert anondecomp.decompose(g, 10, "block").total_assignments > d.total_assignments


def test_auto_tries_slack_on_logs_only():
    g = real.powerlaw_log(1000, 100, C=10, seed=0)
    assert anondecomp.decompose(g, 10).method == "slack"
    active = np.zeros((12, 4), bool)
    active[:, :2] = True
    active[6:, 2:] = True
    assert anondecomp.decompose(anondecomp.DemandGraph.from_batched(8, active), 3).method == "timeshare"


def test_powerlaw_log_is_shaped_like_obd():
    g = real.powerlaw_log(3000, 200, C=10, seed=1)
    again = real.powerlaw_log(3000, 200, C=10, seed=1)
    assert np.array_equal(g.weights, again.weights) and g.users == again.users
    assert set(np.unique(g.weights)) <= {0.0, 1.0}
    assert (g.support.sum(axis=0) >= 11).all()                      # every kept item is observable at C = 10
    activity = g.support.sum(axis=1)
    assert 9 <= np.median(activity) <= 15                            # OBD's median is 12
    popularity = np.sort(g.support.sum(axis=0))[::-1]
    assert popularity[0] > 3 * popularity[len(popularity) // 2]      # a head of popular items


def test_graph_from_counts_drops_thin_items():
    counts = Counter({("a", 1): 2, ("b", 1): 1, ("c", 1): 5, ("a", 2): 1, ("d", 3): 4})
    g = real.graph_from_counts(counts, C=2)
    assert g.arms == ("item1",) and g.users == ("t0", "t1", "t2")
    assert g.weights[:, 0].tolist() == [2.0, 1.0, 5.0]


def test_write_edge_table_round_trips(tmp_path):
    g = real.powerlaw_log(300, 50, C=3, seed=2)
    real.write_edge_table(g, tmp_path / "g.parquet", C=3)
    back, C = anondecomp.read_graph(tmp_path / "g.parquet")
    assert C == 3 and np.array_equal(back.weights[np.argsort(back.users)][:, np.argsort(back.arms)],
                                     g.weights[np.argsort(g.users)][:, np.argsort(g.arms)])


def test_optimal_cut_by_its_time_limit_says_so():
    g = real.powerlaw_log(1000, 100, C=50, seed=0)
    d = optimal_decomposition(g, 50, time_limit=1.0)
    assert anondecomp.verify(g, 50, d).valid
    assert d.info["status"].startswith(TIME_LIMIT_STATUS)
    assert not d.info["lp_converged"]


def test_real_suite_lists_the_documented_graphs():
    cases = suite.real_cases(None)
    assert [c.label for c in cases] == [f"power-law N={N} items={M} C={C} seed={s}"
                                        for N, M, C, s in suite.REAL_SYNTHETIC]
    assert len(suite.real_cases("archive.tar.gz")) == len(cases) + len(suite.REAL_C)


@pytest.mark.skipif(not OBD.exists(), reason="the obp source archive is not here (benchmarks/real_graphs.py "
                                             "fetches it into build/obd/)")
def test_obd_graph_at_C_50():
    g = real.obd_graph(OBD, 50)
    assert g.shape == (280, 77) and g.lower_bound == 1333
    assert (g.support.sum(axis=0) >= 51).all()
    d = slack_decomposition(g, 50)
    assert anondecomp.verify(g, 50, d).valid
