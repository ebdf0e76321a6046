"""Correctness of Decentralized Elimination and its parts (paper 002: Sec. 3-5, Theorems 1-4).

* delta-correctness (Theorem 1): over many seeds on an easy instance, the recommended arm fails to be
  eps-optimal at most as often as Binomial(runs, delta) allows (99.9% quantile), for the shared answer and
  for every player's own arm;
* every Arm Selection subroutine, run alone by each of several independent learners (1-PRIVACY), finds the
  best arm;
* non-stationary rewards: DSER4 follows a switch of the best arm that decentralized SER3 without resets
  misses, and decentralized SER3 stays correct under Problem 3's drift.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.envs import MultiUserInstance
from anonbandits.multiagent.decentralized import (
    run_decentralized_elimination,
    run_dser4,
    run_no_sharing,
)
from anonbandits.multiagent.decentralized.environment import MeansSchedule
from anonbandits.multiagent.decentralized.kernel import SUBROUTINES


@pytest.mark.parametrize("subroutine", ["ser3", "naive"])
def test_delta_correctness_over_many_seeds(subroutine: str) -> None:
    runs, delta = 60, 0.1
    means = [0.3, 0.7, 0.45, 0.3]  # eps = 0.2: only arm 1 is eps-optimal
    wrong = players_wrong = 0
    for seed in range(runs):
        res = run_decentralized_elimination(
            means, 10, rng=np.random.default_rng(seed), delta=delta, eta=0.6, eps=0.2, subroutine=subroutine
        )
        assert not res.metrics["truncated"] and res.metrics["recommended"] >= 0
        wrong += not res.metrics["approx_optimal"]
        players_wrong += res.metrics["users_approx_optimal"] < 1
    bound = stats.binom.ppf(0.999, runs, delta)
    assert wrong <= bound and players_wrong <= bound


@pytest.mark.parametrize("subroutine", SUBROUTINES)
def test_each_subroutine_alone_finds_the_best_arm(subroutine: str) -> None:
    """1-PRIVACY: 12 players, each alone at confidence delta/12; all of them must hold the best arm."""
    means = [0.3, 0.8, 0.5]
    res = run_no_sharing(means, 12, rng=np.random.default_rng(7), delta=0.05, eps=0.25, subroutine=subroutine)
    assert not res.metrics["truncated"]
    assert np.all(res.info["agent_arms"] == 1) and res.metrics["recommended"] == 1 and res.metrics["best_arm_found"]
    assert res.info["agent_pulls"].sum() == res.metrics["samples"]


def test_dser4_tracks_a_switch_of_the_best_arm() -> None:
    """Means (0.9, 0.5, 0.1) switch to (0.1, 0.5, 0.9) at step 15,000 of 45,000. Decentralized SER3 without
    resets (phi = 0) keeps the old arm, now the worst: about every step after the switch is a suboptimal
    play. DSER4 (phi = 1/3000) resets, re-learns and mostly recommends the new best arm at the horizon (not
    always: the last reset may come too late for the players to finish)."""
    kw = {
        "means": [0.9, 0.5, 0.1],
        "means_after": [0.1, 0.5, 0.9],
        "switch_at": 15_000,
        "horizon": 45_000,
        "delta": 0.25,
        "eta": 0.5,
        "eps": 0.2,
    }
    after = kw["horizon"] - kw["switch_at"]
    tracked = 0
    for seed in range(4):
        fixed = run_dser4(n_agents=6, rng=np.random.default_rng(seed), phi=0.0, **kw)
        assert fixed.metrics["resets"] == 0 and fixed.metrics["recommended"] == 0
        assert not fixed.metrics["approx_optimal"]
        assert fixed.metrics["suboptimal_pulls"] > 0.95 * after
        reset = run_dser4(n_agents=6, rng=np.random.default_rng(seed), phi=1 / 3000, **kw)
        assert reset.metrics["resets"] > 5
        assert reset.metrics["suboptimal_pulls"] < 0.5 * after
        tracked += reset.metrics["recommended"] == 2
    assert tracked >= 2


def test_problem3_drift() -> None:
    env = MeansSchedule(MultiUserInstance(np.array([0.7, 0.5, 0.3, 0.1])), drift=1e-5)
    mu = env.mean(np.array([0, 10_000, 50_000]))
    assert np.allclose(mu[:, 0], 0.7)
    assert np.allclose(mu[1], [0.7, 0.4, 0.2, 0.0]) and np.allclose(mu[2], [0.7, 0.0, 0.0, 0.0])
    res = run_decentralized_elimination(env, 32, rng=np.random.default_rng(2), delta=0.05, eta=0.9, eps=0.25)
    assert res.metrics["approx_optimal"] and res.metrics["recommended"] == 0 and not res.metrics["truncated"]
    assert res.metrics["messages"] <= res.metrics["vote_threshold"] * 4
