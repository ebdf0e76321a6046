"""Message and sample accounting of Decentralized Elimination on a deterministic case (Algorithm 2; the message
conventions of Sec. 5.2).

With means (1, 0, 0, 0) every reward is deterministic, so each player's subroutine eliminates the three
zero arms at once after exactly R0 rounds (R0 from the subroutine's radius). The board then gets exactly
M votes on each zero arm, the consensus comes at the M-th smallest step at which a player completes her
R0 * K pulls, and every other player adopts the consensus at her first activation after it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonbandits.multiagent.decentralized import (
    KIND_REWARD,
    KIND_VOTE,
    run_decentralized_elimination,
    run_full_sharing,
    run_no_sharing,
    vote_threshold,
)
from anonbandits.multiagent.decentralized.environment import activity_sampler

MEANS = [1.0, 0.0, 0.0, 0.0]
K, N, ETA, DELTA, EPS = 4, 8, 0.5, 0.1, 0.25


def player_sequence(activity: str, seed: int) -> np.ndarray:
    """The run's players, from its own stream (players have their own stream), as the kernel draws
    them (a first chunk of 2^15 steps, which these runs do not leave)."""
    return activity_sampler(activity, N)(1 << 15, np.random.default_rng(seed).spawn(4)[0]).astype(np.int64)


def time_of(seq: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Global step (1-based) of the j[n]-th activation of every player n."""
    return np.array([np.flatnonzero(seq == n)[j[n] - 1] + 1 for n in range(N)])


def count_upto(seq: np.ndarray, t: int) -> np.ndarray:
    """Activations of every player at steps <= t."""
    return np.bincount(seq[:t], minlength=N)


def rounds_to_decide(subroutine: str) -> int:
    """Pulls per arm after which a player with rewards 1 / 0 eliminates every zero arm (Sec. 3.1's subroutines)."""
    if subroutine == "naive":
        return math.ceil(4 / EPS**2 * math.log(2 * K / ETA))
    for r in range(1, 10_000):
        if subroutine == "ser3":
            radius = math.sqrt(math.log(4 * K * r * r / ETA) / (2 * r))
        else:
            radius = math.sqrt(math.log(4 * K * r * r / ETA) / r)
        if 1 + EPS >= 2 * radius:
            return r
    raise AssertionError("no decision round")


@pytest.mark.parametrize("subroutine", ["ser3", "se", "naive"])
@pytest.mark.parametrize("activity", ["uniform", "skewed"])
@pytest.mark.parametrize("seed", [0, 1])
def test_deterministic_case_matches_the_accounting(subroutine: str, activity: str, seed: int) -> None:
    m = vote_threshold(DELTA, ETA)
    res = run_decentralized_elimination(
        MEANS,
        N,
        rng=np.random.default_rng(seed),
        delta=DELTA,
        eta=ETA,
        eps=EPS,
        subroutine=subroutine,
        activity=activity,
    )
    # messages: exactly M votes on each of the K-1 zero arms, from M players who each voted all three
    assert res.metrics["messages"] == res.metrics["broadcasts"] == m * (K - 1)
    assert res.metrics["p2p_messages"] == m * (K - 1) * (N - 1)
    assert res.info["votes"].tolist() == [0, m, m, m]
    voters = np.unique(res.info["log"].sender)
    assert voters.size == m
    for n in voters:
        _, kind, content = res.info["log"].of_sender(n)
        assert sorted(content.tolist()) == [1, 2, 3] and np.all(kind == KIND_VOTE)
    seq = player_sequence(activity, seed)
    finish = time_of(seq, np.full(N, rounds_to_decide(subroutine) * K))
    tau = np.sort(finish)[m - 1]
    assert res.metrics["t_consensus"] == tau
    assert res.info["elimination_steps"].tolist() == [-1, tau, tau, tau]
    assert np.array_equal(np.sort(res.info["log"].time), np.repeat(np.sort(finish)[:m], K - 1))
    adopt = time_of(seq, count_upto(seq, tau) + 1)
    done = np.where(finish <= tau, finish, adopt)
    assert res.metrics["samples"] == done.max()
    assert res.info["agent_pulls"].sum() == res.metrics["samples"]  # one pull per global step
    assert np.all(res.info["agent_arms"] == 0) and res.metrics["recommended"] == 0 and res.metrics["approx_optimal"]


def test_deterministic_case_one_round_per_activation() -> None:
    """``per_activation="round"`` (paper 003's convention): a player's activation plays a whole round, so
    she decides after R0 activations."""
    m, seed = vote_threshold(DELTA, ETA), 5
    res = run_decentralized_elimination(
        MEANS,
        N,
        rng=np.random.default_rng(seed),
        delta=DELTA,
        eta=ETA,
        eps=EPS,
        subroutine="se",
        per_activation="round",
    )
    finish = time_of(player_sequence("uniform", seed), np.full(N, rounds_to_decide("se")))
    assert res.metrics["messages"] == m * (K - 1) and res.metrics["t_consensus"] == np.sort(finish)[m - 1]


@pytest.mark.parametrize("seed", range(3))
def test_message_bound_and_one_pull_per_step_on_random_instances(seed: int) -> None:
    """Theorem 1: at most M votes per arm (msg <= M K); every step is one pull by one player."""
    rng = np.random.default_rng(100 + seed)
    means = rng.uniform(0.2, 0.8, 5)
    res = run_decentralized_elimination(means, 12, rng=rng, delta=0.1, eta=0.6, eps=0.3, subroutine="ser3")
    m = vote_threshold(0.1, 0.6)
    assert res.metrics["messages"] == res.info["log"].count == res.info["votes"].sum() <= m * len(means)
    assert np.all(res.info["votes"] <= m)
    assert res.info["agent_pulls"].sum() == res.metrics["samples"]
    assert np.all(np.diff(res.info["log"].time) >= 0) and res.info["log"].time.max() <= res.metrics["samples"]


def test_baselines_message_conventions() -> None:
    """1-PRIVACY sends nothing; 0-PRIVACY broadcasts (arm, reward) at every step: (N-1) per step (Sec. 5.2)."""
    none = run_no_sharing([0.8, 0.4, 0.2], 5, rng=np.random.default_rng(3), delta=0.05, eps=0.25)
    assert none.metrics["messages"] == none.metrics["broadcasts"] == none.info["log"].count == 0
    assert none.info["agent_pulls"].sum() == none.metrics["samples"]
    full = run_full_sharing([0.8, 0.4, 0.2], 5, rng=np.random.default_rng(3), delta=0.05, eps=0.25)
    assert full.metrics["broadcasts"] == full.info["log"].count == full.metrics["samples"]
    assert full.metrics["messages"] == full.metrics["p2p_messages"] == 4 * full.metrics["samples"]
    assert np.array_equal(full.info["log"].time, np.arange(1, full.metrics["samples"] + 1))
    arms = full.info["log"].kind - KIND_REWARD
    assert np.all((arms >= 0) & (arms < 3)) and set(np.unique(full.info["log"].content)) <= {0.0, 1.0}
    assert full.info["agent_pulls"].sum() == full.metrics["samples"]
    # the log holds the rewards of the shared learner: its arm is the one with the best empirical mean
    means = [full.info["log"].content[arms == a].mean() for a in range(3)]
    assert full.metrics["recommended"] == int(np.argmax(means))
