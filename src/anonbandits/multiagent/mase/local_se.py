"""INDEPENDENT with every agent simulated alone in its own time, then placed on the common clock.

INDEPENDENT (paper 003, Sec. 6; spec 2.7) has no communication, so with ``stop="all"`` and sampling among the
agents still running (spec A10, A14) an agent's course depends on its own rewards only:

* **Local trajectories.** Every agent's SE run is simulated along its own activation count, all agents at once,
  until it holds one arm. With Bernoulli rewards the activations during which SE provably cannot eliminate
  anything (:func:`~anonbandits.multiagent.mase.se_engine.safe_steps`) are drawn as one Binomial sum per arm;
  the others get per-pull rewards in chunks, cut at the first elimination (the rewards after it are dropped,
  which is exact since that activation is a stopping time). No simulation windows are needed.
* **Common clock.** As in :mod:`~anonbandits.multiagent.mase.se_engine`, agent n is activated at the points of a
  Poisson process of rate ``p_n`` until it leaves, so its exit time after ``T_n`` activations is
  ``Gamma(T_n) / p_n``. The run has ``sum_n T_n`` rounds. The round of an exit is the number of activations
  of all agents up to that time: given its exit time, an agent's earlier activations are uniform order
  statistics, so the count between two consecutive exit times is a Binomial bridge.
"""

from __future__ import annotations

import numpy as np

from anonbandits.multiagent.mase.formulas import se_boundary
from anonbandits.multiagent.mase.instances import Instance
from anonbandits.multiagent.mase.result import EliminationLog
from anonbandits.multiagent.mase.se_engine import SEOutcome, SEProtocol, safe_steps
from anonbandits.multiagent.messages import MessageLog

_MIN_STAGE = 4  # shorter safe runs are scanned per pull
_CHUNK = 16  # activations per scan chunk (measured: 8 and 32 are slower)


def local_trajectories(instance: Instance, agents: int, proto: SEProtocol, rng: np.random.Generator,
                       cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's SE run alone, at most ``cap`` activations: when it dropped each arm, and its length.

    Returns ``elim`` (agents x arms: the activation in which the arm was eliminated, ``cap + 1`` if never) and
    ``steps`` (activations until one arm is left, ``cap`` if that did not happen within ``cap``).
    """
    k = instance.arms
    mu = instance.means
    bulk = instance.model == "bernoulli"
    S = np.zeros((agents, k), np.int32 if bulk else float)
    t = np.zeros(agents, np.int64)
    held = np.ones((agents, k), bool)
    elim = np.full((agents, k), cap + 1, np.int64)
    live = np.flatnonzero(held.sum(axis=1) > 1) if cap > 0 else np.empty(0, np.int64)
    while live.size:
        hk, s = held[live], S[live]
        if bulk:
            spread = np.where(hk, s, -np.inf).max(axis=1) - np.where(hk, s, np.inf).min(axis=1)
            b = np.minimum(safe_steps(spread, t[live], k, proto), cap - t[live])
            stage = b >= _MIN_STAGE
        else:
            stage = np.zeros(live.size, bool)
        if stage.any():
            ag, bb = live[stage], b[stage]
            r, c = np.nonzero(held[ag])
            S[ag[r], c] += rng.binomial(bb[r], mu[c])
            t[ag] += bb
        scan = live[~stage]
        if scan.size:
            room = np.minimum(_CHUNK, cap - t[scan])
            rows = int(room.max())
            hs = held[scan]
            if bulk:  # small integers: the same sums, less memory traffic than floats
                draws = (rng.random((scan.size, rows, k)) < mu) & hs[:, None, :]
                path = S[scan][:, None, :] + np.cumsum(draws, axis=1, dtype=np.int32)
            else:
                draws = instance.draw(rng, np.arange(k), scan.size * rows).reshape(scan.size, rows, k)
                path = S[scan][:, None, :] + np.cumsum(draws * hs[:, None, :], axis=1)
            steps = t[scan][:, None] + np.arange(1, rows + 1)
            g = se_boundary(steps, k, proto.conf, proto.width_c, proto.width_denominator)
            top = np.where(hs[:, None, :], path, path.min()).max(axis=2)
            gap = top[:, :, None] - path
            cond = hs[:, None, :] & (gap >= g[:, :, None]) & (gap > 0)
            cond &= (np.arange(rows) < room[:, None])[:, :, None]
            hit = cond.any(axis=2)
            first = np.where(hit.any(axis=1), hit.argmax(axis=1), room - 1)
            i = np.arange(scan.size)
            S[scan] = path[i, first]
            t[scan] += first + 1
            dropped = cond[i, first]
            held[scan] = hs & ~dropped
            elim[scan] = np.where(dropped, t[scan][:, None], elim[scan])
        live = live[(held[live].sum(axis=1) > 1) & (t[live] < cap)]
    steps = np.where(held.sum(axis=1) == 1, t, cap)
    return elim, steps


def place_on_clock(steps: np.ndarray, probs: np.ndarray, rng: np.random.Generator,
                   cap: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Put the agents' activations on the common clock when agent n makes ``steps[n]`` of them and leaves.

    Exit times are ``Gamma(steps) / p``. Walking through them in order, the activations that each agent still
    running has between two consecutive exit times are a Binomial bridge of its remaining ones (given its exit
    time its earlier activations are uniform on ``(0, exit)``). The walk stops at the first exit whose round
    reaches ``cap``. Returns every agent's exit round (-1 if it had not left by then), its activations by then,
    and the round count at the stop.
    """
    n = steps.size
    exit_time = rng.standard_gamma(steps.astype(float)) / probs
    order = np.argsort(exit_time, kind="stable")
    tau = exit_time[order]
    total = steps[order]
    left = total - 1  # activations before its exit not yet placed
    rank = np.full(n, -1, np.int64)
    rounds = 0  # activations placed so far
    last = 0.0
    for j in range(n):
        rest = left[j + 1:]
        if rest.size:
            placed = rng.binomial(rest, (tau[j] - last) / (tau[j + 1:] - last))
            rest -= placed
            rounds += int(placed.sum())
        rounds += 1 + int(left[j])  # the exit itself, and the exiting agent's activations not placed yet
        left[j] = 0
        rank[order[j]] = rounds
        last = tau[j]
        if rounds >= cap:
            break
    count = np.empty(n, np.int64)
    count[order] = total - 1 - left
    count[rank >= 0] = steps[rank >= 0]
    return rank, count, rounds


def independent_all(instance: Instance, probs: np.ndarray, proto: SEProtocol, rng: np.random.Generator) -> SEOutcome:
    """INDEPENDENT with ``stop="all"`` and ``sampling="active"``.

    With a ``max_rounds`` cap the run stops at the first exit whose round reaches it (``truncated`` if agents
    are still running then).
    """
    k = instance.arms
    elim, steps = local_trajectories(instance, probs.size, proto, rng, proto.max_rounds)
    rank, count, rounds = place_on_clock(steps, probs, rng, proto.max_rounds)
    held = elim > count[:, None]
    pulls = int(np.minimum(elim, count[:, None]).sum())
    finished = held.sum(axis=1) == 1
    rank[~finished] = -1  # an agent stopped by the cap has not left
    truncated = rounds >= proto.max_rounds and bool((rank < 0).any())
    # INDEPENDENT sends no messages and reports no elimination log
    return SEOutcome(rounds, pulls, np.ones(k, bool), np.zeros(k, np.int64), held, finished, rank, MessageLog(),
                     EliminationLog(), truncated=truncated)
