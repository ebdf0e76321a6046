"""One run of each algorithm of paper 002 (Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed
Bandits", ICML 2019), one public function each over the shared kernel (:mod:`.kernel`), each returning the
:class:`~anonbandits.results.Result` of every algorithm (the per-player and per-arm data in its ``info``).

* :func:`run_decentralized_elimination`: DECENTRALIZED ELIMINATION (Sec. 3.2, Algorithm 2; its instantiations
  with SE, SER3 and UGapEc of Sec. 3-5) with any Arm Selection subroutine of Sec. 3.1 (naive, median, se, ser3,
  ugapec) run at confidence ``1 - eta`` by every player, and a vote threshold ``M = ceil(log(delta)/log(eta))``.
* :func:`run_no_sharing`: 1-PRIVACY-X (Sec. 5.1): every player alone at confidence ``delta/N``.
* :func:`run_full_sharing`: 0-PRIVACY-X (Sec. 5.1): one shared learner at confidence ``delta``, the active player
  broadcasting (arm, reward) at every step.
* :func:`run_dser4`: DSER4 (Sec. 4, Theorem 4): decentralized SER3 with global resets of probability ``phi``
  per step over a horizon, for non-stationary rewards (the paper runs no experiment with it: the reset
  mechanics, one shared Bernoulli(phi) draw per step and no stopping rule, are this library's reading).

Messages are exposed in a :class:`~anonbandits.multiagent.shared.MessageLog`: a vote of DE is one message
(``kind`` :data:`KIND_VOTE`, ``content`` the arm index); a broadcast of 0-PRIVACY is one message
(``kind = KIND_REWARD + arm``, ``content`` the reward), since a log entry holds one number.

The registry entries (:data:`ALGORITHMS`): ``decentralized-elimination`` (``--subroutine ser4`` is DSER4, run for
``--horizon`` steps with global resets of probability ``--phi``), ``no-sharing`` and ``full-sharing``; their
columns are the ``metrics`` of the functions' results (the registry's results leave out their ``info``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from anonbandits._deprecated import moved
from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.core.indices import vote_ratio
from anonbandits.core.limits import MAX_INSTANCE_CELLS, check_size
from anonbandits.core.votes import Releases, anonymous_threshold, board_releases
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.envs.means_file import shared_means
from anonbandits.envs.rewards import BOUNDED_MODELS, REWARD_MODELS, parse_means
from anonbandits.errors import ConfigError, require
from anonbandits.multiagent.decentralized.anonymous_sharing import run_shared_learner
from anonbandits.multiagent.decentralized.environment import MeansSchedule, RewardSampler, activity_sampler
from anonbandits.multiagent.decentralized.kernel import SUBROUTINES, Settings, run_kernel
from anonbandits.multiagent.shared import (
    ACTIVITIES,
    CHANNEL_PARAMS,
    VOTE_ROUNDINGS,
    MessageLog,
    _activity_probabilities,
    board_size,
    vote_threshold,
)
from anonbandits.results import Result
from anonbandits.spec import AlgorithmSpec, Param, agent_means
from anonbandits.spec import parse_bool as flag
from anonbandits.validation import BOOL, RULES, VECTOR, Rule, validated

KIND_VOTE = 0
KIND_REWARD = 1
#: ``DecentralizedResult`` (a subclass of :class:`~anonbandits.results.Result` until this release) is the plain
#: ``Result`` now, the per-player and per-arm data in its ``info``; the old name is found for one more release.
__getattr__ = moved(
    __name__,
    {},
    {"DecentralizedResult": (Result, "anonbandits.results.Result (the per-player and per-arm data are in its info)")},
)
STOP_RULES = ("all", "consensus")
PER_ACTIVATION = ("pull", "round")
DEFAULT_MAX_STEPS = 10**8


@filled_dataclass(frozen=True, kw_only=True)
class Options:
    """The ``**options`` of the run functions (see :func:`run_decentralized_elimination`).

    Parameters
    ----------
    activity : str or numpy.ndarray, optional
        ``uniform`` (default; Problem 1 of Sec. 5.1), ``skewed`` (Problem 2) or a probability vector ``P_x``.
    reward : str or RewardSampler, optional
        A reward model name (default ``bernoulli``) or a ``RewardSampler``.
    drift, switch_at, means_after : optional
        Non-stationary means (:class:`~.environment.MeansSchedule`; Problem 3 of Sec. 5.1 is ``drift = 1e-5``).
    max_steps : int, optional
        Cap on global steps (``truncated`` when hit; default 10^8).
    per_activation : str, optional
        ``pull`` (one pull per activation, the paper's Algorithm 1) or ``round`` (one subroutine round).
    se_c : float, optional
        The constant c of the SE radius ``sqrt(log(c K r^2/conf)/r)`` (default 4).
    stop : str, optional
        ``all`` (every player holds one arm: Algorithm 1's rule) or ``consensus`` (the shared set is one arm).
    draw_only_active : bool, optional
        Finished players leave the pool for good (default ``False``: Algorithm 1 draws every player).

    {{refs_paper002}}

    Examples
    --------
    >>> Options(stop="consensus").max_steps
    100000000
    """

    activity: str | np.ndarray = "uniform"
    reward: str | RewardSampler = "bernoulli"
    drift: float = 0.0
    switch_at: int = 0
    means_after: Any = None
    max_steps: int = DEFAULT_MAX_STEPS
    per_activation: str = "pull"
    se_c: float = 4.0
    stop: str = "all"
    draw_only_active: bool = False


class _Outcome(NamedTuple):
    """What a run's messages and board give its result: each player's arm and pulls, the sample complexity, the
    messages (the paper's convention) and broadcasts, the consensus step, the log and the board's releases."""

    arms: np.ndarray
    pulls: np.ndarray
    samples: int
    messages: int
    broadcasts: int
    t_consensus: int | None
    log: MessageLog
    releases: Releases | None
    board_metrics: dict[str, Any]


def _setup(
    means, n_agents: int, opts: Options, *, delta: float, eps: float, subroutine: str, conf: float
) -> MeansSchedule:
    """The run's instance, after the checks every algorithm shares."""
    bounded = isinstance(opts.reward, str) and opts.reward in BOUNDED_MODELS
    if bounded and not isinstance(means, MeansSchedule):
        values = np.asarray(means, dtype=float)
        require(bool(np.all((values >= 0) & (values <= 1))), "means", f"in [0, 1] for {opts.reward} rewards", means)
    env = (
        means
        if isinstance(means, MeansSchedule)
        else MeansSchedule(
            MultiUserInstance(np.asarray(means, dtype=float), opts.reward),
            opts.drift,
            int(opts.switch_at),
            None if opts.means_after is None else np.asarray(opts.means_after, dtype=float),
        )
    )
    require(int(n_agents) == n_agents and n_agents >= 1, "agents", "a positive integer", n_agents)
    # the players' arrays (activity, pulls, local sets) hold users x arms cells
    check_size(
        "users x arms",
        int(n_agents) * env.arms,
        MAX_INSTANCE_CELLS,
        "MAX_INSTANCE_CELLS",
        "cells of the players: n_agents x arms",
    )
    require(0 < delta < 1, "delta", "in (0, 1)", delta)
    require(0 <= eps <= 1, "epsilon", "in [0, 1] (0 only for se and ser3)", eps)
    require(opts.max_steps >= 1, "max_steps", ">= 1", opts.max_steps)
    require(
        opts.per_activation in PER_ACTIVATION,
        "per_activation",
        f"one of {', '.join(PER_ACTIVATION)}",
        opts.per_activation,
    )
    if opts.per_activation == "round" and subroutine == "ugapec":
        raise ConfigError("per_activation 'round' needs a round-based subroutine, not ugapec")
    require(subroutine in SUBROUTINES, "subroutine", f"one of {', '.join(SUBROUTINES)}", subroutine)
    require(0 < conf < 1, "the subroutine's confidence parameter", "in (0, 1)", conf)
    require(subroutine in ("se", "ser3") or eps > 0, "epsilon", f"> 0 for subroutine {subroutine!r}", eps)
    require(subroutine != "se" or opts.se_c >= 1, "se_c", ">= 1", opts.se_c)
    require(opts.stop in STOP_RULES, "stop", f"one of {', '.join(STOP_RULES)}", opts.stop)
    if opts.draw_only_active and not env.stationary:
        raise ConfigError("draw_only_active needs stationary means (drift = 0, switch_at = 0)")
    return env


def _without_board(opts: Options) -> None:
    """1-PRIVACY and 0-PRIVACY have no vote board: no consensus to stop at."""
    require(opts.stop == "all", "stop", "'all' without a vote board (no or full sharing)", opts.stop)


def _kernel_run(
    env: MeansSchedule,
    n: int,
    sample: Callable[[int, np.random.Generator], np.ndarray],
    streams: Sequence[np.random.Generator],
    subroutine: str,
    opts: Options,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """One run of the kernel (:func:`.kernel.run_kernel`) on ``n`` players; ``settings``: ``eps``, ``conf``,
    ``threshold``, ``stop_rule`` and optionally ``resets`` and ``record`` (the rest comes from ``opts``)."""
    return run_kernel(
        subroutine,
        env,
        n,
        sample,
        (streams[0], streams[1], streams[2]),
        Settings(
            se_c=opts.se_c,
            draw_only_active=opts.draw_only_active,
            max_steps=opts.max_steps,
            per_activation=opts.per_activation,
            **settings,
        ),
    )


def _by_votes(res: Mapping[str, Any], record: bool, board: int | None, samples: int | None = None) -> _Outcome:
    """The outcome of a run whose messages are votes (a vote is one message; Sec. 3.2): DECENTRALIZED
    ELIMINATION, DSER4 (``samples``: its horizon) and 1-PRIVACY (no votes). ``board``: the smallest group the
    board releases (1: direct, C: anonymous; ``None``: no board)."""
    log = MessageLog(record=record)
    log.add(res["vote_sender"], res["vote_time"], res["vote_arm"], KIND_VOTE)
    pulls = res["local"]
    broadcasts = int(res["vote_arm"].size)
    releases, board_metrics = None, {}
    if board is not None:
        releases = board_releases(res["vote_sender"], res["vote_arm"], res["vote_time"], board)
        board_metrics = releases.metrics()
    return _Outcome(
        res["outputs"],
        pulls,
        int(pulls.sum()) if samples is None else samples,
        broadcasts,
        broadcasts,
        res["t_consensus"],
        log,
        releases,
        board_metrics,
    )


def _by_broadcasts(
    res: Mapping[str, Any],
    n_agents: int,
    record: bool,
    anonymous: bool,
    draw_senders: Callable[[int], np.ndarray],
    draw_pulls: Callable[[int], np.ndarray],
) -> _Outcome:
    """The outcome of 0-PRIVACY: every step is one broadcast, ``N - 1`` point-to-point messages (the paper's
    convention, Sec. 5.2); every player outputs the learner's arm. On the direct channel the players of the
    recorded pulls are drawn after the run (``draw_senders(count)``; their pull counts ``draw_pulls(total)``
    without records); on the anonymous one they were drawn with the pulls."""
    log = MessageLog(record=record)
    samples = res["t_end"]
    pulls, releases = res["local"], None
    if anonymous:
        t, arm, rew = res["pull_records"] if record else (np.empty(0, np.int64),) * 3
        log.add(res["pull_senders"], t, rew, KIND_REWARD + arm) if record else None
        log.count = samples
        releases = res["releases"]
        board_metrics = releases.metrics()
    else:  # every shared pull reaches the learner alone
        if record:
            t, arm, rew = res["pull_records"]
            senders = draw_senders(t.size).astype(np.int64)
            log.add(senders, t, rew, KIND_REWARD + arm)
            pulls = np.bincount(senders, minlength=n_agents)
        else:
            log.count = samples
            pulls = draw_pulls(samples)
        board_metrics = {"min_group_size": 1 if samples else None, "released_aggregates": int(samples)}
    return _Outcome(
        np.full(n_agents, res["outputs"][0]),
        pulls,
        samples,
        samples * (n_agents - 1),
        samples,
        samples if res["stopped"] else None,
        log,
        releases,
        board_metrics,
    )


def _result(
    label: str,
    env: MeansSchedule,
    eps: float,
    res: Mapping[str, Any],
    out: _Outcome,
    threshold: int | None,
    conf: float,
    ties: np.random.Generator,
) -> Result:
    """The run's :class:`~anonbandits.results.Result`: the recommendation (the consensus arm when the shared set
    is a singleton, else the most common of the players' arms, ties drawn from ``ties``), the metrics, the
    status curve and, in ``info``, the per-player and per-arm data."""
    arms, t_end = out.arms, res["t_end"]
    good = env.eps_optimal(t_end, eps)
    G = res["G"]
    if G.sum() == 1:  # the consensus arm, else the most common of the players' arms
        rec = int(np.flatnonzero(G)[0])
    elif (arms >= 0).any():
        counts = np.bincount(arms[arms >= 0], minlength=env.arms)
        rec = int(ties.choice(np.flatnonzero(counts == counts.max())))
    else:
        rec = -1
    grid = np.unique(np.linspace(0, t_end, 200).round().astype(np.int64))
    done = np.concatenate(([0], res["done_counts"]))[np.searchsorted(res["done_times"], grid, side="right")]
    metrics = {
        "samples": int(out.samples),
        "messages": int(out.messages),
        "broadcasts": int(out.broadcasts),
        "p2p_messages": int(out.broadcasts) * (arms.size - 1),
        "recommended": rec if rec >= 0 else None,
        "approx_optimal": bool(rec >= 0 and good[rec]),
        "best_arm_found": bool(rec == env.best(t_end)),
        "users_approx_optimal": float(np.mean((arms >= 0) & good[np.maximum(arms, 0)])),
        "vote_threshold": threshold,
        "t_consensus": out.t_consensus,
        "truncated": not res["stopped"],
        "suboptimal_pulls": res["suboptimal"],
        "resets": res["resets"],
        "guard_fired": res["guard_fired"],
        **out.board_metrics,
    }
    info = {
        "agent_arms": arms,
        "agent_pulls": out.pulls,
        "votes": res["V"],
        "elimination_steps": res["elim_time"],
        "local_confidence": conf,
        "log": out.log,
        "releases": out.releases,
    }
    return Result(metrics=metrics, curve=(grid, done / arms.size), label=label, curve_axes=CURVE_AXES, info=info)


def _threshold(delta: float, eta: float, n_agents: int, rounding: str) -> int:
    """M (Algorithm 2, line 6: ``M = log(delta)/log(eta)`` rounded), once ``2 <= M <= N``: ``delta`` in
    ``[eta^N, eta^2]``."""
    require(0 < delta < 1, "delta", "in (0, 1)", delta)
    require(0 < eta < 1, "eta", "in (0, 1)", eta)
    ratio = vote_ratio(delta, eta)
    require(ratio >= 2 - 1e-9, "delta", f"<= eta^2 = {eta**2:.4g} (M >= 2 votes)", delta)
    require(
        ratio <= n_agents + 1e-9,
        "delta",
        f">= eta^N = {eta**n_agents:.4g} (M <= N = n_agents = {n_agents} players)",
        delta,
    )
    return vote_threshold(delta, eta, rounding)


@fill
def _run_decentralized_elimination(
    means,
    n_agents: int,
    *,
    rng: np.random.Generator,
    delta: float = 0.05,
    eta: float = 0.9,
    eps: float = 0.25,
    subroutine: str = "ser3",
    vote_rounding: str = "ceil",
    record_messages: bool = True,
    channel: str = "direct",
    C: int = 3,
    **options: Any,
) -> Result:
    """One run of DECENTRALIZED ELIMINATION (paper 002, Sec. 3.2, Algorithm 2).

    Every player runs an Arm Selection subroutine at confidence ``1 - eta`` and broadcasts the index of every arm
    it eliminates; an arm leaves the shared set at its ``M = ceil(log(delta)/log(eta))``-th vote.

    With ``channel="anonymous"`` the board is k-anonymous (:mod:`anonbandits.core.votes`): it releases an arm's
    votes only as a tally of at least C distinct players' votes, so the arm leaves at its ``C ceil(M/C)``-th vote
    (the released tally first reaching M), never if fewer players ever vote against it; the players then finish
    alone (no sharing about that arm). The releases are the result's ``releases``.

    Parameters
    ----------
    {{dec_means_agents_rng}}
    delta : float, optional
        Global failure probability (default 0.05); it must lie in ``[eta^N, eta^2]``, i.e. ``2 <= M <= N``
        (Algorithm 2's inputs).
    eta : float, optional
        Privacy level in (0, 1) (default 0.9).
    eps : float, optional
        Approximation factor in [0, 1] (default 0.25; 0, exact best-arm identification, only for se and ser3).
    subroutine : str, optional
        ``naive``, ``median``, ``se``, ``ser3`` (default) or ``ugapec``, run by each player at confidence 1-eta.
    vote_rounding : str, optional
        ``ceil`` (default: ``eta^M <= delta``, as Theorem 1 needs) or ``floor`` (the M = 28 of Sec. 5.2).
    record_messages : bool, optional
        Keep every vote in the log (default ``True``; else only the count).
    channel : str, optional
        ``"direct"`` (default: every vote reaches the board at once) or ``"anonymous"``.
    C : int, optional
        The anonymity parameter of the anonymous channel, at least 1 (default 3; unused on the direct one).
    **options : dict, optional
        Any of: ``activity`` (``uniform``, default; ``skewed``, Problem 2; or a probability vector ``P_x``);
        ``reward`` (reward model name, default ``bernoulli``, or a ``RewardSampler``); ``drift``, ``switch_at``,
        ``means_after`` (non-stationary means, see :class:`~.environment.MeansSchedule`); ``max_steps`` (cap on
        global steps, ``truncated`` when hit; default 10^8); ``draw_only_active`` (finished players leave the pool
        for good; Algorithm 1 draws every player, this is paper 003's convention); ``stop`` (``all``: every player
        holds one arm, Algorithm 1's rule; or ``consensus``: shared set singleton); ``per_activation`` (``pull``: one
        pull per activation,
        paper 002; or ``round``: one subroutine round); ``se_c`` (constant c of the SE radius
        ``sqrt(log(c K r^2/conf)/r)``, default 4).

    {{dec_returns_raises}}

    {{refs_paper002_paper003}}

    Examples
    --------
    Paper 003's reading of the Féraud et al. baseline (its ``feraud``: one SE round per activation, c = 1, no
    eps slack, finished players leave, stop at consensus; docs/multi-agent-bai.md compares the two):

    >>> res = run_decentralized_elimination([0.7, 0.5, 0.3] + [0.1] * 7, 32, rng=np.random.default_rng(0),
    ...                                     delta=0.05, eta=0.9, eps=0.0, subroutine="se", se_c=1.0,
    ...                                     draw_only_active=True, stop="consensus", per_activation="round")
    >>> res.metrics["recommended"], res.metrics["vote_threshold"]
    (0, 29)
    """
    threshold, board = _threshold(delta, eta, n_agents, vote_rounding), board_size(channel, C)
    opts = Options(**options)
    env = _setup(means, n_agents, opts, delta=delta, eps=eps, subroutine=subroutine, conf=eta)
    streams = rng.spawn(4)  # players, rewards, tie-breaks, resets: independent streams
    res = _kernel_run(
        env,
        n_agents,
        activity_sampler(opts.activity, n_agents),
        streams,
        subroutine,
        opts,
        dict(eps=eps, conf=eta, threshold=anonymous_threshold(threshold, board), stop_rule=opts.stop),
    )
    return _result(
        f"decentralized-{subroutine}", env, eps, res, _by_votes(res, record_messages, board), threshold, eta, streams[2]
    )


@fill
def _run_no_sharing(
    means,
    n_agents: int,
    *,
    rng: np.random.Generator,
    delta: float = 0.05,
    eps: float = 0.25,
    subroutine: str = "ser3",
    **options: Any,
) -> Result:
    """One run of 1-PRIVACY-X (paper 002, Sec. 5.1): every player alone, no messages.

    Every player runs her own subroutine at confidence ``delta/N``; the run stops when every player holds one arm.

    Parameters
    ----------
    {{dec_means_agents_rng}}
    {{dec_delta_eps_subroutine}}
    **options : dict, optional
        As in :func:`run_decentralized_elimination` (all but ``stop``).

    {{dec_returns_raises_refs}}

    Examples
    --------
    >>> res = run_no_sharing([0.9, 0.1], 4, rng=np.random.default_rng(0))
    >>> [res.metrics[name] for name in ("recommended", "samples", "messages")], res.info["agent_arms"].tolist()
    ([0, 284, 0], [0, 0, 0, 0])
    """
    opts = Options(**options)
    conf = delta / n_agents
    env = _setup(means, n_agents, opts, delta=delta, eps=eps, subroutine=subroutine, conf=conf)
    _without_board(opts)
    streams = rng.spawn(4)
    res = _kernel_run(
        env,
        n_agents,
        activity_sampler(opts.activity, n_agents),
        streams,
        subroutine,
        opts,
        dict(eps=eps, conf=conf, threshold=None, stop_rule=opts.stop),
    )
    return _result(f"no-sharing-{subroutine}", env, eps, res, _by_votes(res, True, None), None, conf, streams[2])


@fill
def _run_full_sharing(
    means,
    n_agents: int,
    *,
    rng: np.random.Generator,
    delta: float = 0.05,
    eps: float = 0.25,
    subroutine: str = "ser3",
    record_messages: bool = True,
    channel: str = "direct",
    C: int = 3,
    **options: Any,
) -> Result:
    """One run of 0-PRIVACY-X (paper 002, Sec. 5.1): one shared learner, every (arm, reward) broadcast.

    One subroutine at confidence ``delta`` is fed by every step; the active player broadcasts (arm, reward),
    ``N-1`` point-to-point messages per step. With ``channel="anonymous"`` the players post their rewards to a
    k-anonymous board instead, which releases the per-arm reward sums of whole rounds of the learner once every
    arm's sum combines at least C distinct players; the learner (SE or SER3) tests at each release
    (:mod:`.anonymous_sharing`; its releases are the result's ``releases``).

    Parameters
    ----------
    {{dec_means_agents_rng}}
    {{dec_delta_eps_subroutine}}
    record_messages : bool, optional
        Keep every broadcast in the log (default ``True``; else only the count).
    channel : str, optional
        ``"direct"`` (default) or ``"anonymous"`` (SE or SER3 on stationary means, C at most the number of
        players).
    C : int, optional
        The anonymity parameter of the anonymous channel, at least 1 (default 3; unused on the direct one).
    **options : dict, optional
        As in :func:`run_decentralized_elimination`: ``activity``, ``reward``, ``drift``, ``switch_at``,
        ``means_after``, ``max_steps``, ``se_c``.

    {{dec_returns_raises_refs}}

    Examples
    --------
    >>> res = run_full_sharing([0.9, 0.1], n_agents=4, rng=np.random.default_rng(0))
    >>> [res.metrics[name] for name in ("recommended", "broadcasts", "messages")]
    [0, 30, 90]
    """
    board = board_size(channel, C)
    opts = Options(**options)
    env = _setup(means, n_agents, opts, delta=delta, eps=eps, subroutine=subroutine, conf=delta)
    _without_board(opts)
    require(
        opts.per_activation == "pull",
        "per_activation",
        "'pull' with full sharing (every step is one pull of the one learner)",
        opts.per_activation,
    )
    players, rewards, ties, _ = streams = rng.spawn(4)
    sampler = activity_sampler(opts.activity, n_agents)
    if board > 1:
        res = run_shared_learner(
            env,
            n_agents,
            sampler,
            players,
            rewards,
            ties,
            subroutine=subroutine,
            eps=eps,
            conf=delta,
            se_c=opts.se_c,
            C=board,
            max_steps=opts.max_steps,
            record=record_messages,
        )
    else:  # one shared learner fed by every step, the player sequence all hers; who broadcasts is drawn after
        res = _kernel_run(
            env,
            1,
            lambda size, _: np.zeros(size, np.int16),
            streams,
            subroutine,
            opts,
            dict(eps=eps, conf=delta, threshold=None, stop_rule=opts.stop, record=record_messages),
        )
    out = _by_broadcasts(
        res,
        n_agents,
        record_messages,
        board > 1,
        lambda count: sampler(count, players),
        lambda total: players.multinomial(total, _activity_probabilities(n_agents, opts.activity, skew="halves")),
    )
    return _result(f"full-sharing-{subroutine}", env, eps, res, out, None, delta, ties)


@fill
def _run_dser4(
    means,
    n_agents: int,
    *,
    rng: np.random.Generator,
    horizon: int,
    phi: float,
    delta: float = 0.05,
    eta: float = 0.9,
    eps: float = 0.25,
    vote_rounding: str = "ceil",
    record_messages: bool = True,
    **options: Any,
) -> Result:
    """One run of DSER4 (paper 002, Sec. 4, Theorem 4): decentralized SER3 with global resets.

    The run lasts exactly ``horizon`` global steps; before each step, with probability ``phi`` (one shared draw),
    a global reset clears the board and restarts every player's SER3 (no message is counted for a reset). Players
    holding one arm keep playing it. ``suboptimal_pulls`` counts plays of arms that are not the best at their
    step, ``resets`` the resets; the recommendation is read at the horizon. ``phi = 0`` gives decentralized SER3
    without resets and without stopping rule.

    Parameters
    ----------
    {{dec_means_agents_rng}}
    horizon : int
        Number of global steps.
    phi : float
        Reset probability per step, in [0, 1].
    delta : float, optional
        Global failure probability (default 0.05), in ``[eta^N, eta^2]``.
    eta : float, optional
        Privacy level in (0, 1) (default 0.9).
    eps : float, optional
        Approximation factor in [0, 1] (default 0.25; 0, exact best-arm identification, only for se and ser3).
    vote_rounding : str, optional
        ``ceil`` (default) or ``floor``.
    record_messages : bool, optional
        Keep every vote in the log (default ``True``; else only the count).
    **options : dict, optional
        As in :func:`run_decentralized_elimination`: ``activity``, ``reward``, ``drift``, ``switch_at``,
        ``means_after``.

    {{dec_returns_raises_refs}}

    Examples
    --------
    >>> res = run_dser4([0.9, 0.1], 8, rng=np.random.default_rng(0), horizon=2000, phi=0.001, eta=0.5)
    >>> [res.metrics[name] for name in ("recommended", "samples", "resets")]
    [0, 2000, 2]
    """
    require(0 <= phi <= 1, "phi", "in [0, 1]", phi)
    threshold = _threshold(delta, eta, n_agents, vote_rounding)
    opts = Options(max_steps=horizon, **options)
    env = _setup(means, n_agents, opts, delta=delta, eps=eps, subroutine="ser3", conf=eta)
    require(
        not opts.draw_only_active,
        "draw_only_active",
        "false for DSER4 (a reset restarts every player)",
        opts.draw_only_active,
    )
    require(opts.stop == "all", "stop", "left out for DSER4 (it runs to its horizon)", opts.stop)
    streams = rng.spawn(4)
    starts = [1]  # the global reset steps: one shared Bernoulli(phi) draw per step
    while phi and (nxt := starts[-1] + int(streams[3].geometric(phi))) <= horizon:
        starts.append(nxt)
    res = _kernel_run(
        env,
        n_agents,
        activity_sampler(opts.activity, n_agents),
        streams,
        "ser3",
        opts,
        dict(eps=eps, conf=eta, threshold=threshold, stop_rule="none", resets=np.array(starts[1:], np.int64)),
    )
    return _result(
        "decentralized-ser4",
        env,
        eps,
        res,
        _by_votes(res, record_messages, None, samples=horizon),
        threshold,
        eta,
        streams[2],
    )


# The library functions, checking their arguments by the registry's rules (anonbandits.validation.validated) under
# the registry's names; ``means`` may be a MeansSchedule and ``eps`` 0 (se, ser3), so the functions check those.
# The registry entries below call the unchecked bodies, their parameters being checked by resolve already.
#: The smallest global failure probability: below it the subroutines' radii, ``log(c K r^2 / delta)``, overflow
#: (a subnormal delta makes every radius infinite, and a run would never stop before ``max_steps``).
DELTA_MIN = 1e-100
DELTA = dataclasses.replace(
    RULES["delta"], then=Rule(lambda v: v >= DELTA_MIN, f"at least {DELTA_MIN:g} (the smallest the radii compute)")
)
_NAMES: dict[str, str | Rule] = {
    "delta": DELTA,
    "n_agents": "users",
    "max_steps": "max_rounds",
    "means": Rule(
        lambda v: isinstance(v, MeansSchedule) or (VECTOR.test(v) and np.size(v) >= 2),
        "a vector of at least two finite arm means, or a MeansSchedule",
    ),
    "horizon": "horizon",
    "record_messages": BOOL,
}
run_decentralized_elimination = validated(_run_decentralized_elimination, **_NAMES)
run_dser4 = validated(_run_dser4, **_NAMES)
run_full_sharing = validated(_run_full_sharing, **_NAMES)
run_no_sharing = validated(_run_no_sharing, **_NAMES)


PAPER_MEANS = "0.7,0.5,0.3,0.1,0.1,0.1,0.1,0.1,0.1,0.1"
CURVE_AXES = ("global step", "fraction of players holding one arm")


_COMMON = (
    Param("users", int, 64, "number of players N", aliases=("agents",), unit="users"),
    agent_means(PAPER_MEANS),
    Param("delta", float, 0.05, "global failure probability", rule=DELTA),
    Param(
        "approx",
        float,
        0.25,
        "approximation factor eps in (0, 1]: an arm within eps of the best is a correct answer",
        aliases=("epsilon",),
        unit="reward",
    ),
    Param("activity", str, "uniform", "player activity: uniform (Problem 1) or skewed (Problem 2)", ACTIVITIES),
    Param("reward", str, "bernoulli", "reward model", REWARD_MODELS),
    Param("drift", float, 0.0, "Problem 3: every arm but the best loses drift per step (e.g. 1e-5)"),
    Param("switch_at", int, 0, "from this step on the means are --means-after (0: never)", unit="steps"),
    Param("means_after", str, "", "arm means after --switch-at"),
    Param(
        "max_rounds",
        int,
        DEFAULT_MAX_STEPS,
        "cap on global steps (the run is marked truncated)",
        aliases=("max_steps",),
        unit="steps",
    ),
)


def _entry(name: str, params: Mapping[str, Any], seed: int) -> Result:
    """Registry entry of ``name`` (``decentralized-elimination``, DSER4 with ``subroutine = ser4``,
    ``no-sharing``, ``full-sharing``) on resolved (and checked) ``params``: the run's
    :class:`~anonbandits.results.Result`. The registry's names become the library's: ``users`` -> ``n_agents``,
    ``approx`` -> ``eps``, ``max_rounds`` -> ``max_steps``."""
    p = dict(params)
    (means, file_agents), agents, after = shared_means(p.pop("means")), p.pop("users"), p.pop("means_after")
    agents = file_agents or agents  # a means file's count overrides --users
    p |= {
        "rng": np.random.default_rng(seed),
        "eps": p.pop("approx"),
        "max_steps": p.pop("max_rounds"),
        "means_after": parse_means(after) if after else None,
    }
    if p["subroutine"] == "ser4":  # DSER4 runs to its horizon
        require(
            board_size(p["channel"], p["C"]) == 1,
            "channel",
            "direct for subroutine ser4 (a reset would clear the buffers of a board that waits for C agents)",
            p["channel"],
        )
        for key in ("subroutine", "max_steps", "stop", "draw_only_active", "channel", "C"):
            del p[key]
        return _run_dser4(means, agents, **p)
    for key in ("phi", "horizon"):
        p.pop(key, None)
    run = {
        "decentralized-elimination": _run_decentralized_elimination,
        "no-sharing": _run_no_sharing,
        "full-sharing": _run_full_sharing,
    }[name]
    return run(means, agents, **p)


def _registry_entry(name: str, params: Mapping[str, Any], seed: int) -> Result:
    """:func:`_entry`'s result as the registry reports it: the metrics and the curve; the per-player data of
    ``info`` stay with the library functions."""
    return dataclasses.replace(_entry(name, params, seed), info={})


_SUBROUTINE = Param("subroutine", str, "ser3", "arm selection subroutine", SUBROUTINES)
_ONLY_ACTIVE = Param(
    "draw_only_active",
    flag,
    False,
    "finished players leave the pool (Algorithm 1 draws every player; this is paper 003's convention)",
)
ALGORITHMS: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(
        name=name,
        run=partial(_registry_entry, name),
        family="decentralized",
        curve_axes=CURVE_AXES,
        summary=summary,
        params=_COMMON + params,
    )
    for name, summary, params in (
        (
            "decentralized-elimination",
            "Decentralized Elimination (Féraud et al. 2019, Alg. 2): private votes, M = ceil(log d/log eta)",
            (
                Param("eta", float, 0.9, "privacy level eta (players' subroutines run at confidence 1 - eta)"),
                Param(
                    "subroutine",
                    str,
                    "ser3",
                    "arm selection subroutine (ser4: DSER4, non-stationary)",
                    SUBROUTINES + ("ser4",),
                ),
                Param(
                    "vote_rounding", str, "ceil", "M = ceil (29 for the paper's values) or floor (28)", VOTE_ROUNDINGS
                ),
                Param("stop", str, "all", "stop when all players hold one arm, or at consensus", STOP_RULES),
                _ONLY_ACTIVE,
                Param("phi", float, 1e-4, "ser4 only: reset probability per step"),
                Param("horizon", int, 1_000_000, "ser4 only: number of global steps", unit="steps"),
                *CHANNEL_PARAMS,
            ),
        ),
        (
            "no-sharing",
            "1-PRIVACY (Féraud et al. 2019, Sec. 5.1): every player alone at confidence delta/N, no messages",
            (_SUBROUTINE, _ONLY_ACTIVE),
        ),
        (
            "full-sharing",
            "0-PRIVACY (Féraud et al. 2019, Sec. 5.1): one shared learner, every (arm, reward) broadcast",
            (_SUBROUTINE, *CHANNEL_PARAMS),
        ),
    )
)
