"""Plain per-round, per-pull Python loops for paper 003's algorithms (the literal pseudo-code).

Paper: Rio, Barlier, Colin and Soare, *Multi-Agent Best Arm Identification with Private Communications*
(ICML 2023), Algorithms 1-4 (MASE, DP-MASE with Algorithm 4a, CORRUPTED ELIMINATION with Algorithm 4b) and
the INDEPENDENT baseline of its Section 6. The slow references that the tests check the fast engines of
:mod:`anonbandits.multiagent.mase` against, and that ``benchmarks/mase_speed.py`` times. One loop iteration is
one round: an agent is drawn from P_N restricted to the agents still in the pool, it pulls every arm of its
local set one reward at a time, then applies its local elimination, votes, leaves the pool or synchronises.
"""

import bisect
import itertools
import math
from dataclasses import dataclass

import numpy as np

from anonbandits.core.radii import dpse_widths
from anonbandits.core.schedules import epoch_length
from anonbandits.multiagent.mase.model import eta_xi, voting_threshold
from anonbandits.reference import oracle


@dataclass
class ReferenceOutcome:
    """What a reference run reports; ``local_times`` and ``global_times``: the round of every local and of
    every global elimination."""

    rounds: int
    pulls: int
    recommended: int
    messages: int
    local_times: list[int]
    global_times: list[int]


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


def _loop(
    means,
    probs,
    seed: int,
    kind: str,
    conf: float,
    threshold: int | None,
    *,
    xi: float = 0.0,
    eps: float = 0.0,
    model: str = "bernoulli",
    sigma: float = 0.5,
) -> ReferenceOutcome:
    """The loop of :func:`reference_se_voting` (SE at confidence ``conf``) and, with ``kind="dp"``, of
    :func:`reference_dp_mase` (DP-SE epochs at confidence ``conf = beta``)."""
    rng = np.random.default_rng(seed)
    mu, n_agents = [float(m) for m in means], len(probs)
    k_arms = len(mu)
    local = [list(range(k_arms)) for _ in range(n_agents)]
    sums = [[0.0] * k_arms for _ in range(n_agents)]
    count, epoch = [0] * n_agents, [1] * n_agents
    votes, glob = [0] * k_arms, set(range(k_arms))
    length = [epoch_length(k_arms, 1, conf, eps) if kind == "dp" else 0] * n_agents
    pool = _Pool(probs)
    rounds = pulls = messages = 0
    local_times: list[int] = []
    global_times: list[int] = []
    while pool.members and (threshold is None or len(glob) > 1):
        n = pool.draw(rng)
        rounds += 1
        if kind == "mase" and len(local[n]) <= 1:  # Alg. 1: an agent with one arm left keeps pulling it
            pulls += len(local[n])
            continue
        count[n] += 1
        t = count[n]
        for k in local[n]:
            sums[n][k] += _reward(model, mu[k], sigma, rng)
            pulls += 1
        if kind == "dp":  # Algorithm 4a at the end of an epoch of R(e, s) activations
            if t < length[n]:
                continue
            h, c = (float(x) for x in dpse_widths(len(local[n]), epoch[n], t, conf, eps))
            noisy = {k: sums[n][k] / t + rng.laplace(0.0, 1.0 / (eps * t)) for k in local[n]}
            top = max(noisy.values())
            eliminated = [k for k in local[n] if top - noisy[k] > 2.0 * (h + c)]
        else:  # SE on the cumulative sums (Sec. 4.1, Algorithm 4b)
            width_sum = 2.0 * math.sqrt(t * max(math.log(k_arms * t * t / conf), 0.0))
            top = max(sums[n][k] for k in local[n])
            eliminated = [k for k in local[n] if top - sums[n][k] >= width_sum and top - sums[n][k] > 0]
        delivered = [k for k in eliminated if rng.random() >= xi] if kind == "ce" else eliminated
        local_times += [rounds] * len(eliminated)
        if threshold is not None:
            for k in delivered:
                votes[k] += 1
            messages += len(delivered)
        # synchronise with the global set (a no-op for MASE, whose sets follow it at once, and INDEPENDENT,
        # whose global set never changes); agents left with one arm, or none, leave the pool
        synced = [k for k in local[n] if k not in eliminated and k in glob]
        if kind != "mase" and (len(local[n]) - len(eliminated) == 1 or not synced):
            pool.remove(n)
        elif kind == "dp":  # the next epoch
            epoch[n], count[n], sums[n] = epoch[n] + 1, 0, [0.0] * k_arms
            length[n] = epoch_length(len(synced), epoch[n], conf, eps)
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


@oracle
def reference_se_voting(
    means,
    probs,
    seed: int,
    *,
    kind: str = "ce",
    eta: float = 0.9,
    xi: float = 0.0,
    beta: float = 0.5,
    delta: float = 0.05,
    model: str = "bernoulli",
    sigma: float = 0.5,
) -> ReferenceOutcome:
    """CORRUPTED ELIMINATION (``kind="ce"``), MASE Alg. 1 (``"mase"``) or INDEPENDENT (``"independent"``)."""
    conf = eta_xi(eta, xi, len(means)) if kind == "ce" else beta if kind == "mase" else delta
    threshold = None if kind == "independent" else voting_threshold(delta, conf, len(probs))
    return _loop(means, probs, seed, kind, conf, threshold, xi=xi, model=model, sigma=sigma)


@oracle
def reference_dp_mase(
    means,
    probs,
    seed: int,
    *,
    eps: float = 0.1,
    beta: float = 0.5,
    delta: float = 0.05,
    model: str = "bernoulli",
    sigma: float = 0.5,
) -> ReferenceOutcome:
    """DP-MASE (Algorithm 2 with Algorithm 4a), one round and one pull at a time."""
    return _loop(
        means, probs, seed, "dp", beta, voting_threshold(delta, beta, len(probs)), eps=eps, model=model, sigma=sigma
    )
