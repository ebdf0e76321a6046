"""The compiled per-step kernel (:mod:`anonbandits.multiagent.decentralized.kernel`), which runs stationary
Bernoulli, one-pull-per-activation runs of Decentralized Elimination and 1-PRIVACY, against the event-driven
engine that ran them before (and still runs every other case), and the invariants of its vote log.

The two cannot share random numbers (the engine draws blocks of rewards, the kernel one reward per pull, and
settles the arms of a round lazily), so they are compared in law over independent seeds: two-sample
Kolmogorov-Smirnov tests on the stopping and consensus steps and on the number of players holding the best
arm, and means within 4 standard errors for the message and suboptimal-pull counts. Both engines were written
from the same resolutions of the spec, so agreement here is a regression test, not an independent check;
the independent one is the law against the per-pull reference loop written from the paper
(:mod:`anonbandits.reference.decentralized`), in ``test_decentralized_reference.py`` (the public functions
run the kernel there). Instances are in the hard regime (eps larger than the gaps, eta = 0.5): players finish on
different arms, vote against the best arm, restart after global eliminations (A5) and read eliminations in
the middle of a round or phase.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from anonbandits.multiagent.decentralized import algorithms, run_decentralized_elimination, run_no_sharing

MEANS = [0.6, 0.55, 0.5, 0.45]
CASES = [  # subroutine, activity, players, eps, stop, draw_only_active, sharing
    ("ser3", "uniform", 6, 0.6, "all", False, True),
    ("ser3", "skewed", 6, 0.6, "consensus", True, True),
    ("se", "skewed", 6, 0.7, "all", True, True),
    ("naive", "uniform", 6, 0.8, "consensus", False, True),
    ("median", "skewed", 4, 1.0, "all", False, True),
    ("ugapec", "uniform", 4, 0.6, "all", False, True),
    ("ser3", "skewed", 6, 0.25, "all", True, False),
    ("median", "uniform", 4, 0.5, "all", False, False),
    ("ugapec", "skewed", 4, 0.5, "all", False, False),
]
RUNS = 60


def _run(case: tuple, seed: int, *, kernel: bool, monkeypatch: pytest.MonkeyPatch):
    subroutine, activity, players, eps, stop, only_active, sharing = case
    monkeypatch.setattr(algorithms, "_kernel_applies", lambda env, per_activation: kernel)
    rng = np.random.default_rng(seed)
    kw = {"eps": eps, "subroutine": subroutine, "activity": activity, "draw_only_active": only_active}
    if sharing:
        return run_decentralized_elimination(MEANS, players, rng=rng, delta=0.25, eta=0.5, stop=stop, **kw)
    return run_no_sharing(MEANS, players, rng=rng, delta=0.3, **kw)


@pytest.mark.parametrize("case", [  # UGapEc's engine runs pull by pull: its cases take 3-5 s
    pytest.param(c, id=f"{c[0]}-{c[1]}-{c[4]}-{'doa' if c[5] else 'raw'}-{'de' if c[6] else '1p'}",
                 marks=[pytest.mark.slow] if c[0] == "ugapec" else []) for c in CASES])
def test_kernel_and_engine_have_the_same_law(case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    ker = [_run(case, s, kernel=True, monkeypatch=monkeypatch) for s in range(RUNS)]
    eng = [_run(case, 10**6 + s, kernel=False, monkeypatch=monkeypatch) for s in range(RUNS)]
    pairs = {
        "samples": ([r.samples for r in eng], [r.samples for r in ker]),
        "t_consensus": ([r.t_consensus or -1 for r in eng], [r.t_consensus or -1 for r in ker]),
        "best holders": ([int(np.sum(r.agent_arms == 0)) for r in eng], [int(np.sum(r.agent_arms == 0)) for r in ker]),
    }
    for name, (a, b) in pairs.items():
        p = stats.ks_2samp(a, b).pvalue
        assert p > 1e-3, f"{name}: engine mean {np.mean(a):.1f} vs kernel {np.mean(b):.1f} (KS p = {p:.2g})"
    for name in ("messages", "suboptimal_pulls"):
        a = np.array([getattr(r, name) for r in eng], float)
        b = np.array([getattr(r, name) for r in ker], float)
        se = np.sqrt(a.var(ddof=1) / RUNS + b.var(ddof=1) / RUNS)
        assert abs(a.mean() - b.mean()) <= 4 * se + 1e-9, (name, a.mean(), b.mean())


@pytest.mark.parametrize("subroutine", ["naive", "median", "se", "ser3", "ugapec"])
@pytest.mark.parametrize("stop", ["all", "consensus"])
def test_vote_log_invariants(subroutine: str, stop: str) -> None:
    """One vote per (player, arm); at most M per arm; an arm leaves the shared set at the step of its M-th
    vote (index order at one step, never the last arm: A4); the consensus step is the last elimination; one
    pull per step; the done curve counts players within [0, 1] and ends with all (or at consensus)."""
    eps = 1.0 if subroutine == "median" else 0.6
    for seed in range(8):
        res = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(seed), delta=0.25, eta=0.5,
                                            eps=eps, subroutine=subroutine, stop=stop)
        m, log = res.threshold, res.log
        assert res.messages == log.count == res.votes.sum() <= m * len(MEANS)
        assert np.array_equal(np.bincount(log.content.astype(int), minlength=len(MEANS)), res.votes)
        pairs = set(zip(log.sender.tolist(), log.content.astype(int).tolist(), strict=True))
        assert len(pairs) == log.count
        assert np.all(np.diff(log.time) >= 0) and (log.count == 0 or log.time.max() <= res.samples)
        assert np.all(res.votes <= m) and res.agent_pulls.sum() == res.samples
        for arm in range(len(MEANS)):
            times = np.sort(log.time[log.content == arm])
            step = res.elimination_steps[arm]
            if step >= 0:
                assert times.size == m and times[m - 1] == step
            else:  # the guard keeps the last arm (A4)
                assert times.size < m or (res.guard_fired and arm == res.recommended)
        dropped = res.elimination_steps[res.elimination_steps >= 0]
        if dropped.size == len(MEANS) - 1:
            assert res.t_consensus == dropped.max()
            assert res.recommended == int(np.flatnonzero(res.elimination_steps < 0)[0])
        else:
            assert res.t_consensus is None
        assert np.all((res.done_fraction >= 0) & (res.done_fraction <= 1))
        if stop == "consensus" and res.t_consensus is not None:
            assert res.samples == res.t_consensus
        else:  # every player holds one arm
            assert res.done_fraction[-1] == 1 and np.all(res.agent_arms >= 0)


def test_reproducible_and_truncated() -> None:
    kw = {"delta": 0.25, "eta": 0.5, "eps": 0.6, "subroutine": "ser3"}
    a = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(4), **kw)
    b = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(4), **kw)
    assert a.samples == b.samples and np.array_equal(a.log.time, b.log.time)
    assert np.array_equal(a.agent_arms, b.agent_arms) and a.suboptimal_pulls == b.suboptimal_pulls
    cut = run_decentralized_elimination(MEANS, 6, rng=np.random.default_rng(4), max_steps=a.samples // 2, **kw)
    assert cut.truncated and cut.samples == a.samples // 2 == cut.agent_pulls.sum()
    assert np.array_equal(cut.log.time, a.log.time[a.log.time <= cut.samples])  # same streams, same prefix
