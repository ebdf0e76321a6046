"""CENTRAL baseline of paper 003 (Sec. 6; spec 2.7 and A15): no privacy, raw rewards go to the server.

Paper: 003_1b4f3a9c9d577fe2.txt (Rio, Barlier, Colin, Soare, ICML 2023). Each round the active agent pulls every
arm of the global set and sends the rewards; the server runs single-agent Successive Elimination (Sec. 4.1)
at confidence delta on the pooled samples, so T does not depend on N. Every reward sent is one message
(sender = active agent, time = round, content = the reward, kind = the arm's index).
"""

from __future__ import annotations

import numpy as np

from anonbandits.core.radii import se_boundary
from anonbandits.errors import ConfigError
from anonbandits.multiagent.mase.instances import Instance
from anonbandits.multiagent.mase.result import MaseResult
from anonbandits.multiagent.messages import MessageLog

_BLOCK = 512  # rounds drawn per block


def central(instance: Instance, probs: np.ndarray, rng: np.random.Generator, *, delta: float = 0.05,
            width_c: float = 1.0, width_denominator: int = 1, max_rounds: int = 10**9,
            record: bool = True) -> MaseResult:
    """Run CENTRAL: SE on the pooled data, eliminating k when ``max_l S_l - S_k >= g(t)``.

    Rounds are drawn in blocks: per-round rewards of the arms still active, cumulated, with the SE test
    evaluated on every round of the block at once; the block is cut at its first elimination.
    """
    if not 0 < delta < 1:
        raise ConfigError(f"delta must lie strictly between 0 and 1, got {delta}")
    k = instance.arms
    active = np.ones(k, bool)
    sums = np.zeros(k)
    t = 0
    pulls = 0
    messages = MessageLog(record=record)
    global_elims: list[tuple[int, int]] = []
    arms = np.arange(k)
    while active.sum() > 1 and t < max_rounds:
        block = min(_BLOCK, max_rounds - t)
        rewards = instance.draw(rng, arms, block) * active
        cum = sums + np.cumsum(rewards, axis=0)
        rounds = t + 1 + np.arange(block)
        top = np.where(active, cum, -np.inf).max(axis=1)
        gap = top[:, None] - cum
        g = se_boundary(rounds, k, delta, width_c, width_denominator)
        cond = active & (gap >= g[:, None]) & (gap > 0)
        hits = np.flatnonzero(cond.any(axis=1))
        j = int(hits[0]) if hits.size else block - 1
        used = slice(0, j + 1)
        senders = rng.choice(probs.size, size=j + 1, p=probs)
        r_idx, a_idx = np.nonzero(np.broadcast_to(active, (j + 1, k)))
        messages.add(senders[r_idx], rounds[used][r_idx], rewards[used][r_idx, a_idx], a_idx)
        pulls += (j + 1) * int(active.sum())
        sums = cum[j]
        t = int(rounds[j])
        for arm in np.flatnonzero(cond[j]):
            global_elims.append((t, int(arm)))
        active &= ~cond[j]
    left = np.flatnonzero(active)
    recommended = int(left[np.argmax(sums[left])])
    return MaseResult(
        algorithm="central", recommended=recommended, correct=instance.is_best(recommended), rounds=t,
        pulls=pulls, messages=messages, votes=np.zeros(k, np.int64), truncated=bool(left.size > 1),
        global_eliminations=global_elims, arms=k, best=instance.best)
