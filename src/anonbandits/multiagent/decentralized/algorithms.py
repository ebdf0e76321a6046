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
from dataclasses import dataclass, field

import numpy as np

from anonbandits.errors import ConfigError
from anonbandits.multiagent.decentralized.environment import (
    Environment,
    RewardSampler,
    activity_sampler,
)
from anonbandits.multiagent.decentralized.kernel import SUBROUTINES, KernelResult, run_kernel
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


def _check_common(env: Environment, n_agents: int, delta: float, eps: float, max_steps: int, per_activation: str,
                  subroutine: str, conf: float, se_c: float) -> None:
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
    if subroutine not in SUBROUTINES:
        raise ConfigError(f"subroutine must be one of {', '.join(SUBROUTINES)}, got {subroutine!r}")
    if not 0 < conf < 1:
        raise ConfigError(f"the subroutine's confidence parameter must be in (0, 1), got {conf}")
    if subroutine in ("naive", "median", "ugapec") and not eps > 0:
        raise ConfigError(f"epsilon must be > 0 for subroutine {subroutine!r}, got {eps}")
    if subroutine == "se" and not se_c >= 1:
        raise ConfigError(f"se_c must be >= 1, got {se_c}")


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


def _done_curve(res: KernelResult, learners: int, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    grid = np.unique(np.linspace(0, res.t_end, points).round().astype(np.int64))
    idx = np.searchsorted(res.done_times, grid, side="right") - 1
    padded = np.concatenate(([0], res.done_counts))
    counts = padded[idx + 1]
    return grid, counts / learners


def _result(algorithm: str, res: KernelResult, env: Environment, eps: float, n: int, threshold: int | None,
            conf: float, log: MessageLog, broadcasts: int, messages: int, tie_rng: np.random.Generator,
            samples: int, t_consensus: int | None) -> DecentralizedResult:
    good = env.eps_optimal(res.t_end, eps)
    arms = res.outputs
    rec = _recommend(arms, res.global_set, tie_rng)
    steps, frac = _done_curve(res, len(arms))
    eliminated = np.full(env.arms, -1, np.int64)
    for step, dropped in res.eliminations:
        eliminated[dropped] = step
    return DecentralizedResult(
        algorithm=algorithm, samples=int(samples), messages=int(messages), broadcasts=int(broadcasts),
        p2p_messages=int(broadcasts) * (n - 1), recommended=rec, correct=bool(rec >= 0 and good[rec]),
        found_best=bool(rec == env.best(res.t_end)), agent_arms=arms, agent_pulls=res.pulls,
        agent_correct=float(np.mean((arms >= 0) & good[np.maximum(arms, 0)])), votes=res.votes,
        threshold=threshold, local_confidence=conf, t_consensus=t_consensus, truncated=not res.stopped,
        guard_fired=res.guard_fired, suboptimal_pulls=res.suboptimal, log=log, resets=res.resets,
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
    if not 0 < eta < 1:
        raise ConfigError(f"eta must be in (0, 1), got {eta}")
    _check_common(env, n_agents, delta, eps, max_steps, per_activation, subroutine, eta, se_c)
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
    res = run_kernel(subroutine, env, n_agents, activity_sampler(activity, n_agents), players, rewards, ties,
                     eps=eps, conf=eta, se_c=se_c, threshold=m, stop_rule=stop, draw_only_active=draw_only_active,
                     max_steps=max_steps, per_activation=per_activation)
    log = MessageLog(record=record_messages)
    log.add(res.vote_sender, res.vote_time, res.vote_arm, KIND_VOTE)
    votes = int(res.vote_arm.size)
    return _result(f"decentralized-{subroutine}", res, env, eps, n_agents, m, eta, log, votes, votes, ties,
                   int(res.pulls.sum()), res.t_consensus)


def run_no_sharing(
        means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eps: float = 0.25,
        subroutine: str = "ser3", activity: str | np.ndarray = "uniform", reward: str | RewardSampler = "bernoulli",
        drift: float = 0.0, switch_at: int = 0, means_after=None, max_steps: int = DEFAULT_MAX_STEPS,
        draw_only_active: bool = False, per_activation: str = "pull", se_c: float = 4.0) -> DecentralizedResult:
    """One run of 1-PRIVACY-X (paper 002, Sec. 5.1; spec 6.1): no messages; every player runs her own
    subroutine at confidence ``delta/N``; stop when every player holds one arm (parameters as in
    :func:`run_decentralized_elimination`)."""
    env = _environment(means, reward, drift, switch_at, means_after)
    conf = delta / n_agents
    _check_common(env, n_agents, delta, eps, max_steps, per_activation, subroutine, conf, se_c)
    if draw_only_active and not env.stationary:
        raise ConfigError("draw_only_active needs stationary means (drift = 0, switch_at = 0)")
    players, rewards, ties, _ = _streams(rng)
    res = run_kernel(subroutine, env, n_agents, activity_sampler(activity, n_agents), players, rewards, ties,
                     eps=eps, conf=conf, se_c=se_c, threshold=None, stop_rule="all",
                     draw_only_active=draw_only_active, max_steps=max_steps, per_activation=per_activation)
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
    _check_common(env, n_agents, delta, eps, max_steps, "pull", subroutine, delta, se_c)
    players, rewards, ties, _ = _streams(rng)
    sampler = activity_sampler(activity, n_agents)
    # one shared learner fed by every step: the player sequence is all hers; who broadcasts is drawn after
    res = run_kernel(subroutine, env, 1, lambda size, _: np.zeros(size, np.int16), players, rewards, ties, eps=eps,
                     conf=delta, se_c=se_c, threshold=None, stop_rule="all", draw_only_active=False,
                     max_steps=max_steps, record=record_messages)
    steps = res.t_end
    log = MessageLog(record=record_messages)
    if record_messages:
        t, arm, rew = res.pull_records
        senders = sampler(t.size, players).astype(np.int64)
        log.add(senders, t, rew, KIND_REWARD + arm)
        per_player = np.bincount(senders, minlength=n_agents)
    else:
        log.count = steps
        per_player = players.multinomial(steps, activity_probabilities(n_agents, activity, skew="halves"))
    res.outputs, res.pulls = np.full(n_agents, res.outputs[0]), per_player  # every player outputs its arm
    return _result(f"full-sharing-{subroutine}", res, env, eps, n_agents, None, delta, log, steps,
                   steps * (n_agents - 1), ties, steps, res.t_end if res.stopped else None)


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
    if not 0 <= phi <= 1:
        raise ConfigError(f"phi must be in [0, 1], got {phi}")
    if not 0 < eta < 1 or not 2 - 1e-9 <= math.log(delta) / math.log(eta) <= n_agents + 1e-9:
        raise ConfigError(f"delta must lie in [eta^N, eta^2] = [{eta**n_agents:.4g}, {eta**2:.4g}], got {delta}")
    _check_common(env, n_agents, delta, eps, horizon, "pull", "ser3", eta, 4.0)
    m = vote_threshold(delta, eta, vote_rounding)
    players, rewards, ties, resets_rng = _streams(rng)
    starts = [1]
    if phi > 0:
        while True:
            nxt = starts[-1] + int(resets_rng.geometric(phi))
            if nxt > horizon:
                break
            starts.append(nxt)
    res = run_kernel("ser3", env, n_agents, activity_sampler(activity, n_agents), players, rewards, ties, eps=eps,
                     conf=eta, se_c=4.0, threshold=m, stop_rule="none", draw_only_active=False, max_steps=horizon,
                     resets=np.array(starts[1:], np.int64))
    log = MessageLog(record=record_messages)
    log.add(res.vote_sender, res.vote_time, res.vote_arm, KIND_VOTE)
    votes = int(res.vote_arm.size)
    return _result("dser4", res, env, eps, n_agents, m, eta, log, votes, votes, ties, horizon, res.t_consensus)
