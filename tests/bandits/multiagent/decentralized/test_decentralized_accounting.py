"""Message and sample accounting of Decentralized Elimination on a deterministic case (spec 4.4-4.5, 6, A11).

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
    """The run's players, from its own stream (spec A20: players have their own stream), as the kernel draws
    them (a first chunk of 2^15 steps, which these runs do not leave)."""
    return activity_sampler(activity, N)(1 << 15, np.random.default_rng(seed).spawn(4)[0]).astype(np.int64)


def time_of(seq: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Global step (1-based) of the j[n]-th activation of every player n."""
    return np.array([np.flatnonzero(seq == n)[j[n] - 1] + 1 for n in range(N)])


def count_upto(seq: np.ndarray, t: int) -> np.ndarray:
    """Activations of every player at steps <= t."""
    return np.bincount(seq[:t], minlength=N)


def rounds_to_decide(subroutine: str) -> int:
    """Pulls per arm after which a player with rewards 1 / 0 eliminates every zero arm (spec 3.1, 3.3, 3.4)."""
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
    res = run_decentralized_elimination(MEANS, N, rng=np.random.default_rng(seed), delta=DELTA, eta=ETA, eps=EPS,
                                        subroutine=subroutine, activity=activity)
    # messages: exactly M votes on each of the K-1 zero arms, from M players who each voted all three
    assert res.messages == res.broadcasts == m * (K - 1)
    assert res.p2p_messages == m * (K - 1) * (N - 1)
    assert res.votes.tolist() == [0, m, m, m]
    voters = np.unique(res.log.sender)
    assert voters.size == m
    for n in voters:
        _, kind, content = res.log.of_sender(n)
        assert sorted(content.tolist()) == [1, 2, 3] and np.all(kind == KIND_VOTE)
    seq = player_sequence(activity, seed)
    finish = time_of(seq, np.full(N, rounds_to_decide(subroutine) * K))
    tau = np.sort(finish)[m - 1]
    assert res.t_consensus == tau
    assert res.elimination_steps.tolist() == [-1, tau, tau, tau]
    assert np.array_equal(np.sort(res.log.time), np.repeat(np.sort(finish)[:m], K - 1))
    adopt = time_of(seq, count_upto(seq, tau) + 1)
    done = np.where(finish <= tau, finish, adopt)
    assert res.samples == done.max()
    assert res.agent_pulls.sum() == res.samples  # one pull per global step
    assert np.all(res.agent_arms == 0) and res.recommended == 0 and res.approx_optimal


def test_deterministic_case_one_round_per_activation() -> None:
    """``per_activation="round"`` (paper 003's convention): a player's activation plays a whole round, so
    she decides after R0 activations."""
    m, seed = vote_threshold(DELTA, ETA), 5
    res = run_decentralized_elimination(MEANS, N, rng=np.random.default_rng(seed), delta=DELTA, eta=ETA, eps=EPS,
                                        subroutine="se", per_activation="round")
    finish = time_of(player_sequence("uniform", seed), np.full(N, rounds_to_decide("se")))
    assert res.messages == m * (K - 1) and res.t_consensus == np.sort(finish)[m - 1]


@pytest.mark.parametrize("seed", range(3))
def test_message_bound_and_one_pull_per_step_on_random_instances(seed: int) -> None:
    """Theorem 1: at most M votes per arm (msg <= M K); every step is one pull by one player."""
    rng = np.random.default_rng(100 + seed)
    means = rng.uniform(0.2, 0.8, 5)
    res = run_decentralized_elimination(means, 12, rng=rng, delta=0.1, eta=0.6, eps=0.3, subroutine="ser3")
    m = vote_threshold(0.1, 0.6)
    assert res.messages == res.log.count == res.votes.sum() <= m * len(means)
    assert np.all(res.votes <= m)
    assert res.agent_pulls.sum() == res.samples
    assert np.all(np.diff(res.log.time) >= 0) and res.log.time.max() <= res.samples


def test_baselines_message_conventions() -> None:
    """1-PRIVACY sends nothing; 0-PRIVACY broadcasts (arm, reward) at every step: (N-1) per step (A11)."""
    none = run_no_sharing([0.8, 0.4, 0.2], 5, rng=np.random.default_rng(3), delta=0.05, eps=0.25)
    assert none.messages == none.broadcasts == none.log.count == 0
    assert none.agent_pulls.sum() == none.samples
    full = run_full_sharing([0.8, 0.4, 0.2], 5, rng=np.random.default_rng(3), delta=0.05, eps=0.25)
    assert full.broadcasts == full.log.count == full.samples
    assert full.messages == full.p2p_messages == 4 * full.samples
    assert np.array_equal(full.log.time, np.arange(1, full.samples + 1))
    arms = full.log.kind - KIND_REWARD
    assert np.all((arms >= 0) & (arms < 3)) and set(np.unique(full.log.content)) <= {0.0, 1.0}
    assert full.agent_pulls.sum() == full.samples
    # the log holds the rewards of the shared learner: its arm is the one with the best empirical mean
    means = [full.log.content[arms == a].mean() for a in range(3)]
    assert full.recommended == int(np.argmax(means))
