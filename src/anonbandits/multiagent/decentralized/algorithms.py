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

Messages are exposed in a :class:`~anonbandits.multiagent.shared.MessageLog`: a vote of DE is one message
(``kind`` :data:`KIND_VOTE`, ``content`` the arm index); a broadcast of 0-PRIVACY is one message
(``kind = KIND_REWARD + arm``, ``content`` the reward), since a log entry holds one number.

The registry entries (:data:`ALGORITHMS`): ``decentralized-elimination`` (``--subroutine ser4`` is DSER4, run for
``--horizon`` steps with global resets of probability ``--phi``), ``no-sharing`` and ``full-sharing``; their
columns are the ``metrics`` of :class:`DecentralizedResult`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from anonbandits._docstrings import fill, filled_dataclass
from anonbandits.core.indices import vote_ratio
from anonbandits.core.votes import Releases, anonymous_threshold, board_releases
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.envs.means_file import shared_means
from anonbandits.envs.rewards import REWARD_MODELS, parse_means
from anonbandits.errors import ConfigError, require
from anonbandits.multiagent.decentralized.anonymous_sharing import run_shared_learner
from anonbandits.multiagent.decentralized.environment import MeansSchedule, RewardSampler, activity_sampler
from anonbandits.multiagent.decentralized.kernel import SUBROUTINES, run_kernel
from anonbandits.multiagent.shared import (
    ACTIVITIES,
    CHANNEL_PARAMS,
    VOTE_ROUNDINGS,
    MessageLog,
    activity_probabilities,
    board_size,
    vote_threshold,
)
from anonbandits.results import Result
from anonbandits.spec import AlgorithmSpec, Param
from anonbandits.spec import parse_bool as flag

KIND_VOTE = 0
KIND_REWARD = 1
STOP_RULES = ("all", "consensus")
PER_ACTIVATION = ("pull", "round")
DEFAULT_MAX_STEPS = 10**8


@filled_dataclass(frozen=True, kw_only=True)
class DecentralizedResult(Result):
    """Outcome of one run of a paper-002 algorithm: the :class:`~anonbandits.results.Result` of every algorithm plus
    per-player and per-arm data.

    Each metric is also read as an attribute (``res.samples``). ``samples`` is the sample complexity: global steps
    (pulls, all players) until the stopping rule fired (raw steps of finished players excluded with
    ``draw_only_active``); ``messages`` follows the paper's convention (spec A11): votes for DE, ``(N-1)`` per step
    for 0-PRIVACY, 0 for 1-PRIVACY; ``broadcasts`` and ``p2p_messages = broadcasts * (N-1)`` are given for every
    algorithm. ``recommended`` is the consensus arm when the shared set is a singleton, else the most common of
    the players' arms (``None`` when no player holds one); ``approx_optimal`` (1/0) says whether it is
    eps-optimal at the stopping step (A9), ``best_arm_found`` whether it is the best arm; also
    ``users_approx_optimal``, ``truncated``, ``suboptimal_pulls``, ``resets``, ``guard_fired``, ``vote_threshold``
    and ``t_consensus`` (``None`` where not applicable).

    Parameters
    ----------
    metrics : Mapping
        The run's numbers by name (names and kinds of :mod:`anonbandits.results`).
    curve : tuple of numpy.ndarray or None, optional
        The fraction of players holding one arm against the global step.
    label : str or None, optional
        The line's name (``"decentralized-ser3"``, ...).
    records : tuple, optional
        Per-batch records (none for this family).
    info : Mapping, optional
        Non-numeric results (none for this family).
    curve_axes : tuple of str or None, optional
        The names of the curve's x and y.
    agent_arms : numpy.ndarray
        (N,) int, each player's arm (-1: no single arm yet).
    agent_pulls : numpy.ndarray
        (N,) int, each player's pulls.
    votes : numpy.ndarray
        (K,) int, votes each arm received.
    elimination_steps : numpy.ndarray
        (K,) int, the raw global step at which each arm left the shared set (-1: never; last segment for DSER4).
    threshold : int or None
        The vote threshold M (``None``: no vote board).
    t_consensus : int or None
        The step at which the shared set became a singleton (``None``: never).
    local_confidence : float
        The confidence parameter of the players' subroutines.
    log : MessageLog
        The messages (:class:`~anonbandits.multiagent.shared.MessageLog`).
    releases : Releases or None, optional
        What the board released (:class:`~anonbandits.core.votes.Releases`): the vote tallies of Decentralized
        Elimination (one vote each on the direct channel), full sharing's reward sums on the anonymous channel;
        ``None`` otherwise.

    Raises
    ------
    ConfigError
        If a metric breaks the results schema.

    {{refs_paper002}}

    Examples
    --------
    >>> res = run_no_sharing([0.9, 0.1], 4, rng=np.random.default_rng(0))
    >>> res.recommended, res.messages, res.agent_arms.tolist()
    (0, 0, [0, 0, 0, 0])
    """

    agent_arms: np.ndarray
    agent_pulls: np.ndarray
    votes: np.ndarray
    elimination_steps: np.ndarray
    threshold: int | None
    t_consensus: int | None
    local_confidence: float
    log: MessageLog
    releases: Releases | None = None

    def __getattr__(self, name: str) -> Any:
        """A metric by name (only called for names that are not fields)."""
        try:
            return self.__dict__["metrics"][name]
        except KeyError:
            raise AttributeError(name) from None


def _run(label: str, means, n_agents: int, rng: np.random.Generator, *, conf: float, threshold: int | None,
         delta: float, eps: float, subroutine: str, activity: str | np.ndarray = "uniform",
         reward: str | RewardSampler = "bernoulli", drift: float = 0.0, switch_at: int = 0, means_after=None,
         max_steps: int = DEFAULT_MAX_STEPS, per_activation: str = "pull", se_c: float = 4.0, stop: str = "all",
         draw_only_active: bool = False, record: bool = True, phi: float | None = None,
         full: bool = False, board: int | None = None) -> DecentralizedResult:
    """What the four runs share: the checks, the independent streams of spec A20 (players, rewards,
    shuffles/tie-breaks, resets), one kernel run and the result. ``full`` (0-PRIVACY) runs one learner fed by
    every step; ``phi`` (DSER4) draws the global reset steps and runs exactly ``max_steps`` steps. ``board``:
    the smallest group the board releases (1: the direct channel; C: the anonymous one, whose votes leave at
    the ``C ceil(M/C)``-th vote and whose full sharing is :func:`.anonymous_sharing.run_shared_learner`);
    ``None``: no board (1-PRIVACY, DSER4)."""
    env = means if isinstance(means, MeansSchedule) else MeansSchedule(
        MultiUserInstance(np.asarray(means, dtype=float), reward), drift, int(switch_at),
        None if means_after is None else np.asarray(means_after, dtype=float))
    require(int(n_agents) == n_agents and n_agents >= 1, "agents", "a positive integer", n_agents)
    require(0 < delta < 1, "delta", "in (0, 1)", delta)
    require(0 <= eps <= 1, "epsilon", "in [0, 1] (0 only for se and ser3)", eps)
    require(max_steps >= 1, "max_steps", ">= 1", max_steps)
    require(per_activation in PER_ACTIVATION, "per_activation", f"one of {', '.join(PER_ACTIVATION)}", per_activation)
    if per_activation == "round" and subroutine == "ugapec":
        raise ConfigError("per_activation 'round' needs a round-based subroutine, not ugapec")
    require(subroutine in SUBROUTINES, "subroutine", f"one of {', '.join(SUBROUTINES)}", subroutine)
    require(0 < conf < 1, "the subroutine's confidence parameter", "in (0, 1)", conf)
    require(subroutine in ("se", "ser3") or eps > 0, "epsilon", f"> 0 for subroutine {subroutine!r}", eps)
    require(subroutine != "se" or se_c >= 1, "se_c", ">= 1", se_c)
    require(stop in STOP_RULES, "stop", f"one of {', '.join(STOP_RULES)}", stop)
    require(stop == "all" or threshold is not None, "stop", "'all' without a vote board (no or full sharing)", stop)
    if draw_only_active and not env.stationary:
        raise ConfigError("draw_only_active needs stationary means (drift = 0, switch_at = 0)")
    require(not full or per_activation == "pull", "per_activation", "'pull' with full sharing (every step is one "
            "pull of the one learner)", per_activation)
    require(phi is None or not draw_only_active, "draw_only_active", "false for DSER4 (a reset restarts every "
            "player)", draw_only_active)
    require(phi is None or stop == "all", "stop", "left out for DSER4 (it runs to its horizon)", stop)
    players, rewards, ties, resets_rng = rng.spawn(4)
    starts = [1]
    while phi and (nxt := starts[-1] + int(resets_rng.geometric(phi))) <= max_steps:
        starts.append(nxt)
    sampler = activity_sampler(activity, n_agents)
    anonymous = (board or 1) > 1
    if anonymous and full:
        res = run_shared_learner(env, n_agents, sampler, players, rewards, ties, subroutine=subroutine, eps=eps,
                                 conf=conf, se_c=se_c, C=board, max_steps=max_steps, record=record)
    else:  # 0-PRIVACY: one shared learner fed by every step, the player sequence all hers; who broadcasts is
        # drawn after
        res = run_kernel(subroutine, env, 1 if full else n_agents, (lambda size, _: np.zeros(size, np.int16))
                         if full else sampler, players, rewards, ties, eps=eps, conf=conf, se_c=se_c,
                         threshold=None if threshold is None else anonymous_threshold(threshold, board or 1),
                         stop_rule="none" if phi is not None else stop, draw_only_active=draw_only_active,
                         max_steps=max_steps, per_activation=per_activation,
                         resets=None if phi is None else np.array(starts[1:], np.int64), record=full and record)
    log = MessageLog(record=record)
    arms, pulls, t_end = res["outputs"], res["local"], res["t_end"]
    if full:  # every step is one broadcast, N - 1 messages (spec A11); every player outputs the learner's arm
        samples = broadcasts = t_end
        messages, t_consensus = samples * (n_agents - 1), t_end if res["stopped"] else None
        if anonymous:  # the players of the pulls were drawn with them
            t, arm, rew = res["pull_records"] if record else (np.empty(0, np.int64),) * 3
            log.add(res["pull_senders"], t, rew, KIND_REWARD + arm) if record else None
            log.count = samples
        elif record:
            t, arm, rew = res["pull_records"]
            senders = sampler(t.size, players).astype(np.int64)
            log.add(senders, t, rew, KIND_REWARD + arm)
            pulls = np.bincount(senders, minlength=n_agents)
        else:
            log.count = samples
            pulls = players.multinomial(samples, activity_probabilities(n_agents, activity, skew="halves"))
        arms = np.full(n_agents, arms[0])
    else:  # a vote is one message
        log.add(res["vote_sender"], res["vote_time"], res["vote_arm"], KIND_VOTE)
        samples = max_steps if phi is not None else int(pulls.sum())
        broadcasts = messages = int(res["vote_arm"].size)
        t_consensus = res["t_consensus"]
    releases, board_metrics = None, {}
    if board is not None and full and not anonymous:  # every shared pull reaches the learner alone
        board_metrics = {"min_group_size": 1 if samples else None, "released_aggregates": int(samples)}
    elif board is not None:
        releases = res["releases"] if full else board_releases(res["vote_sender"], res["vote_arm"],
                                                               res["vote_time"], board)
        board_metrics = releases.metrics()
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
    metrics = {"samples": int(samples), "messages": int(messages), "broadcasts": int(broadcasts),
               "p2p_messages": int(broadcasts) * (n_agents - 1), "recommended": rec if rec >= 0 else None,
               "approx_optimal": bool(rec >= 0 and good[rec]), "best_arm_found": bool(rec == env.best(t_end)),
               "users_approx_optimal": float(np.mean((arms >= 0) & good[np.maximum(arms, 0)])),
               "vote_threshold": threshold, "t_consensus": t_consensus, "truncated": not res["stopped"],
               "suboptimal_pulls": res["suboptimal"], "resets": res["resets"], "guard_fired": res["guard_fired"],
               **board_metrics}
    return DecentralizedResult(
        metrics=metrics, curve=(grid, done / arms.size), label=label, curve_axes=CURVE_AXES, agent_arms=arms,
        agent_pulls=pulls,
        votes=res["V"], elimination_steps=res["elim_time"], threshold=threshold, t_consensus=t_consensus,
        local_confidence=conf, log=log, releases=releases)


def _threshold(delta: float, eta: float, n_agents: int, rounding: str) -> int:
    """M (spec 4.2), once ``2 <= M <= N``: ``delta`` in ``[eta^N, eta^2]``."""
    require(0 < delta < 1, "delta", "in (0, 1)", delta)
    require(0 < eta < 1, "eta", "in (0, 1)", eta)
    ratio = vote_ratio(delta, eta)
    require(ratio >= 2 - 1e-9, "delta", f"<= eta^2 = {eta**2:.4g} (M >= 2 votes)", delta)
    require(ratio <= n_agents + 1e-9, "delta", f">= eta^N = {eta**n_agents:.4g} (M <= N = {n_agents} players)",
            delta)
    return vote_threshold(delta, eta, rounding)


@fill
def run_decentralized_elimination(
        means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eta: float = 0.9,
        eps: float = 0.25, subroutine: str = "ser3", vote_rounding: str = "ceil", record_messages: bool = True,
        channel: str = "direct", C: int = 3, **options: Any) -> DecentralizedResult:
    """One run of DECENTRALIZED ELIMINATION (paper 002, Algorithm 2; spec 4.4).

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
        (spec 4.2).
    eta : float, optional
        Privacy level in (0, 1) (default 0.9).
    eps : float, optional
        Approximation factor in [0, 1] (default 0.25; 0, exact best-arm identification, only for se and ser3).
    subroutine : str, optional
        ``naive``, ``median``, ``se``, ``ser3`` (default) or ``ugapec``, run by each player at confidence 1-eta.
    vote_rounding : str, optional
        ``ceil`` (default, A1) or ``floor`` (the paper's M = 28).
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
        for good, A7 option; paper 003's convention); ``stop`` (``all``: every player holds one arm, the paper's
        rule, A6; or ``consensus``: shared set singleton); ``per_activation`` (``pull``: one pull per activation,
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
    >>> int(res.recommended), res.threshold
    (0, 29)
    """
    return _run(f"decentralized-{subroutine}", means, n_agents, rng, conf=eta, delta=delta, eps=eps,
                threshold=_threshold(delta, eta, n_agents, vote_rounding), subroutine=subroutine,
                record=record_messages, board=board_size(channel, C), **options)


@fill
def run_no_sharing(means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eps: float = 0.25,
                   subroutine: str = "ser3", **options: Any) -> DecentralizedResult:
    """One run of 1-PRIVACY-X (paper 002, Sec. 5.1; spec 6.1): every player alone, no messages.

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
    >>> res.recommended, res.samples, res.messages
    (0, 284, 0)
    """
    return _run(f"no-sharing-{subroutine}", means, n_agents, rng, conf=delta / n_agents, threshold=None,
                delta=delta, eps=eps, subroutine=subroutine, **options)


@fill
def run_full_sharing(means, n_agents: int, *, rng: np.random.Generator, delta: float = 0.05, eps: float = 0.25,
                     subroutine: str = "ser3", record_messages: bool = True, channel: str = "direct", C: int = 3,
                     **options: Any) -> DecentralizedResult:
    """One run of 0-PRIVACY-X (paper 002, Sec. 5.1; spec 6.2): one shared learner, every (arm, reward) broadcast.

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
    >>> res.recommended, res.broadcasts, res.messages
    (0, 30, 90)
    """
    return _run(f"full-sharing-{subroutine}", means, n_agents, rng, conf=delta, threshold=None, delta=delta,
                eps=eps, subroutine=subroutine, record=record_messages, full=True, board=board_size(channel, C),
                **options)


@fill
def run_dser4(means, n_agents: int, *, rng: np.random.Generator, horizon: int, phi: float, delta: float = 0.05,
              eta: float = 0.9, eps: float = 0.25, vote_rounding: str = "ceil", record_messages: bool = True,
              **options: Any) -> DecentralizedResult:
    """One run of DSER4 (paper 002, Sec. 4, Theorem 4; spec 5.5 and A18): decentralized SER3 with global resets.

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
    >>> res.recommended, res.samples, res.resets
    (0, 2000, 2)
    """
    require(0 <= phi <= 1, "phi", "in [0, 1]", phi)
    return _run("decentralized-ser4", means, n_agents, rng, conf=eta, delta=delta, eps=eps, subroutine="ser3",
                threshold=_threshold(delta, eta, n_agents, vote_rounding), max_steps=horizon,
                record=record_messages, phi=phi, **options)


PAPER_MEANS = "0.7,0.5,0.3,0.1,0.1,0.1,0.1,0.1,0.1,0.1"
CURVE_AXES = ("global step", "fraction of players holding one arm")


_COMMON = (
    Param("users", int, 64, "number of players N", aliases=("agents",), unit="users"),
    Param("means", str, PAPER_MEANS, "arm means, comma-separated (paper: K = 10), or a means file (.csv, "
          ".parquet) of one instance, whose count sets the users"),
    Param("delta", float, 0.05, "global failure probability"),
    Param("approx", float, 0.25, "approximation factor eps in (0, 1]: an arm within eps of the best is a "
          "correct answer", aliases=("epsilon",), unit="reward"),
    Param("activity", str, "uniform", "player activity: uniform (Problem 1) or skewed (Problem 2)",
          ACTIVITIES),
    Param("reward", str, "bernoulli", "reward model", REWARD_MODELS),
    Param("drift", float, 0.0, "Problem 3: every arm but the best loses drift per step (e.g. 1e-5)"),
    Param("switch_at", int, 0, "from this step on the means are --means-after (0: never)", unit="steps"),
    Param("means_after", str, "", "arm means after --switch-at"),
    Param("max_rounds", int, DEFAULT_MAX_STEPS, "cap on global steps (the run is marked truncated)",
          aliases=("max_steps",), unit="steps"),
)


def _entry(name: str, params: Mapping[str, Any], seed: int) -> Result:
    """Registry entry of ``name`` (``decentralized-elimination``, DSER4 with ``subroutine = ser4``,
    ``no-sharing``, ``full-sharing``) on resolved (and checked) ``params``: the run's
    :class:`DecentralizedResult`. The registry's names become the library's: ``users`` -> ``n_agents``,
    ``approx`` -> ``eps``, ``max_rounds`` -> ``max_steps``."""
    p = dict(params)
    (means, file_agents), agents, after = shared_means(p.pop("means")), p.pop("users"), p.pop("means_after")
    agents = file_agents or agents  # a means file's count overrides --users
    p |= {"rng": np.random.default_rng(seed), "eps": p.pop("approx"), "max_steps": p.pop("max_rounds"),
          "means_after": parse_means(after) if after else None}
    if p["subroutine"] == "ser4":  # DSER4 runs to its horizon
        require(p["channel"] == "direct", "channel", "direct for subroutine ser4 (a reset would clear the "
                "anonymous board's buffers)", p["channel"])
        for key in ("subroutine", "max_steps", "stop", "draw_only_active", "channel", "C"):
            del p[key]
        return run_dser4(means, agents, **p)
    for key in ("phi", "horizon"):
        p.pop(key, None)
    run = {"decentralized-elimination": run_decentralized_elimination, "no-sharing": run_no_sharing,
           "full-sharing": run_full_sharing}[name]
    return run(means, agents, **p)


_SUBROUTINE = Param("subroutine", str, "ser3", "arm selection subroutine", SUBROUTINES)
_ONLY_ACTIVE = Param("draw_only_active", flag, False, "finished players leave the pool (spec A7 option)")
ALGORITHMS: tuple[AlgorithmSpec, ...] = tuple(
    AlgorithmSpec(name=name, run=partial(_entry, name), family="decentralized", curve_axes=CURVE_AXES,
                  summary=summary, params=_COMMON + params) for name, summary, params in (
        ("decentralized-elimination",
         "Decentralized Elimination (Féraud et al. 2019, Alg. 2): private votes, M = ceil(log d/log eta)", (
             Param("eta", float, 0.9, "privacy level eta (players' subroutines run at confidence 1 - eta)"),
             Param("subroutine", str, "ser3", "arm selection subroutine (ser4: DSER4, non-stationary)",
                   SUBROUTINES + ("ser4",)),
             Param("vote_rounding", str, "ceil", "M = ceil (29 for the paper's values) or floor (28)",
                   VOTE_ROUNDINGS),
             Param("stop", str, "all", "stop when all players hold one arm, or at consensus", STOP_RULES),
             _ONLY_ACTIVE,
             Param("phi", float, 1e-4, "ser4 only: reset probability per step"),
             Param("horizon", int, 1_000_000, "ser4 only: number of global steps", unit="steps"),
             *CHANNEL_PARAMS)),
        ("no-sharing", "1-PRIVACY (Féraud et al. 2019, Sec. 5.1): every player alone at confidence delta/N, no "
         "messages", (_SUBROUTINE, _ONLY_ACTIVE)),
        ("full-sharing", "0-PRIVACY (Féraud et al. 2019, Sec. 5.1): one shared learner, every (arm, reward) "
         "broadcast", (_SUBROUTINE, *CHANNEL_PARAMS))))
