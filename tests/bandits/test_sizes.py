"""Sizes checked before allocation (issue 31, item 5): the limits of :mod:`anonbandits.core.limits` refuse in one
line before anything is allocated, ``allow_large`` / ``--allow-large`` confirms, the limits leave the reproduction
runs alone, and an unreachable scheduler fails fast."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.channels import AnonymousChannel, ChannelOptions
from anonbandits.core import limits
from anonbandits.envs import MultiUserInstance, clustered_instance, read_means
from anonbandits.errors import ConfigError
from anonbandits.experiments.grid import Task
from anonbandits.experiments.runner import run_task


def test_the_limits_are_named_constants_far_above_the_defaults():
    assert limits.MAX_ELICITATION_ENTRIES == 5 * 10**7 and limits.MAX_INSTANCE_CELLS == 10**8
    for name in ("anon-etc", "anon-batched", "anon-bai"):
        d = registry.get(name).defaults()
        assert (2 * d["C"] + 2) * d["users"] < limits.MAX_ELICITATION_ENTRIES
        assert d["users"] * d["arms"] < limits.MAX_INSTANCE_CELLS
    # the largest bandit-layer runs of docs/results: 60,000 users at C = 2, one million users x 3 arms
    AnonymousChannel(MultiUserInstance(np.full((60_000, 3), 0.5)), 2, 10**6, np.random.default_rng(0))


def test_an_elicitation_too_large_is_refused_before_it_allocates():
    instance = MultiUserInstance(np.full((20_000, 2), 0.5))
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match=r"\(2C\+2\) x users = 800,000,000 .* MAX_ELICITATION_ENTRIES"):
            AnonymousChannel(instance, 19_999, 1000, np.random.default_rng(0))
        assert tracemalloc.get_traced_memory()[1] < 50 * 2**20
    finally:
        tracemalloc.stop()
    confirmed = AnonymousChannel.open(
        instance, 1000, np.random.default_rng(0), ChannelOptions(C=19_999, allow_large=True)
    )
    assert confirmed.C == 19_999
    with limits.allowing_large():
        assert AnonymousChannel(instance, 19_999, 1000, np.random.default_rng(0)).t == 0


def test_an_instance_too_large_is_refused_and_confirmed(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="users x arms = 1,000,000,000,000 is above MAX_INSTANCE_CELLS"):
        clustered_instance(10**6, 10**6, 0, 0.1, np.random.default_rng(0))
    big = tmp_path / "big.csv"
    big.write_text("count,a,b\n1000000000000,0.7,0.5\n")
    with pytest.raises(ConfigError, match="means file .*big.csv: users .* = 2,000,000,000,000 is above"):
        read_means(big)
    monkeypatch.setattr("anonbandits.envs.means_file.MAX_INSTANCE_CELLS", 10)
    ok = tmp_path / "ok.csv"
    ok.write_text("count,a,b\n6,0.7,0.5\n")  # 12 cells: past the (lowered) limit, then confirmed
    with pytest.raises(ConfigError, match="MAX_INSTANCE_CELLS = 10 "):
        read_means(ok)
    assert read_means(ok, allow_large=True)[0].shape == (6, 2)


def test_elicit_never_allocates_one_entry_per_repetition():
    channel = AnonymousChannel(MultiUserInstance(np.full((4, 2), 0.5)), 1, 1000, np.random.default_rng(0))
    tracemalloc.start()
    try:
        fb = channel.elicit(np.zeros(4, int), np.array([10**11]))
        assert tracemalloc.get_traced_memory()[1] < 10 * 2**20
    finally:
        tracemalloc.stop()
    assert channel.t == 1000 and fb.counts[:, 0].tolist() == [250] * 4
    for bad in ([1.7], [-1], [np.nan], [True]):
        with pytest.raises(ConfigError, match="multiplicities must be"):
            channel.elicit(np.zeros(4, int), np.array(bad))


def test_elicit_with_multiplicities_charges_as_the_order_it_stands_for():
    """The repetitions computed without an order array charge exactly what the repeated order charged."""
    mu = np.array([[0.9, 0.1]] * 4)
    rows = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 1, 1]])
    for horizon in (10, 37, 1000):
        a = AnonymousChannel(MultiUserInstance(mu), 1, horizon, np.random.default_rng(3))
        b = AnonymousChannel(MultiUserInstance(mu), 1, horizon, np.random.default_rng(3))
        fa = a.elicit(rows, np.array([3, 0, 5]))
        fb = b.elicit(rows, order=np.repeat(np.arange(3), [3, 0, 5]))
        assert a.t == b.t and np.array_equal(fa.sums, fb.sums) and np.array_equal(fa.counts, fb.counts)
        assert a._ledger.regret == b._ledger.regret
        assert [v.tolist() for v in a._ledger.curve(10)] == [v.tolist() for v in b._ledger.curve(10)]


def test_allow_large_reaches_the_run_through_its_task(monkeypatch):
    monkeypatch.setattr("anonbandits.channels.anonymous.MAX_ELICITATION_ENTRIES", 10)
    params = registry.get("anon-etc").resolve({"users": 12, "arms": 2, "C": 2, "horizon": 2000})
    with pytest.raises(ConfigError, match="MAX_ELICITATION_ENTRIES = 10 "):
        run_task(Task("anon-etc", params, 0))
    out = run_task(Task("anon-etc", params, 0, allow_large=True))
    assert "allow_large" not in out.row and out.row["regret"] > 0


def test_a_refused_scheduler_fails_fast_and_says_refused(capsys):
    pytest.importorskip("distributed")
    from anonbandits.cli.main import main

    start = time.perf_counter()
    code = main(
        [
            "simulate",
            "--algorithm",
            "anon-etc",
            "--users",
            "40",
            "--arms",
            "2",
            "--C",
            "2",
            "--horizon",
            "2000",
            "--seeds",
            "1",
            "--no-progress",
            "--scheduler",
            "tcp://127.0.0.1:1",
        ]
    )
    assert time.perf_counter() - start < 5
    assert code == 2 and "connection refused" in capsys.readouterr().err


def test_rewards_drawn_one_by_one_are_bounded():
    from anonbandits.envs.rewards import sum_rewards

    with pytest.raises(ConfigError, match="counts' sum\\) = 1,000,000,000,000 is above MAX_REWARD_DRAWS"):
        sum_rewards("gaussian", [0.5], [10**12], np.random.default_rng(0))
    assert sum_rewards("bernoulli", [0.5], [10**12], np.random.default_rng(0))[0] > 0  # one draw, no limit
    assert sum_rewards("beta", [0.5, 0.5], [3, 4], np.random.default_rng(0)).shape == (2,)
