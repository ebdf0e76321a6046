"""(eps, eta)-privacy of Decentralized Elimination (paper 002, Def. 3 and Theorem 1), checked by construction.

Def. 3 bounds what an adversary who sees all of one player's messages ``M_n`` (and knows the algorithm) can
infer about her eps-optimal arm. DE guarantees it by construction (Theorem 1), so the test checks the
construction on the message log rather than an empirical attack (Def. 3's bound is no frequency one can test):

* the only thing a player ever sends is "arm k is not eps-optimal": one integer arm index per message,
  at most one message per (player, arm), never her rewards, pulls or counts;
* each of her messages comes from her own Arm Selection subroutine run at confidence ``1 - eta``
  (failure parameter eta) and is an arm she no longer plays;
* no single player decides anything: an arm leaves the shared set only with M >= 2 distinct voters, and
  configurations with M < 2 or M > N are rejected.
For contrast, 1-PRIVACY sends nothing and 0-PRIVACY sends every reward.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized import (
    KIND_VOTE,
    run_decentralized_elimination,
    run_full_sharing,
    run_no_sharing,
    vote_threshold,
)

MEANS = [0.5, 0.8, 0.45, 0.5, 0.3]


@pytest.fixture(scope="module")
def runs():
    return [
        run_decentralized_elimination(
            MEANS, 12, rng=np.random.default_rng(s), delta=0.1, eta=0.6, eps=0.3, subroutine=sub
        )
        for s, sub in enumerate(["ser3", "ugapec", "se", "naive"])
    ]


def test_what_an_adversary_sees_of_one_player(runs) -> None:
    k = len(MEANS)
    for res in runs:
        log = res.info["log"]
        assert set(np.unique(log.sender)) <= set(range(12))
        for n in range(12):
            time, kind, content = log.of_sender(n)  # all an observer of player n gets
            assert np.all(kind == KIND_VOTE)
            assert np.all(content == np.round(content)) and np.all((content >= 0) & (content < k))
            assert len(set(content.tolist())) == content.size  # one bit per (player, arm) at most
            assert np.all(np.diff(time) >= 0) and np.all((time >= 1) & (time <= res.metrics["samples"]))
            arm = res.info["agent_arms"][n]
            if arm >= 0 and content.size:
                # the arms she voted against are arms she eliminated locally; she keeps another one
                assert arm not in set(content.tolist()) or res.info["votes"][arm] < res.metrics["vote_threshold"]


def test_vote_threshold_and_distinct_voters(runs) -> None:
    # That every message comes from a subroutine at confidence 1 - eta is checked on its timing: in
    # test_decentralized_accounting.py the votes fall exactly at the round the radius gives at failure eta.
    for res in runs:
        assert res.metrics["vote_threshold"] == math.ceil(math.log(0.1) / math.log(0.6)) == 5  # M of Algorithm 2
        # an arm can only be eliminated by M distinct players; the shared answer is never one player's
        first = {}
        for sender, arm in zip(res.info["log"].sender, res.info["log"].content, strict=True):
            first.setdefault(int(arm), []).append(int(sender))
        for arm, senders in first.items():
            assert len(set(senders)) == len(senders) == res.info["votes"][arm] <= res.metrics["vote_threshold"]


def test_threshold_values_and_bad_configurations() -> None:
    # ceil: eta^M <= delta (Theorem 1); floor: the M = 28 of Sec. 5.2
    assert vote_threshold(0.05, 0.9) == 29 and vote_threshold(0.05, 0.9, "floor") == 28
    with pytest.raises(ConfigError, match="delta must be <= eta"):  # M = 1: one player would decide
        run_decentralized_elimination(MEANS, 10, rng=np.random.default_rng(0), delta=0.5, eta=0.6)
    with pytest.raises(ConfigError, match="delta must be >= eta"):  # M > N: nobody could ever eliminate
        run_decentralized_elimination(MEANS, 10, rng=np.random.default_rng(0), delta=0.001, eta=0.6)


def test_baselines_are_the_two_extremes() -> None:
    alone = run_no_sharing(MEANS, 6, rng=np.random.default_rng(0), delta=0.1, eps=0.3)
    assert alone.info["log"].count == 0 and alone.info["local_confidence"] == pytest.approx(0.1 / 6)
    shared = run_full_sharing(MEANS, 6, rng=np.random.default_rng(0), delta=0.1, eps=0.3)
    assert shared.info["log"].count == shared.metrics["samples"]  # every (arm, reward) is broadcast
    assert set(np.unique(shared.info["log"].content)) <= {0.0, 1.0}
