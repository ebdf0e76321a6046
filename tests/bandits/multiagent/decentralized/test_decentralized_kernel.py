"""The compiled per-step kernel (:mod:`anonbandits.multiagent.decentralized.kernel`), the one engine of paper
002, against the plain per-pull reference loop written from the paper (:mod:`anonbandits.reference.decentralized`)
for every option outside the stationary Bernoulli one-pull-per-activation case (that case is in
``test_decentralized_reference.py``): drifting and switching means, Gaussian, Beta and user-supplied rewards, one
round per activation, the consensus stop with finished players leaving, 0-PRIVACY and DSER4's resets; then the
invariants of the vote log.

The two cannot share random numbers (the kernel settles the arms of a round lazily, draws rewards other than
Bernoulli in blocks and DSER4's resets in advance), so they are compared in law over independent seeds:
two-sample Kolmogorov-Smirnov tests on the stopping and consensus steps and on the number of players holding the
best arm, and Welch's statistic (means within 4 standard errors) for the message, suboptimal-pull and reset
counts. Instances are in the hard regime (eps larger than the gaps, eta = 0.5): players finish on different
arms, vote against the best arm, restart after global eliminations and read eliminations in the middle of
a round or phase. A kernel whose drifting arms did not decay, or whose round mode pulled one arm per activation,
fails these tests (checked by hand by such mutations).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.envs import MultiUserInstance
from anonbandits.multiagent.decentralized import (
    run_decentralized_elimination,
    run_dser4,
    run_full_sharing,
    run_no_sharing,
)
from anonbandits.multiagent.decentralized.environment import MeansSchedule
from anonbandits.reference import decentralized as reference

MEANS = [0.6, 0.55, 0.5, 0.45]
CASES = {  # name: (algorithm, options); eps, players and activity follow
    "drift": ("de", {"subroutine": "ser3", "drift": 2e-4}),
    "switch": ("de", {"subroutine": "se", "switch_at": 300, "means_after": [0.3, 0.5, 0.7, 0.45]}),
    "gaussian": ("de", {"subroutine": "ser3", "reward": "gaussian"}),
    "beta-median": ("none", {"subroutine": "median", "reward": "beta", "eps": 0.9}),
    "round-se": (
        "de",
        {
            "subroutine": "se",
            "per_activation": "round",
            "stop": "consensus",
            "draw_only_active": True,
            "se_c": 1.0,
            "eps": 0.3,
        },
    ),
    "round-naive": ("de", {"subroutine": "naive", "per_activation": "round", "eps": 0.8}),
    "round-median-drift": ("none", {"subroutine": "median", "per_activation": "round", "eps": 1.0, "drift": 1e-4}),
    "full-ser3": ("full", {"subroutine": "ser3", "eps": 0.2}),
    "full-ugapec-switch": ("full", {"subroutine": "ugapec", "switch_at": 40, "means_after": [0.3, 0.5, 0.7, 0.2]}),
}
RUNS = 60


def _kernel(algorithm: str, options: dict, seed: int):
    kw = {"eps": 0.6, "activity": "skewed", **options}
    rng = np.random.default_rng(seed)
    if algorithm == "de":
        return run_decentralized_elimination(MEANS, 6, rng=rng, delta=0.25, eta=0.5, **kw)
    if algorithm == "none":
        return run_no_sharing(MEANS, 6, rng=rng, delta=0.3, **kw)
    return run_full_sharing(MEANS, 6, rng=rng, delta=0.3, **kw)


def _reference(algorithm: str, options: dict, seed: int) -> dict:
    kw = {"eps": 0.6, "activity": "skewed", **options}
    env = MeansSchedule(
        MultiUserInstance(np.array(MEANS)),
        drift=kw.pop("drift", 0.0),
        switch_at=kw.pop("switch_at", 0),
        means_after=kw.pop("means_after", None),
    )
    kw["mean_at"] = env.mean
    rng = np.random.default_rng(10**6 + seed)
    if algorithm == "de":
        return reference.reference_decentralized(MEANS, 6, rng=rng, delta=0.25, eta=0.5, **kw)
    if algorithm == "none":
        return reference.reference_no_sharing(MEANS, 6, rng=rng, delta=0.3, **kw)
    kw.pop("activity")
    return reference.reference_full_sharing(MEANS, rng=rng, delta=0.3, **kw)


def assert_same_law(ref: list[dict], ker: list, best: int = 0) -> None:
    """KS on the steps and best-arm holders, Welch (4 standard errors) on the counts."""
    pairs = {
        "samples": ([r["samples"] for r in ref], [r.metrics["samples"] for r in ker]),
        "t_consensus": ([r["t_consensus"] or -1 for r in ref], [r.metrics["t_consensus"] or -1 for r in ker]),
        "best holders": (
            [sum(a == best for a in r["arms"]) for r in ref],
            [int(np.sum(r.info["agent_arms"] == best)) for r in ker],
        ),
    }
    for name, (a, b) in pairs.items():
        p = stats.ks_2samp(a, b).pvalue
        assert p > 1e-3, f"{name}: reference mean {np.mean(a):.1f} vs kernel {np.mean(b):.1f} (KS p = {p:.2g})"
    for name, key in (("messages", "messages"), ("suboptimal_pulls", "suboptimal"), ("resets", "resets")):
        a = np.array([r[key] for r in ref], float)
        b = np.array([r.metrics[name] for r in ker], float)
        se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        assert abs(a.mean() - b.mean()) <= 4 * se + 1e-9, (name, a.mean(), b.mean())


SLOW = {"beta-median", "round-median-drift", "round-se"}  # the reference loop takes 4-45 s on these


@pytest.mark.parametrize("name", [pytest.param(c, marks=[pytest.mark.slow] if c in SLOW else []) for c in CASES])
def test_kernel_and_per_pull_loop_have_the_same_law(name: str) -> None:
    algorithm, options = CASES[name]
    ref = [_reference(algorithm, options, s) for s in range(RUNS)]
    ker = [_kernel(algorithm, options, s) for s in range(RUNS)]
    best = 2 if "means_after" in options else 0
    if algorithm == "full":  # every player holds the shared learner's arm: compare the learner's
        ker = [_FullView(r) for r in ker]
    assert_same_law(ref, ker, best)


class _FullView:
    """0-PRIVACY's result seen as the reference's single learner."""

    def __init__(self, res) -> None:
        self.metrics = {**res.metrics, "t_consensus": None, "messages": 0}
        self.info = {"agent_arms": res.info["agent_arms"][:1]}


def test_user_reward_sampler_is_used() -> None:
    """A user-supplied sampler (here Bernoulli through ``rng.binomial``) drives the rewards: its runs have the
    law of the per-pull loop's Bernoulli runs."""

    def sampler(mu, counts, rng):
        return rng.binomial(counts, mu).astype(float)

    kw = {"eps": 0.6, "subroutine": "ser3", "activity": "uniform"}
    ker = [
        run_decentralized_elimination(MEANS, 5, rng=np.random.default_rng(s), delta=0.25, eta=0.5, reward=sampler, **kw)
        for s in range(RUNS)
    ]
    ref = [
        reference.reference_decentralized(MEANS, 5, rng=np.random.default_rng(10**6 + s), delta=0.25, eta=0.5, **kw)
        for s in range(RUNS)
    ]
    assert_same_law(ref, ker)
    calls = []
    run_decentralized_elimination(
        MEANS,
        5,
        rng=np.random.default_rng(0),
        delta=0.25,
        eta=0.5,
        reward=lambda mu, c, rng: calls.append(c.shape) or sampler(mu, c, rng),
        **kw,
    )
    assert calls and all(shape[1] == len(MEANS) for shape in calls)


def test_dser4_and_per_pull_loop_have_the_same_law() -> None:
    """DSER4 (Sec. 4): decentralized SER3 with global resets of probability phi per step over a horizon, the
    best arm switching in the middle; compared on the suboptimal plays, votes, resets and the final holders."""
    env = MeansSchedule(MultiUserInstance(np.array(MEANS)), switch_at=1500, means_after=np.array([0.3, 0.5, 0.7, 0.45]))
    kw = {"delta": 0.25, "eta": 0.5, "eps": 0.5}
    ker = [run_dser4(env, 6, rng=np.random.default_rng(s), horizon=3000, phi=2e-3, **kw) for s in range(RUNS)]
    ref = [
        reference.reference_decentralized(
            MEANS,
            6,
            rng=np.random.default_rng(10**6 + s),
            subroutine="ser3",
            activity="uniform",
            stop="none",
            max_steps=3000,
            phi=2e-3,
            mean_at=env.mean,
            **kw,
        )
        for s in range(RUNS)
    ]
    assert_same_law(ref, ker, best=2)
    assert np.mean([r.metrics["resets"] for r in ker]) > 3  # the resets ran


@pytest.mark.parametrize("subroutine", ["naive", "median", "se", "ser3", "ugapec"])
@pytest.mark.parametrize("stop", ["all", "consensus"])
def test_vote_log_invariants(subroutine: str, stop: str) -> None:
    """One vote per (player, arm); at most M per arm; an arm leaves the shared set at the step of its M-th
    vote (index order at one step, never the last arm); the consensus step is the last elimination; one
    pull per step; the done curve counts players within [0, 1] and ends with all (or at consensus)."""
    eps = 1.0 if subroutine == "median" else 0.6
    for seed in range(8):
        res = run_decentralized_elimination(
            MEANS, 6, rng=np.random.default_rng(seed), delta=0.25, eta=0.5, eps=eps, subroutine=subroutine, stop=stop
        )
        m, log = res.metrics["vote_threshold"], res.info["log"]
        assert res.metrics["messages"] == log.count == res.info["votes"].sum() <= m * len(MEANS)
        assert np.array_equal(np.bincount(log.content.astype(int), minlength=len(MEANS)), res.info["votes"])
        pairs = set(zip(log.sender.tolist(), log.content.astype(int).tolist(), strict=True))
        assert len(pairs) == log.count
        assert np.all(np.diff(log.time) >= 0) and (log.count == 0 or log.time.max() <= res.metrics["samples"])
        assert np.all(res.info["votes"] <= m) and res.info["agent_pulls"].sum() == res.metrics["samples"]
        for arm in range(len(MEANS)):
            times = np.sort(log.time[log.content == arm])
            step = res.info["elimination_steps"][arm]
            if step >= 0:
                assert times.size == m and times[m - 1] == step
            else:  # the guard keeps the last arm
                assert times.size < m or (res.metrics["guard_fired"] and arm == res.metrics["recommended"])
        dropped = res.info["elimination_steps"][res.info["elimination_steps"] >= 0]
        if dropped.size == len(MEANS) - 1:
            assert res.metrics["t_consensus"] == dropped.max()
            assert res.metrics["recommended"] == int(np.flatnonzero(res.info["elimination_steps"] < 0)[0])
        else:
            assert res.metrics["t_consensus"] is None
        assert np.all((res.curve[1] >= 0) & (res.curve[1] <= 1))
        if stop == "consensus" and res.metrics["t_consensus"] is not None:
            assert res.metrics["samples"] == res.metrics["t_consensus"]
        else:  # every player holds one arm
            assert res.curve[1][-1] == 1 and np.all(res.info["agent_arms"] >= 0)


def test_reproducible_and_truncated() -> None:
    kw = {"delta": 0.25, "eta": 0.5, "eps": 0.6, "subroutine": "ser3"}
    a = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(4), **kw)
    b = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(4), **kw)
    assert a.metrics == b.metrics and np.array_equal(a.info["log"].time, b.info["log"].time)
    assert np.array_equal(a.info["agent_arms"], b.info["agent_arms"])
    samples, times = a.metrics["samples"], a.info["log"].time
    cut = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(4), max_steps=samples // 2, **kw)
    assert cut.metrics["truncated"] and cut.metrics["samples"] == samples // 2 == cut.info["agent_pulls"].sum()
    assert np.array_equal(cut.info["log"].time, times[times <= cut.metrics["samples"]])  # same streams, same prefix
