"""INDEPENDENT's window-free path (agents simulated alone, then placed on the common clock) against the window
engine and the plain per-pull loop: same law of rounds, pulls and exit rounds."""

import numpy as np
from scipy import stats

from anonbandits.multiagent.mase import Instance, activity_probabilities, independent
from anonbandits.multiagent.mase.local_se import independent_all, local_trajectories, place_on_clock
from anonbandits.multiagent.mase.se_engine import SEProtocol, run_se_agents

QUICK = Instance(np.array([0.9, 0.4, 0.3]))
PROTO = SEProtocol(conf=0.05, threshold=None, sync="none", retire=True, stop="all")


def _same_law(a, b):
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert stats.ttest_ind(a, b, equal_var=False).pvalue > 1e-3


def test_exit_rounds_match_the_window_engine():
    """Skewed activity makes the exit order depend on the clock: first, median and last exit rounds agree."""
    probs = activity_probabilities(6, "skewed")
    fast = [independent_all(QUICK, probs, PROTO, np.random.default_rng(s)) for s in range(150)]
    slow = [run_se_agents(QUICK, probs, PROTO, np.random.default_rng(10_000 + s), record=False) for s in range(150)]
    for stat in (np.min, np.median, np.max):
        _same_law([stat(o.exit_rounds) for o in fast], [stat(o.exit_rounds) for o in slow])
    _same_law([o.pulls for o in fast], [o.pulls for o in slow])
    for o in fast:
        assert o.exit_rounds.max() == o.rounds and np.unique(o.exit_rounds).size == o.exit_rounds.size


def test_gaussian_independent_matches_per_pull_reference(reference):
    inst = Instance(np.array([1.0, 0.6, 0.5]), "gaussian", 0.5)
    probs = activity_probabilities(4)
    fast = [independent(inst, probs, np.random.default_rng(s)) for s in range(60)]
    slow = [reference.reference_se_voting(inst.means, probs, 10_000 + s, kind="independent", model="gaussian")
            for s in range(60)]
    _same_law([r.rounds for r in fast], [r.rounds for r in slow])
    _same_law([r.pulls for r in fast], [r.pulls for r in slow])


def test_local_trajectories_drop_arms_in_order_and_stop_at_one_arm():
    elim, steps = local_trajectories(QUICK, 20, PROTO, np.random.default_rng(0), 10**9)
    assert np.all((elim > steps[:, None]).sum(axis=1) == 1)
    assert np.all(elim.min(axis=1) >= 1) and np.all(np.sort(elim, axis=1)[:, -2] == steps)


def test_clock_bridge_counts_each_agent_once():
    """With one agent the rounds are its activations; with many, ranks are distinct and end at the total."""
    rng = np.random.default_rng(3)
    steps = np.array([5, 9, 1, 30])
    rank, count, rounds = place_on_clock(steps, np.full(4, 0.25), rng, 10**9)
    assert rounds == steps.sum() and np.array_equal(count, steps) and sorted(rank)[-1] == rounds
    assert np.unique(rank).size == 4 and np.all(rank >= steps)


def test_cap_truncates_at_an_exit():
    probs = activity_probabilities(8)
    r = independent(QUICK, probs, np.random.default_rng(0), max_rounds=300)
    assert r.truncated and r.rounds >= 300 and np.all(r.exit_rounds <= r.rounds)
