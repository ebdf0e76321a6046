"""Plain per-round, per-pull Python loops for paper 003's algorithms (the literal pseudo-code).

Paper: Rio, Barlier, Colin and Soare, *Multi-Agent Best Arm Identification with Private Communications*
(ICML 2023), Algorithms 1-4 (MASE, DP-MASE with Algorithm 4a, CORRUPTED ELIMINATION with Algorithm 4b) and
the INDEPENDENT baseline of its Section 6.

These are the slow references the fast engines of :mod:`anonbandits.multiagent.mase` are checked against:
``benchmarks/mase_speed.py`` times them, and the tests compare the distribution of their outcomes with the
engines' on small instances. One loop iteration is one round: an agent is drawn from P_N restricted to the
agents still in the pool, it pulls every arm of its local set one reward at a time, then applies its local
elimination, votes, leaves the pool or synchronises, exactly in the order of Algorithms 2 and 3.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from anonbandits.core.radii import dpse_widths
from anonbandits.core.schedules import epoch_length
from anonbandits.multiagent.mase.formulas import eta_xi, voting_threshold


@dataclass
class ReferenceOutcome:
    rounds: int
    pulls: int
    recommended: int
    messages: int
    local_times: list[int] = field(default_factory=list)  # round of every local elimination (SE voting)
    global_times: list[int] = field(default_factory=list)  # round of every global elimination (SE voting)


class _Pool:
    """Draws agents from P_N restricted to the agents still in the pool."""

    def __init__(self, probs: np.ndarray) -> None:
        self.probs = [float(p) for p in probs]
        self.members = list(range(len(self.probs)))
        self.cum = list(itertools.accumulate(self.probs))

    def draw(self, rng: np.random.Generator) -> int:
        i = bisect.bisect_right(self.cum, rng.random() * self.cum[-1])
        return self.members[min(i, len(self.members) - 1)]

    def remove(self, n: int) -> None:
        self.members.remove(n)
        self.cum = list(itertools.accumulate(self.probs[m] for m in self.members))


def _reward(model: str, mu: float, sigma: float, rng: np.random.Generator) -> float:
    if model == "bernoulli":
        return 1.0 if rng.random() < mu else 0.0
    return rng.normal(mu, sigma)


def reference_se_voting(means, probs, seed: int, *, kind: str = "ce", eta: float = 0.9, xi: float = 0.0,
                        beta: float = 0.5, delta: float = 0.05, model: str = "bernoulli",
                        sigma: float = 0.5) -> ReferenceOutcome:
    """CORRUPTED ELIMINATION (``kind="ce"``), MASE Alg. 1 (``"mase"``) or INDEPENDENT (``"independent"``)."""
    rng = np.random.default_rng(seed)
    mu, n_agents = [float(m) for m in means], len(probs)
    k_arms = len(mu)
    conf = eta_xi(eta, xi, k_arms) if kind == "ce" else beta if kind == "mase" else delta
    threshold = None if kind == "independent" else voting_threshold(delta, conf, n_agents)
    local = [list(range(k_arms)) for _ in range(n_agents)]
    sums = [[0.0] * k_arms for _ in range(n_agents)]
    count, votes, glob = [0] * n_agents, [0] * k_arms, set(range(k_arms))
    pool = _Pool(probs)
    rounds = pulls = messages = 0
    local_times: list[int] = []
    global_times: list[int] = []
    while pool.members and (threshold is None or len(glob) > 1):
        n = pool.draw(rng)
        rounds += 1
        if kind == "mase" and len(local[n]) <= 1:
            pulls += len(local[n])
            continue
        count[n] += 1
        t = count[n]
        for k in local[n]:
            sums[n][k] += _reward(model, mu[k], sigma, rng)
            pulls += 1
        width_sum = 2.0 * math.sqrt(t * max(math.log(k_arms * t * t / conf), 0.0))
        top = max(sums[n][k] for k in local[n])
        eliminated = [k for k in local[n] if top - sums[n][k] >= width_sum and top - sums[n][k] > 0]
        delivered = [k for k in eliminated if rng.random() >= xi] if kind == "ce" else eliminated
        local_times += [rounds] * len(eliminated)
        if threshold is not None:
            for k in delivered:
                votes[k] += 1
            messages += len(delivered)
        # Alg. 3 line 12 (CE's lazy sync; a no-op for MASE, whose sets follow the global set at once, and for
        # INDEPENDENT, whose global set never changes); CE and INDEPENDENT agents left with one arm retire
        synced = [k for k in local[n] if k not in eliminated and k in glob]
        if kind != "mase" and (len(local[n]) - len(eliminated) == 1 or not synced):
            pool.remove(n)
        local[n] = synced
        for k in eliminated:
            if threshold is not None and votes[k] >= threshold and k in glob and len(glob) > 1:
                glob.discard(k)
                global_times.append(rounds)
                if kind == "mase":  # Alg. 1: every agent loses the arm at once
                    local = [[j for j in arms if j != k] for arms in local]
    finals = [arms[0] for arms in local if len(arms) == 1]
    recommended = min(glob) if threshold is not None else max(set(finals), key=finals.count)
    return ReferenceOutcome(rounds, pulls, recommended, messages, local_times, global_times)


def reference_dp_mase(means, probs, seed: int, *, eps: float = 0.1, beta: float = 0.5, delta: float = 0.05,
                      model: str = "bernoulli", sigma: float = 0.5) -> ReferenceOutcome:
    """DP-MASE (Algorithm 2 with Algorithm 4a), one round and one pull at a time."""
    rng = np.random.default_rng(seed)
    mu, n_agents = [float(m) for m in means], len(probs)
    k_arms = len(mu)
    threshold = voting_threshold(delta, beta, n_agents)
    local = [list(range(k_arms)) for _ in range(n_agents)]
    sums = [[0.0] * k_arms for _ in range(n_agents)]
    epoch, step, votes, glob = [1] * n_agents, [0] * n_agents, [0] * k_arms, set(range(k_arms))
    length = [epoch_length(k_arms, 1, beta, eps)] * n_agents
    pool = _Pool(probs)
    rounds = pulls = messages = 0
    while len(glob) > 1 and pool.members:
        n = pool.draw(rng)
        rounds += 1
        for k in local[n]:
            sums[n][k] += _reward(model, mu[k], sigma, rng)
            pulls += 1
        step[n] += 1
        if step[n] < length[n]:
            continue
        r, e = length[n], epoch[n]
        h, c = (float(x) for x in dpse_widths(len(local[n]), e, r, beta, eps))
        noisy = {k: sums[n][k] / r + rng.laplace(0.0, 1.0 / (eps * r)) for k in local[n]}
        top = max(noisy.values())
        eliminated = [k for k in local[n] if top - noisy[k] > 2.0 * (h + c)]
        local[n] = [k for k in local[n] if k not in eliminated]
        for k in eliminated:
            votes[k] += 1
        messages += len(eliminated)
        if len(local[n]) == 1:  # retire, or start the next epoch on the synchronised set
            pool.remove(n)
        else:
            epoch[n], step[n], sums[n] = epoch[n] + 1, 0, [0.0] * k_arms
            local[n] = [k for k in local[n] if k in glob]
            if not local[n]:
                pool.remove(n)
            else:
                length[n] = epoch_length(len(local[n]), epoch[n], beta, eps)
        for k in eliminated:
            if votes[k] >= threshold and k in glob and len(glob) > 1:
                glob.discard(k)
    return ReferenceOutcome(rounds, pulls, min(glob), messages)
