"""The ``real`` family (OBD and log-shaped synthetic graphs) and least-slack rounds, its fastest method."""

from __future__ import annotations

import csv
import os
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import anondecomp
from anondecomp.bench import real, suite
from anondecomp.methods.optimal import TIME_LIMIT_STATUS, optimal_decomposition
from anondecomp.methods.slack import slack_decomposition

OBD = Path(
    os.environ.get(suite.OBD_ARCHIVE_ENV, Path(__file__).resolve().parents[2] / "build" / "obd" / "obp-0.5.7.tar.gz")
)


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
    assert d.total_assignments == d.lower_bound == 50  # block needs 100 here
    assert anondecomp.decompose(g, 10, "block").total_assignments > d.total_assignments


def test_auto_tries_sessions_then_slack_on_logs_only():
    g = real.powerlaw_log(1000, 100, C=10, seed=0)
    assert anondecomp.decompose(g, 10, reseat=False).method == "sessions"  # the route, before re-seating
    assert anondecomp.decompose(g, 10, improve=False, reseat=False).method == "slack"
    active = np.zeros((12, 4), bool)
    active[:, :2] = True
    active[6:, 2:] = True
    assert anondecomp.decompose(anondecomp.DemandGraph.from_batched(8, active), 3, reseat=False).method == "timeshare"


def test_powerlaw_log_is_shaped_like_obd():
    g = real.powerlaw_log(3000, 200, C=10, seed=1)
    again = real.powerlaw_log(3000, 200, C=10, seed=1)
    assert np.array_equal(g.weights, again.weights) and g.users == again.users
    assert set(np.unique(g.weights)) <= {0.0, 1.0} and (g.edge_weights == 1).all()
    assert (g.arm_degrees >= 11).all()  # every kept item is observable at C = 10
    activity = np.diff(g.indptr)
    assert 9 <= np.median(activity) <= 15  # OBD's median is 12
    popularity = np.sort(g.arm_degrees)[::-1]
    assert popularity[0] > 3 * popularity[len(popularity) // 2]  # a head of popular items


def test_the_committed_logs_are_drawn_unchanged():
    """docs/results/real_graphs.csv was measured on these exact graphs: the sizes of REAL_SYNTHETIC are drawn by
    Gumbel top-k, as always (users, items and edges after dropping as in the table)."""
    table = Path(__file__).resolve().parents[2] / "docs" / "results" / "real_graphs.csv"
    with open(table, newline="") as fh:
        rows = {(r["graph"], int(r["C"])): r for r in csv.DictReader(fh) if r["graph"].startswith("power-law")}
    assert len(rows) == len(suite.REAL_SYNTHETIC)
    for N, M, C, s in suite.REAL_SYNTHETIC:
        assert N * M <= real.GUMBEL_CELLS
        g = real.powerlaw_log(N, M, C, s)
        row = rows[f"power-law N={N} items={M} seed={s}", C]
        assert (g.n_users, g.n_arms, g.nnz, g.lower_bound) == tuple(
            int(row[k]) for k in ("users", "arms", "edges", "trivial_bound")
        )


def test_large_logs_are_drawn_sparse_with_the_documented_shape():
    """20,000 users x 5,000 items (dense weights: 800 MB) are drawn by rounds, in memory about the
    interactions: unit weights, every kept item observable at C, each user at most max_share of the items."""
    tracemalloc.start()
    try:
        g = real.powerlaw_log(20_000, 5_000, C=10, seed=3, max_share=0.1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 300 * 2**20
    assert (g.edge_weights == 1).all() and (g.edge_required == 1).all()
    assert (g.arm_degrees >= 11).all()  # items with >= C+1 users only
    activity = np.diff(g.indptr)
    assert activity.min() >= 1 and activity.max() == 500  # the cap: 0.1 x 5,000 items
    assert 9 <= np.median(activity) <= 15  # OBD's median is 12
    popularity = g.arm_degrees  # items keep their rank order
    assert popularity[:50].mean() > 5 * popularity[-500:].mean()  # a head of popular items
    again = real.powerlaw_log(20_000, 5_000, C=10, seed=3, max_share=0.1, sampler="rounds")
    assert np.array_equal(g.edge_users, again.edge_users) and np.array_equal(g.edge_arms, again.edge_arms)
    assert g.users == again.users and g.arms == again.arms


def test_both_samplers_draw_the_same_law():
    """Rounds keep each user's first new items of draws with replacement: successive sampling without
    replacement, the law of Gumbel top-k. Exactly: the frequency of every pair of 2 items out of 4; and the
    item popularity of the two samplers on a log."""
    rng = np.random.default_rng(0)
    n = 200_000
    users, items = real._rounds(rng, np.full(n, 2), 4, real.ITEM_EXPONENT)
    assert np.array_equal(users, np.repeat(np.arange(n), 2))
    p = np.arange(1, 5) ** -real.ITEM_EXPONENT
    p /= p.sum()
    pairs = Counter(zip(items[::2].tolist(), items[1::2].tolist(), strict=True))
    for i in range(4):
        for j in range(i + 1, 4):
            exact = p[i] * p[j] / (1 - p[i]) + p[j] * p[i] / (1 - p[j])
            assert abs(pairs[i, j] / n - exact) < 5 * np.sqrt(exact * (1 - exact) / n)
    a = real.powerlaw_log(4000, 200, C=10, seed=0, sampler="gumbel")
    b = real.powerlaw_log(4000, 200, C=10, seed=0, sampler="rounds")
    assert a.nnz == b.nnz  # the same activity draws, then the items
    assert np.corrcoef(a.arm_degrees, b.arm_degrees)[0, 1] > 0.98
    with pytest.raises(ValueError, match="sampler must be one of"):
        real.powerlaw_log(10, 10, 1, 0, sampler="dense")


def test_the_inverse_cdf_is_exact():
    rng = np.random.default_rng(1)
    for n, s in [(1, 0.63), (3, 0.63), (50, 3.0), (10_000, 0.63), (1000, 0.0)]:
        p = np.arange(1, n + 1, dtype=float) ** -s
        draw = real._InverseCDF(p / p.sum())
        u = np.concatenate([rng.random(100_000), [0.0, 0.5, 1 - 2**-53, draw.cdf[0]]])
        assert np.array_equal(draw(u), np.minimum(np.searchsorted(draw.cdf, u, side="right"), n - 1))


def test_graph_from_counts_drops_thin_items():
    counts = Counter({("a", 1): 2, ("b", 1): 1, ("c", 1): 5, ("a", 2): 1, ("d", 3): 4})
    g = real.graph_from_counts(counts, C=2)
    assert g.arms == ("item1",) and g.users == ("t0", "t1", "t2")
    assert g.weights[:, 0].tolist() == [2.0, 1.0, 5.0]


def test_write_edge_table_round_trips(tmp_path):
    g = real.powerlaw_log(300, 50, C=3, seed=2)
    real.write_edge_table(g, tmp_path / "g.parquet", C=3)
    back, C = anondecomp.read_graph(tmp_path / "g.parquet")
    assert C == 3 and np.array_equal(
        back.weights[np.argsort(back.users)][:, np.argsort(back.arms)],
        g.weights[np.argsort(g.users)][:, np.argsort(g.arms)],
    )


def test_optimal_cut_by_its_time_limit_says_so():
    g = real.powerlaw_log(1000, 100, C=50, seed=0)
    d = optimal_decomposition(g, 50, time_limit=1.0)
    assert anondecomp.verify(g, 50, d).valid
    assert d.info["status"].startswith(TIME_LIMIT_STATUS)
    assert not d.info["lp_converged"]


def test_real_suite_lists_the_documented_graphs():
    cases = suite.real_cases(None)
    assert [c.label for c in cases] == [
        f"power-law N={N} items={M} C={C} seed={s}" for N, M, C, s in suite.REAL_SYNTHETIC
    ]
    assert len(suite.real_cases("archive.tar.gz")) == len(cases) + len(suite.REAL_C)


@pytest.mark.skipif(
    not OBD.exists(), reason="the obp source archive is not here (benchmarks/real_graphs.py fetches it into build/obd/)"
)
def test_obd_graph_at_C_50():
    g = real.obd_graph(OBD, 50)
    assert g.shape == (280, 77) and g.lower_bound == 1333
    assert (g.support.sum(axis=0) >= 51).all()
    d = slack_decomposition(g, 50)
    assert anondecomp.verify(g, 50, d).valid
