"""0-PRIVACY (full sharing) of paper 002 over a k-anonymous board: the shared learner sees reward sums only.

Paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019, Sec. 5.1):
one learner, fed by every step, runs SE or SER3 at confidence delta; the active player pulls the learner's next
arm. On the anonymous channel the players do not broadcast their (arm, reward): they post it to the board
(:mod:`anonbandits.core.votes`), which releases the reward sums of the learner's arms jointly, at the end of
the first round of the learner after which *every* arm of its set has been pulled by at least C distinct
players since the last release (:func:`~anonbandits.core.votes.first_release`): one released aggregate per
arm, each over at least C players. Rounds wait in the buffer until then. The learner's test (the core's SE
boundary, :func:`~anonbandits.core.radii.se_boundary`, and :func:`~anonbandits.core.radii.se_eliminates`)
runs at each release on its released sums, every arm of its set having been pulled equally often; between
releases it cannot eliminate (it knows nothing new), so it keeps sampling its whole set. With C = 1 every
round is released at its end: the direct learner's law.

Simulation: the players of a round's pulls are i.i.d. draws of the activity distribution, the rewards
independent of them, so rounds are drawn in blocks (players and rewards as two arrays) until the release;
the rest of a block is discarded (the release row is a stopping time of the players alone). Within a round the
pulls are in index order (SER3's reshuffle of a round changes no released sum).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from anonbandits.core.radii import se_boundary, se_eliminates
from anonbandits.core.votes import Releases, first_release
from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized.environment import MeansSchedule


def run_shared_learner(
    env: MeansSchedule,
    n_agents: int,
    sample: Callable[[int, np.random.Generator], np.ndarray],
    players: np.random.Generator,
    rewards: np.random.Generator,
    ties: np.random.Generator,
    *,
    subroutine: str,
    eps: float,
    conf: float,
    se_c: float,
    C: int,
    max_steps: int,
    record: bool,
) -> dict[str, Any]:
    """One run of the shared learner over the k-anonymous board (see the module docstring).

    Returns the entries of :func:`.kernel.run_kernel`'s result that full sharing reads (``t_end``,
    ``stopped``, ``outputs``, ``local``, ``G``, ``V``, ``elim_time``, ``suboptimal``, ...) plus ``releases``
    (:class:`~anonbandits.core.votes.Releases`, ``group`` per recorded pull), ``pull_senders`` and
    ``pull_records`` (step, arm, reward of every pull; with ``record``) and ``eliminations`` ((step, arm) of the
    learner's eliminations in order). :class:`ConfigError` for a subroutine other than SE or SER3, means that
    change over time, or C above the number of players (no aggregate could ever be released).
    """
    if subroutine not in ("se", "ser3"):
        raise ConfigError(
            f"full-sharing with --channel anonymous needs subroutine se or ser3 (the shared learner "
            f"tests at each release, after whole rounds), got {subroutine!r}"
        )
    if not env.stationary:
        raise ConfigError("full-sharing with --channel anonymous needs stationary means (drift = 0, switch_at = 0)")
    if C > n_agents:
        raise ConfigError(
            f"C = {C} exceeds the {n_agents} players: the board could never release a reward sum "
            "(full sharing has no local learning to fall back on)"
        )
    k, means = env.arms, env.means
    best = means == means.max()
    c, denominator = (4.0, 2) if subroutine == "ser3" else (se_c, 1)  # SER3's (Hoeffding) radius uses 2t
    held, sums = np.ones(k, bool), np.zeros(k)
    t, tau, suboptimal = 0, 0, 0
    rel: list[tuple[int, int, int, float]] = []  # (slot, time, size, total)
    pulls: list[tuple[np.ndarray, ...]] = []  # (sender, step, arm, reward, release) of the rounds released
    used = np.zeros(n_agents, np.int64)
    eliminations: list[tuple[int, int]] = []
    truncated = False
    while held.sum() > 1:
        arms = np.flatnonzero(held)
        s, size = arms.size, max(2 * C, 8)
        who, got = np.empty((0, s), np.int64), np.empty((0, s))
        row = -1
        while row < 0 and t + who.size < max_steps:  # rounds until the board releases (or the cap)
            who = np.concatenate([who, sample(size * s, players).astype(np.int64).reshape(size, s)])
            got = np.concatenate([got, env.draw(np.broadcast_to(means[arms], (size, s)), rewards)])
            row = first_release(who, C)
            size *= 2
        n_pulls = (row + 1) * s if row >= 0 else who.size
        cut = row < 0 or t + n_pulls > max_steps  # the cap comes first: its last rounds are never released
        n_pulls = min(n_pulls, max_steps - t)
        flat_who, flat_arm = who.ravel()[:n_pulls], np.tile(arms, who.shape[0])[:n_pulls]
        used += np.bincount(flat_who, minlength=n_agents)
        suboptimal += int((~best[flat_arm]).sum())
        if record:
            group = np.full(n_pulls, -1, np.int64) if cut else np.tile(len(rel) + np.arange(s), row + 1)
            pulls.append((flat_who, t + 1 + np.arange(n_pulls), flat_arm, got.ravel()[:n_pulls], group))
        t += n_pulls
        if cut:
            truncated = True
            break
        who, got, tau = who[: row + 1], got[: row + 1], tau + row + 1
        block = got.sum(axis=0)
        sums[arms] += block
        rel += [(int(a), t, int(np.unique(who[:, j]).size), float(block[j])) for j, a in enumerate(arms)]
        # the learner's test on its released sums (the kernel's _end_round: the leader drawn among ties)
        mu = sums[arms] / tau
        tops = np.flatnonzero(mu == mu.max())
        pos = tops[0] if tops.size == 1 else tops[int(ties.integers(tops.size))]
        out = np.asarray(se_eliminates(mu[pos] - mu, se_boundary(tau, k, conf, c, denominator) / tau, eps))
        out[pos] = False
        held[arms[out]] = False
        eliminations += [(t, int(a)) for a in arms[out]]
    left = np.flatnonzero(held)
    arm = int(left[0]) if left.size == 1 else -1
    cols = (
        [np.concatenate(x) for x in zip(*pulls, strict=True)]
        if pulls
        else [np.empty(0, np.int64)] * 3 + [np.empty(0), np.empty(0, np.int64)]
    )
    slots, times, sizes, totals = (
        np.array([r[i] for r in rel], dt) for i, dt in ((0, np.int64), (1, np.int64), (2, np.int64), (3, float))
    )
    releases = Releases(slots, times, sizes, totals, cols[4])
    elim_time = np.full(k, -1, np.int64)
    for step, a in eliminations:
        elim_time[a] = step
    return dict(
        t_end=t,
        stopped=not truncated,
        outputs=np.array([arm]),
        local=used,
        G=held,
        V=np.zeros(k, np.int64),
        elim_time=elim_time,
        suboptimal=suboptimal,
        releases=releases,
        eliminations=eliminations,
        pull_senders=cols[0] if record else None,
        pull_records=(cols[1], cols[2], cols[3]) if record else None,
        t_consensus=t if not truncated else None,
        vote_sender=np.empty(0, np.int64),
        vote_time=np.empty(0, np.int64),
        vote_arm=np.empty(0, np.int64),
        guard_fired=0,
        resets=0,
        done_times=np.array([t] if not truncated else [], np.int64),
        done_counts=np.array([1] if not truncated else [], np.int64),
    )
