"""Privacy made checkable: DP-MASE's Laplace noise and CORRUPTED ELIMINATION's vote-dropping mask."""

import numpy as np
import pytest
from scipy import stats

from anonbandits.core.schedules import epoch_length
from anonbandits.envs import MultiUserInstance
from anonbandits.multiagent.mase import (
    DPMASEConfig,
    activity_probabilities,
    corrupted_elimination,
    dp_mase,
    problem,
)


def _audits(eps, seeds, n_agents=12):
    inst = problem("1")
    out = [
        dp_mase(inst, activity_probabilities(n_agents), DPMASEConfig(eps=eps, beta=0.5), np.random.default_rng(s))
        for s in seeds
    ]
    return out, [r.info["noise"] for r in out]


@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_dp_mase_noise_is_laplace_with_scale_one_over_eps_r(eps):
    results, audits = _audits(eps, range(10))
    agent = np.concatenate([a.agent + 1000 * i for i, a in enumerate(audits)])
    epoch = np.concatenate([a.epoch for a in audits])
    arm = np.concatenate([a.arm for a in audits])
    length = np.concatenate([a.length for a in audits])
    noise = np.concatenate([a.noisy - a.mean for a in audits])
    scale = np.concatenate([a.scale for a in audits])
    # every reward enters exactly one released mean: one noisy value per (agent, epoch, arm)
    keys = np.stack([agent, epoch, arm], axis=1)
    assert np.unique(keys, axis=0).shape[0] == keys.shape[0]
    # the scale is 1/(eps R(e, s)) with s the number of arms the agent sampled in that epoch
    for a, e in {(int(x), int(y)) for x, y in zip(agent, epoch, strict=True)}:
        rows = (agent == a) & (epoch == e)
        assert np.all(length[rows] == epoch_length(rows.sum(), e, 0.5, eps))
    assert np.allclose(scale, 1.0 / (eps * length))
    z = noise / scale
    assert z.size > 400
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    # E|Lap(0,1)| = 1 and Var|Lap(0,1)| = 1: the scale is right within five standard errors
    assert abs(np.abs(z).mean() - 1.0) < 5.0 / np.sqrt(z.size)
    assert abs(z.mean()) < 5.0 * np.sqrt(2.0 / z.size)
    # a scale off by a factor 2 would be rejected by the same test
    assert stats.kstest(z * 2, stats.laplace.cdf).pvalue < 1e-6
    for r in results:
        assert np.all(np.isin(r.info["messages"].content, np.arange(10)))


def test_dp_mase_messages_are_votes_on_locally_eliminated_arms_only():
    results, _ = _audits(0.25, range(2), n_agents=16)
    for r in results:
        pairs = np.stack([r.info["messages"].sender, r.info["messages"].content], axis=1)
        assert np.unique(pairs, axis=0).shape[0] == pairs.shape[0]  # at most one vote per (agent, arm)
        el = r.info["eliminations"]
        assert np.array_equal(np.sort(el.agent * 100 + el.arm), np.sort(pairs[:, 0] * 100 + pairs[:, 1]))


CORRUPTIBLE = MultiUserInstance(np.array([0.9, 0.3, 0.2, 0.1]))


@pytest.mark.parametrize("xi", [0.1, 0.3])
def test_corrupted_elimination_drops_votes_with_probability_xi(xi):
    elims = []
    for seed in range(16):
        r = corrupted_elimination(CORRUPTIBLE, activity_probabilities(40), np.random.default_rng(seed), eta=0.9, xi=xi)
        el = r.info["eliminations"]
        # delivered votes are exactly the messages; dropped ones are never sent
        sent = np.stack([r.info["messages"].sender, r.info["messages"].content, r.info["messages"].time], axis=1)
        kept = np.stack([el.agent, el.arm, el.time], axis=1)[el.delivered]
        assert np.array_equal(sent, kept)
        pairs = el.agent * 10 + el.arm
        assert np.unique(pairs).size == pairs.size  # the mask is drawn once per (agent, arm)
        elims.append(el.delivered)
    delivered = np.concatenate(elims)
    assert delivered.size > 300
    assert stats.binomtest(int(delivered.sum()), delivered.size, 1 - xi).pvalue > 1e-3
    assert stats.binomtest(int(delivered.sum()), delivered.size, 1 - xi - 0.1).pvalue < 1e-3


def test_without_corruption_every_local_elimination_is_a_vote():
    r = corrupted_elimination(CORRUPTIBLE, activity_probabilities(40), np.random.default_rng(0), eta=0.9, xi=0.0)
    assert r.info["eliminations"].delivered.all() and r.info["messages"].count == r.info["eliminations"].arm.size
