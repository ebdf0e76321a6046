"""The compiled round loop of MASE, CORRUPTED ELIMINATION and INDEPENDENT: same law as literal per-pull loops
(rounds, pulls, messages, elimination rounds) and the invariants of its logs."""

import numpy as np
import pytest
from scipy import stats

from anonbandits.envs import MultiUserInstance
from anonbandits.multiagent.mase import (
    activity_probabilities,
    corrupted_elimination,
    independent,
    mase,
)
from anonbandits.multiagent.mase.se_kernel import binomial_cdfs, binomial_sum
from anonbandits.reference import mase as reference

QUICK = MultiUserInstance(np.array([0.9, 0.4, 0.3]))
EASY = MultiUserInstance(np.array([0.8, 0.5, 0.4, 0.3]))
WIDE = MultiUserInstance(np.array([0.9, 0.5, 0.3, 0.2]))


def _same_law(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if np.ptp(a) == np.ptp(b) == 0:  # a constant: both must be the same one
        assert a[0] == b[0]
        return
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3


CASES = {
    "ce-uniform": ("ce", QUICK, 8, "uniform", dict(eta=0.6, xi=0.1)),
    "ce-skewed": ("ce", WIDE, 6, "skewed", dict(eta=0.6, xi=0.05)),
    "mase": ("mase", QUICK, 6, "skewed", dict(beta=0.6)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_literal_loop_including_elimination_rounds(case):
    kind, inst, n_agents, activity, kw = CASES[case]
    probs = activity_probabilities(n_agents, activity)
    algorithm = corrupted_elimination if kind == "ce" else mase
    runs = [algorithm(inst, probs, np.random.default_rng(s), **kw) for s in range(150)]
    slow = [reference.reference_se_voting(inst.row, probs, 10_000 + s, kind=kind, **kw) for s in range(150)]
    slow = [(r.rounds, r.pulls, r.messages, r.local_times, r.global_times) for r in slow]
    fast = [
        (
            r.metrics["rounds"],
            r.metrics["samples"],
            r.info["messages"].count,
            r.info["eliminations"].time,
            [t for t, _ in r.info["global_eliminations"]],
        )
        for r in runs
    ]
    for j in range(3):  # rounds, pulls, messages
        _same_law([f[j] for f in fast], [s[j] for s in slow])
    _same_law([len(f[3]) for f in fast], [len(s[3]) for s in slow])
    _same_law([np.median(f[3]) for f in fast], [np.median(s[3]) for s in slow])
    _same_law([f[4][0] for f in fast], [s[4][0] for s in slow])  # first global elimination
    _same_law([f[4][-1] for f in fast], [s[4][-1] for s in slow])  # the last one ends the run


@pytest.mark.parametrize("kind", ["ce", "mase"])
def test_logs_are_votes_in_round_order(kind):
    """Messages are the delivered eliminations; an arm leaves the global set in the round of its M*-th vote."""
    probs = activity_probabilities(24, "skewed")
    for seed in range(5):
        if kind == "ce":
            r = corrupted_elimination(EASY, probs, np.random.default_rng(seed), eta=0.6, xi=0.1)
        else:
            r = mase(EASY, probs, np.random.default_rng(seed), beta=0.5)
        el = r.info["eliminations"]
        assert np.all(np.diff(el.time) >= 0) and el.time.max() <= r.metrics["rounds"]
        sent = np.stack([r.info["messages"].sender, r.info["messages"].time, r.info["messages"].content], axis=1)
        assert np.array_equal(sent, np.stack([el.agent, el.time, el.arm], axis=1)[el.delivered])
        assert r.info["messages"].count == int(r.info["votes"].sum()) == int(el.delivered.sum())
        assert np.array_equal(r.info["votes"], np.bincount(el.arm[el.delivered], minlength=EASY.arms))
        pairs = el.agent * EASY.arms + el.arm
        assert np.unique(pairs).size == pairs.size
        assert len(r.info["global_eliminations"]) == EASY.arms - 1 and r.metrics["recommended"] == 0
        assert r.info["global_eliminations"][-1][0] == r.metrics["rounds"]
        for when, arm in r.info["global_eliminations"]:
            times = el.time[el.delivered & (el.arm == arm)]
            assert np.sum(times < when) < r.metrics["vote_threshold"] <= np.sum(times <= when)
            if kind == "mase":  # Alg. 1: every agent loses the arm at once, so nobody votes on it afterwards
                assert times.max() == when


def test_independent_exit_rounds_and_gaussian_rewards():
    probs = activity_probabilities(6, "skewed")
    for seed in range(5):
        r = independent(QUICK, probs, np.random.default_rng(seed))
        exits = r.info["exit_rounds"]
        assert exits.size == 6 and np.unique(exits).size == 6 and exits.max() == r.metrics["rounds"]
    inst = MultiUserInstance(np.array([1.0, 0.6, 0.5]), "gaussian-unclipped", 0.5)
    probs = activity_probabilities(4)
    fast = [independent(inst, probs, np.random.default_rng(s)) for s in range(60)]
    slow = [
        reference.reference_se_voting(inst.row, probs, 10_000 + s, kind="independent", model="gaussian")
        for s in range(60)
    ]
    _same_law([r.metrics["rounds"] for r in fast], [r.rounds for r in slow])
    _same_law([r.metrics["samples"] for r in fast], [r.pulls for r in slow])


def test_caps_stop_at_exactly_max_rounds():
    probs = activity_probabilities(8)
    runs = [
        independent(QUICK, probs, np.random.default_rng(0), max_rounds=300),
        corrupted_elimination(EASY, probs, np.random.default_rng(0), eta=0.6, max_rounds=300),
        mase(EASY, probs, np.random.default_rng(0), max_rounds=300),
    ]
    for r in runs:
        assert r.metrics["truncated"] and not r.metrics["stalled"] and r.metrics["rounds"] == 300
    assert np.all(runs[0].info["exit_rounds"] <= 300)


@pytest.mark.parametrize("n, p", [(1, 0.3), (5, 0.5), (37, 0.3), (64, 0.9), (64, 0.05), (200, 0.7)])
def test_safe_stretch_sums_are_binomial(n, p):
    """The sums drawn at the end of a safe stretch (tabulated inversion up to 64 pulls, then rng.binomial)."""
    mu = np.array([p, 0.0, 1.0])
    cdf = binomial_cdfs(mu, 64)
    rng = np.random.default_rng(n)
    draws = np.array([binomial_sum(rng, p, cdf, 0, n, 64) for _ in range(20_000)])
    observed = np.bincount(draws, minlength=n + 1)
    expected = stats.binom.pmf(np.arange(n + 1), n, p) * draws.size
    keep = expected >= 5  # chi-square on the cells with enough mass, the tails pooled
    f_obs = np.append(observed[keep], observed[~keep].sum())
    f_exp = np.append(expected[keep], draws.size - expected[keep].sum())
    assert stats.chisquare(f_obs, f_exp).pvalue > 1e-3
    assert binomial_sum(rng, 0.0, cdf, 1, n, 64) == 0 and binomial_sum(rng, 1.0, cdf, 2, n, 64) == n


def test_stretch_sums_beyond_the_tables_are_numpys_draws():
    """Beyond the tables the sum is rng.binomial's draw itself: same values, same generator state after."""
    cdf = binomial_cdfs(np.array([0.3]), 64)
    ns, ps = np.random.default_rng(1).integers(65, 5000, 500), np.random.default_rng(2).random(500)
    ours, theirs = np.random.default_rng(7), np.random.default_rng(7)
    mine = [binomial_sum(ours, p, cdf, 0, n, 64) for n, p in zip(ns, ps, strict=True)]
    assert mine == [theirs.binomial(n, p) for n, p in zip(ns, ps, strict=True)]
    assert ours.random() == theirs.random()
