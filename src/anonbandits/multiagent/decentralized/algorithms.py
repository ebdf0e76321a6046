"""One run of each algorithm of paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed
Bandits", ICML 2019; 002_a84f5dc1d354d2b6.txt), as plain functions returning a :class:`DecentralizedResult`.

* :func:`run_decentralized_elimination`: DECENTRALIZED ELIMINATION (Sec. 3.2, Algorithm 2; spec 4-5) with any
  Arm Selection subroutine (naive, median, se, ser3, ugapec) run at confidence ``1 - eta`` by every player,
  and a vote threshold ``M = ceil(log(delta)/log(eta))``.
* :func:`run_no_sharing`: 1-PRIVACY-X (Sec. 5.1; spec 6.1): every player alone at confidence ``delta/N``.
* :func:`run_full_sharing`: 0-PRIVACY-X (Sec. 5.1; spec 6.2): one shared learner at confidence ``delta``, the
  active player broadcasting (arm, reward) at every step.
* :func:`run_dser4`: DSER4 (Sec. 4, Theorem 4; spec 5.5, A18): decentralized SER3 with global resets of
  probability ``phi`` per step over a horizon, for non-stationary rewards.

Messages are exposed in a :class:`~anonbandits.multiagent.messages.MessageLog`: a vote of DE is one message
(``kind`` :data:`KIND_VOTE`, ``content`` the arm index); a broadcast of 0-PRIVACY is one message
(``kind = KIND_REWARD + arm``, ``content`` the reward), since a log entry holds one number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized.clock import ActivationClock, IdentityClock
from anonbandits.multiagent.decentralized.engine import Engine, EngineResult
from anonbandits.multiagent.decentralized.environment import (
    Environment,
    RewardSampler,
    activity_sampler,
)
from anonbandits.multiagent.decentralized.kernel import MAX_ARMS, run_kernel
from anonbandits.multiagent.decentralized.subroutines import Subroutine, make_subroutine
from anonbandits.multiagent.messages import MessageLog
from anonbandits.multiagent.shared import activity_probabilities, vote_threshold

KIND_VOTE = 0
KIND_REWARD = 1
STOP_RULES = ("all", "consensus")
PER_ACTIVATION = ("pull", "round")
DEFAULT_MAX_STEPS = 10**8


@dataclass(frozen=True)
class DecentralizedResult:
    """Outcome of one run.

    ``samples`` is the sample complexity: global steps (pulls, all players) until the stopping rule fired
    (raw steps of finished players excluded with ``draw_only_active``); ``messages`` follows the paper's
    convention (spec A11): votes for DE, ``(N-1)`` per step for 0-PRIVACY, 0 for 1-PRIVACY; ``broadcasts`` and
    ``p2p_messages = broadcasts * (N-1)`` are given for every algorithm. ``recommended`` is the consensus arm
    when the shared set is a singleton, else the most common of the players' arms; ``correct`` says whether it
    is eps-optimal at the stopping step (A9), ``found_best`` whether it is the best arm. Per player:
    ``agent_arms`` (-1: no single arm yet) and ``agent_pulls``; ``elimination_steps``: the raw global step at
    which each arm left the shared set (-1: never; last segment for DSER4).
    """

    algorithm: str
    samples: int
    messages: int
    broadcasts: int
    p2p_messages: int
    recommended: int
    correct: bool
    found_best: bool
    agent_arms: np.ndarray
    agent_pulls: np.ndarray
    agent_correct: float
    votes: np.ndarray
    threshold: int | None
    local_confidence: float
    t_consensus: int | None
    truncated: bool
    guard_fired: int
    suboptimal_pulls: int
    log: MessageLog
    resets: int = 0
    elimination_steps: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    done_steps: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    done_fraction: np.ndarray = field(default_factory=lambda: np.empty(0))

    def metrics(self) -> dict[str, float | int | bool]:
        """The scalar results (the columns of a results table)."""
        return {"samples": self.samples, "messages": self.messages, "broadcasts": self.broadcasts,
                "p2p_messages": self.p2p_messages, "recommended": self.recommended, "correct": self.correct,
                "found_best": self.found_best, "agents_correct": self.agent_correct,
                "threshold": -1 if self.threshold is None else self.threshold,
                "t_consensus": -1 if self.t_consensus is None else self.t_consensus,
                "truncated": self.truncated, "suboptimal_pulls": self.suboptimal_pulls, "resets": self.resets,
                "guard_fired": self.guard_fired}


def _environment(means, reward, drift: float, switch_at: int, means_after) -> Environment:
    if isinstance(means, Environment):
        return means
    return Environment(np.asarray(means, dtype=float), reward, drift, int(switch_at),
                       None if means_after is None else np.asarray(means_after, dtype=float))


def _check_common(n_agents: int, delta: float, eps: float, max_steps: int, per_activation: str,
                  subroutine: str) -> None:
    if int(n_agents) != n_agents or n_agents < 1:
        raise ConfigError(f"agents must be a positive integer, got {n_agents}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta must be in (0, 1), got {delta}")
    if not 0 <= eps <= 1:
        raise ConfigError(f"epsilon must be in [0, 1] (0 only for se and ser3), got {eps}")
    if max_steps < 1:
        raise ConfigError(f"max_steps must be >= 1, got {max_steps}")
    if per_activation not in PER_ACTIVATION:
        raise ConfigError(f"per_activation must be one of {', '.join(PER_ACTIVATION)}, got {per_activation!r}")
    if per_activation == "round" and subroutine == "ugapec":
        raise ConfigError("per_activation 'round' needs a round-based subroutine, not ugapec")


def _round_blocks(env: Environment, subroutine: str) -> bool:
    """Whether blocks must stop at round ends: means change over time, or the SE/SER3 lookahead is
    unavailable (rewards not known to lie in [0, 1])."""
    return not (env.stationary and (env.bounded or subroutine in ("naive", "median")))


def _kernel_applies(env: Environment, per_activation: str) -> bool:
    """Stationary Bernoulli rewards with one pull per activation (the paper's setting) run on the compiled
    per-step kernel (:mod:`.kernel`); the event-driven engine covers the rest."""
    return (env.stationary and env.reward == "bernoulli" and per_activation == "pull"
            and env.arms <= MAX_ARMS)


def _simulate(subroutine: str, sub: Subroutine, env: Environment, n_agents: int, activity: str | np.ndarray,
              streams: tuple[np.random.Generator, ...], *, eps: float, conf: float, se_c: float,
              threshold: int | None, per_activation: str, stop: str, draw_only_active: bool,
              max_steps: int) -> tuple[EngineResult, ActivationClock | None]:
    """One run with the streams (players, rewards, ties) of spec A20; returns the result and the activation
    clock (``None`` on the kernel, see :func:`_kernel_applies`)."""
    players, rewards, ties = streams
    if _kernel_applies(env, per_activation):
        res = run_kernel(subroutine, env.means, n_agents, activity_sampler(activity, n_agents), players, rewards,
                         ties, eps=eps, conf=conf, se_c=se_c, ell=getattr(sub, "ell", 0), threshold=threshold,
                         stop_rule=stop, draw_only_active=draw_only_active, max_steps=max_steps)
        return res, None
    clock = ActivationClock(activity_sampler(activity, n_agents), n_agents, players, max_steps)
    res = Engine(sub, n_agents, clock, env, rewards, ties, threshold=threshold, per_activation=per_activation,
                 end=max_steps, stop_rule=stop, draw_only_active=draw_only_active).run()
    return res, clock


def _streams(rng: np.random.Generator) -> tuple[np.random.Generator, ...]:
    """Independent streams: player draws, rewards, shuffles/tie-breaks, resets (spec A20)."""
    return tuple(rng.spawn(4))


def _recommend(arms: np.ndarray, global_set: np.ndarray, rng: np.random.Generator) -> int:
    if global_set.sum() == 1:
        return int(np.flatnonzero(global_set)[0])
    held = arms[arms >= 0]
    if not held.size:
        return -1
    counts = np.bincount(held, minlength=global_set.size)
    top = np.flatnonzero(counts == counts.max())
    return int(rng.choice(top))


def _done_curve(res: EngineResult, learners: int, start: int, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    grid = np.unique(np.linspace(start - 1, res.t_end, points).round().astype(np.int64))
    idx = np.searchsorted(res.done_times, grid, side="right") - 1
    padded = np.concatenate(([0], res.done_counts))
    counts = padded[idx + 1]
    return grid, counts / learners


def _compress(clock, res: EngineResult, times: np.ndarray, n: int) -> np.ndarray:
    """Raw steps -> steps of the process without finished players (draw_only_active)."""
    ids = np.arange(n)
    out = np.empty(times.size, np.int64)
    for i in range(0, times.size, 256):
        chunk = times[i:i + 256]
        counts = clock.count_upto(ids[None, :], chunk[:, None])
        out[i:i + 256] = np.minimum(counts, res.done_local[None, :]).sum(axis=1)
    return out


def _result(algorithm: str, res: EngineResult, env: Environment, eps: float, n: int, threshold: int | None,
            conf: float, log: MessageLog, broadcasts: int, messages: int, tie_rng: np.random.Generator,
            samples: int, t_consensus: int | None, resets: int = 0,
            curve: tuple[np.ndarray, np.ndarray] | None = None) -> DecentralizedResult:
    good = env.eps_optimal(res.t_end, eps)
    arms = res.outputs
    rec = _recommend(arms, res.global_set, tie_rng)
    steps, frac = curve if curve is not None else _done_curve(res, len(arms), 1)
    eliminated = np.full(env.arms, -1, np.int64)
    for step, dropped in res.eliminations:
        eliminated[dropped] = step
    return DecentralizedResult(
        algorithm=algorithm, samples=int(samples), messages=int(messages), broadcasts=int(broadcasts),
        p2p_messages=int(broadcasts) * (n - 1), recommended=rec, correct=bool(rec >= 0 and good[rec]),
        found_best=bool(rec == env.best(res.t_end)), agent_arms=arms, agent_pulls=res.pulls,
        agent_correct=float(np.mean((arms >= 0) & good[np.maximum(arms, 0)])), votes=res.votes,
        threshold=threshold, local_confidence=conf, t_consensus=t_consensus, truncated=not res.stopped,
        guard_fired=res.guard_fired, suboptimal_pulls=res.suboptimal, log=log, resets=resets,
        elimination_steps=eliminated, done_steps=steps, done_fraction=frac)


def run_decentralized_elimination(
        means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eta: float = 0.9,
        eps: float = 0.25, subroutine: str = "ser3", activity: str | np.ndarray = "uniform",
        reward: str | RewardSampler = "bernoulli", drift: float = 0.0, switch_at: int = 0,
        means_after=None, vote_rounding: str = "ceil", max_steps: int = DEFAULT_MAX_STEPS,
        draw_only_active: bool = False, stop: str = "all", per_activation: str = "pull", se_c: float = 4.0,
        record_messages: bool = True) -> DecentralizedResult:
    """One run of DECENTRALIZED ELIMINATION (paper 002, Algorithm 2; spec 4.4).

    Parameters
    ----------
    means : arm means (or an :class:`Environment`, which then overrides reward/drift/switch arguments).
    n_agents : number of players N.
    rng : the run's generator (split into independent streams for players, rewards, tie-breaks).
    delta, eta : global failure probability and privacy level; ``delta`` must lie in ``[eta^N, eta^2]``, i.e.
        ``2 <= M <= N`` (spec 4.2).
    eps : approximation factor (0 allowed for se/ser3: exact best-arm identification).
    subroutine : ``naive``, ``median``, ``se``, ``ser3`` or ``ugapec``, run by each player at confidence 1-eta.
    activity : ``uniform``, ``skewed`` (Problem 2) or a probability vector ``P_x``.
    reward : reward model name or a :data:`RewardSampler`.
    drift, switch_at, means_after : non-stationary means (see :class:`Environment`).
    vote_rounding : ``ceil`` (default, A1) or ``floor`` (the paper's M = 28).
    max_steps : cap on global steps (``truncated`` when hit).
    draw_only_active : finished players leave the pool for good (A7 option; paper 003's convention).
    stop : ``all`` (every player holds one arm; the paper's rule, A6) or ``consensus`` (shared set singleton).
    per_activation : ``pull`` (one pull per activation, paper 002) or ``round`` (one subroutine round).
    se_c : constant c of the SE radius ``sqrt(log(c K r^2/conf)/r)``.
    record_messages : keep every vote in the log (else only the count).

    Examples
    --------
    Paper 003's reading of the Féraud et al. baseline (its ``feraud``: one SE round per activation, c = 1, no
    eps slack, finished players leave, stop at consensus; docs/multi-agent-bai.md compares the two):

    >>> res = run_decentralized_elimination([0.7, 0.5, 0.3] + [0.1] * 7, 32, rng=np.random.default_rng(0),
    ...                                     delta=0.05, eta=0.9, eps=0.0, subroutine="se", se_c=1.0,
    ...                                     draw_only_active=True, stop="consensus", per_activation="round")
    >>> int(res.recommended), res.threshold
    (0, 29)
    """
    env = _environment(means, reward, drift, switch_at, means_after)
    _check_common(n_agents, delta, eps, max_steps, per_activation, subroutine)
    if not 0 < eta < 1:
        raise ConfigError(f"eta must be in (0, 1), got {eta}")
    ratio = math.log(delta) / math.log(eta)
    if ratio < 2 - 1e-9:
        raise ConfigError(f"delta must be <= eta^2 = {eta**2:.4g} (M >= 2 votes), got delta = {delta}")
    if ratio > n_agents + 1e-9:
        raise ConfigError(f"delta must be >= eta^N = {eta**n_agents:.4g} (M <= N = {n_agents} players), "
                          f"got delta = {delta}")
    if stop not in STOP_RULES:
        raise ConfigError(f"stop must be one of {', '.join(STOP_RULES)}, got {stop!r}")
    if draw_only_active and not env.stationary:
        raise ConfigError("draw_only_active needs stationary means (drift = 0, switch_at = 0)")
    m = vote_threshold(delta, eta, vote_rounding)
    players, rewards, ties, _ = _streams(rng)
    sub = make_subroutine(subroutine, env.arms, eps, eta, round_blocks=_round_blocks(env, subroutine), se_c=se_c)
    res, clock = _simulate(subroutine, sub, env, n_agents, activity, (players, rewards, ties), eps=eps, conf=eta,
                           se_c=se_c, threshold=m, per_activation=per_activation, stop=stop,
                           draw_only_active=draw_only_active, max_steps=max_steps)
    vote_time, samples, t_cons = res.vote_time, int(res.pulls.sum()), res.t_consensus
    if draw_only_active and clock is not None:  # the kernel's vote steps already leave out finished players' draws
        vote_time = _compress(clock, res, res.vote_time, n_agents)
        if t_cons is not None:
            t_cons = int(_compress(clock, res, np.array([t_cons]), n_agents)[0])
    log = MessageLog(record=record_messages)
    log.add(res.vote_sender, vote_time, res.vote_arm, KIND_VOTE)
    votes = int(res.votes.sum())
    return _result(f"decentralized-{subroutine}", res, env, eps, n_agents, m, eta, log, votes, votes, ties,
                   samples, t_cons)


def run_no_sharing(
        means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eps: float = 0.25,
        subroutine: str = "ser3", activity: str | np.ndarray = "uniform", reward: str | RewardSampler = "bernoulli",
        drift: float = 0.0, switch_at: int = 0, means_after=None, max_steps: int = DEFAULT_MAX_STEPS,
        draw_only_active: bool = False, per_activation: str = "pull", se_c: float = 4.0) -> DecentralizedResult:
    """One run of 1-PRIVACY-X (paper 002, Sec. 5.1; spec 6.1): no messages; every player runs her own
    subroutine at confidence ``delta/N``; stop when every player holds one arm (parameters as in
    :func:`run_decentralized_elimination`)."""
    env = _environment(means, reward, drift, switch_at, means_after)
    _check_common(n_agents, delta, eps, max_steps, per_activation, subroutine)
    if draw_only_active and not env.stationary:
        raise ConfigError("draw_only_active needs stationary means (drift = 0, switch_at = 0)")
    conf = delta / n_agents
    players, rewards, ties, _ = _streams(rng)
    sub = make_subroutine(subroutine, env.arms, eps, conf, round_blocks=_round_blocks(env, subroutine), se_c=se_c)
    res, _ = _simulate(subroutine, sub, env, n_agents, activity, (players, rewards, ties), eps=eps, conf=conf,
                       se_c=se_c, threshold=None, per_activation=per_activation, stop="all",
                       draw_only_active=draw_only_active, max_steps=max_steps)
    return _result(f"no-sharing-{subroutine}", res, env, eps, n_agents, None, conf, MessageLog(), 0, 0, ties,
                   int(res.pulls.sum()), None)


def run_full_sharing(
        means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eps: float = 0.25,
        subroutine: str = "ser3", activity: str | np.ndarray = "uniform", reward: str | RewardSampler = "bernoulli",
        drift: float = 0.0, switch_at: int = 0, means_after=None, max_steps: int = DEFAULT_MAX_STEPS,
        se_c: float = 4.0, record_messages: bool = True) -> DecentralizedResult:
    """One run of 0-PRIVACY-X (paper 002, Sec. 5.1; spec 6.2): one subroutine at confidence ``delta`` fed by
    every step; the active player broadcasts (arm, reward), ``N-1`` point-to-point messages per step."""
    env = _environment(means, reward, drift, switch_at, means_after)
    _check_common(n_agents, delta, eps, max_steps, "pull", subroutine)
    players, rewards, ties, _ = _streams(rng)
    sampler = activity_sampler(activity, n_agents)
    sub = make_subroutine(subroutine, env.arms, eps, delta,
                          round_blocks=_round_blocks(env, subroutine), se_c=se_c)
    res = Engine(sub, 1, IdentityClock(max_steps), env, rewards, ties, threshold=None, end=max_steps,
                 stop_rule="all", record_pulls=record_messages).run()
    steps = res.t_end
    curve = _done_curve(res, 1, 1)
    log = MessageLog(record=record_messages)
    if record_messages:
        t, arm, rew = res.pull_records
        senders = sampler(t.size, players).astype(np.int64)
        log.add(senders, t, rew, KIND_REWARD + arm)
        per_player = np.bincount(senders, minlength=n_agents)
    else:
        log.count = steps
        per_player = players.multinomial(steps, activity_probabilities(n_agents, activity, skew="halves"))
    # every player outputs the shared learner's arm
    res = replace(res, outputs=np.full(n_agents, res.outputs[0]), pulls=per_player)
    return _result(f"full-sharing-{subroutine}", res, env, eps, n_agents, None, delta, log, steps,
                   steps * (n_agents - 1), ties, steps, res.t_end if res.stopped else None, curve=curve)


def run_dser4(
        means, n_agents: int, *, rng: np.random.Generator, horizon: int, phi: float, delta: float = 0.05,
        eta: float = 0.9, eps: float = 0.25, activity: str | np.ndarray = "uniform",
        reward: str | RewardSampler = "bernoulli", drift: float = 0.0, switch_at: int = 0, means_after=None,
        vote_rounding: str = "ceil", record_messages: bool = True) -> DecentralizedResult:
    """One run of DSER4 (paper 002, Sec. 4, Theorem 4; spec 5.5 and A18): decentralized SER3 over exactly
    ``horizon`` global steps; before each step, with probability ``phi`` (one shared draw), a global reset
    clears the board and restarts every player's SER3 (no message is counted for a reset). Players holding one
    arm keep playing it. ``suboptimal_pulls`` counts plays of arms that are not the best at their step,
    ``resets`` the resets; the recommendation is read at the horizon. ``phi = 0`` gives decentralized SER3
    without resets and without stopping rule."""
    env = _environment(means, reward, drift, switch_at, means_after)
    _check_common(n_agents, delta, eps, horizon, "pull", "ser3")
    if not 0 <= phi <= 1:
        raise ConfigError(f"phi must be in [0, 1], got {phi}")
    if not 0 < eta < 1 or not 2 - 1e-9 <= math.log(delta) / math.log(eta) <= n_agents + 1e-9:
        raise ConfigError(f"delta must lie in [eta^N, eta^2] = [{eta**n_agents:.4g}, {eta**2:.4g}], got {delta}")
    m = vote_threshold(delta, eta, vote_rounding)
    players, rewards, ties, resets_rng = _streams(rng)
    clock = ActivationClock(activity_sampler(activity, n_agents), n_agents, players, horizon)
    starts = [1]
    if phi > 0:
        while True:
            nxt = starts[-1] + int(resets_rng.geometric(phi))
            if nxt > horizon:
                break
            starts.append(nxt)
    log = MessageLog(record=record_messages)
    votes = suboptimal = guard = 0
    curve_t, curve_f = [], []
    for i, first in enumerate(starts):
        last = starts[i + 1] - 1 if i + 1 < len(starts) else horizon
        sub = make_subroutine("ser3", env.arms, eps, eta, round_blocks=_round_blocks(env, "ser3"))
        res = Engine(sub, n_agents, clock, env, rewards, ties, threshold=m, start=first, end=last,
                     stop_rule=None).run()
        log.add(res.vote_sender, res.vote_time, res.vote_arm, KIND_VOTE)
        votes += int(res.votes.sum())
        suboptimal += res.suboptimal
        guard += res.guard_fired
        steps, frac = _done_curve(res, n_agents, first, points=max(2, 200 // len(starts)))
        curve_t.append(steps)
        curve_f.append(frac)
    res.suboptimal, res.guard_fired = suboptimal, guard
    return _result("dser4", res, env, eps, n_agents, m, eta, log, votes, votes, ties, horizon,
                   res.t_consensus, resets=len(starts) - 1,
                   curve=(np.concatenate(curve_t), np.concatenate(curve_f)))
