"""The algorithms of paper 003 whose local routine is Successive Elimination, and the CENTRAL baseline.

Paper: Rio, Barlier, Colin and Soare, *Multi-Agent Best Arm Identification with Private Communications* (ICML
2023): :func:`corrupted_elimination` (Algorithm 3, Sec. 5), :func:`mase` (Algorithm 1, Sec. 4),
:func:`independent` and :func:`central` (the baselines of Sec. 6). The first three drive one compiled round
loop (:func:`.se_kernel.run_kernel`; one *round* is one activation of one agent, which pulls every arm of its
local set) through :func:`_run`, whose keywords are their ``**options``.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from anonbandits._docstrings import fill
from anonbandits.channels.direct import DirectChannel
from anonbandits.core.radii import se_boundary
from anonbandits.core.votes import anonymous_threshold
from anonbandits.envs.instances import MultiUserInstance
from anonbandits.errors import require
from anonbandits.multiagent.mase import model, se_kernel
from anonbandits.multiagent.mase.model import MessageLog
from anonbandits.multiagent.shared import board_size
from anonbandits.results import Result
from anonbandits.validation import BOOL, INSTANCE, validated

SAMPLINGS = ("active", "fixed")
STOP_RULES = ("all", "first")
_STOP = {"global": se_kernel.STOP_GLOBAL, "all": se_kernel.STOP_ALL, "first": se_kernel.STOP_FIRST}
_BLOCK = 512  # CENTRAL's rounds drawn per block


@dataclass(frozen=True, kw_only=True)
class LoopOptions:
    """The keywords of the compiled round loop (the ``**options`` of :func:`corrupted_elimination`,
    :func:`mase` and :func:`independent`).

    ``sampling``: ``"active"`` draws the agent among those still in the pool, ``"fixed"`` from the fixed P_N, the
    rounds of agents that left being idle rounds that still count (the paper does not say which; ``active`` is
    this library's default). ``retire_on_sync``: agents that a sync leaves with at most one arm leave the pool
    (default ``False``: an agent leaves when its own test leaves it one arm). ``width_c``,
    ``width_denominator``: the constant c and the t / 2t choice of the SE width ``2 sqrt(log(c K t^2/b)/t)`` of
    Sec. 4.1 (the paper gives the form, not the constants). ``max_rounds`` stops the run (``truncated``).
    ``stop``: one arm left globally (``"global"``), or INDEPENDENT's ``"all"`` / ``"first"`` agent finished.
    """

    retire_on_sync: bool = False
    sampling: str = "active"
    stop: str = "global"
    width_c: float = 1.0
    width_denominator: int = 1
    max_rounds: int = 10**9


def _run(
    name: str,
    instance: MultiUserInstance,
    probs: np.ndarray,
    rng: np.random.Generator,
    record: bool,
    conf: float,
    threshold: int | None,
    *,
    sync: int,
    xi: float = 0.0,
    board: int | None = None,
    **options: Any,
) -> model.Outcome:
    """Simulate ``len(probs)`` SE agents at confidence ``conf`` until the stopping rule fires; report the run.

    ``sync``: the kernel's ``SYNC_LAZY`` (K_n := K_n ∩ K_glob at the end of each activation, Algorithm 3 line
    12), ``SYNC_IMMEDIATE`` (every agent loses a globally eliminated arm at once, Algorithm 1) or ``SYNC_NONE``.
    ``options``: :class:`LoopOptions`. Local eliminations are logged in round order (by arm within a round);
    with a ``threshold`` every delivered one is a vote and a message (:func:`.model.vote_result`); without,
    INDEPENDENT recommends the majority of the finished agents' arms. ``board``: the smallest group the vote
    board releases (MASE: 1 direct, C anonymous); the kernel then removes an arm at its ``C ceil(M/C)``-th vote,
    when the released tally first reaches M (:func:`~anonbandits.core.votes.anonymous_threshold`), and the
    result records the releases.
    """
    opts = LoopOptions(**options)
    require(
        instance.model in model.MODELS,
        "reward",
        f"one of {', '.join(model.MODELS)} (the rewards {name} draws in its compiled loop)",
        instance.model,
    )
    require(opts.sampling in SAMPLINGS, "sampling", f"one of {', '.join(SAMPLINGS)}", opts.sampling)
    require(opts.width_c > 0, "width_c", "positive", opts.width_c)
    require(opts.width_denominator in (1, 2), "width_denominator", "1 (t) or 2 (2t)", opts.width_denominator)
    config = se_kernel.LoopConfig(
        instance.row,
        float(instance.sigma),
        np.asarray(probs, float),
        float(conf),
        float(opts.width_c),
        int(opts.width_denominator),
        anonymous_threshold(int(threshold or 0), board or 1),
        float(xi),
        bool(opts.retire_on_sync),
        opts.sampling == "fixed",
        _STOP[opts.stop],
        int(opts.max_rounds),
    )
    (rounds, pulls, G, votes, held, status, exit_round, elim, n_elim, glob, n_glob) = se_kernel.run_kernel(
        rng, config, instance.model == "gaussian-unclipped", sync
    )
    running, capped = bool((status == se_kernel.RUNNING).any()), rounds >= opts.max_rounds
    fields: dict[str, Any] = dict(
        rounds=int(rounds),
        pulls=int(pulls),
        threshold=threshold,
        global_eliminations=[(int(r), int(a)) for r, a in glob[:n_glob]],
    )
    if board is not None:  # with a vote board: what the agents found themselves (all of it without releases)
        fields["agent_accuracy"] = model.finished_accuracy(instance, held)
    if threshold is None:  # INDEPENDENT: the majority of the finished agents' arms
        arms = np.argmax(held[held.sum(axis=1) == 1], axis=1)
        tally = np.bincount(arms, minlength=instance.arms)
        recommended = int(rng.choice(np.flatnonzero(tally == tally.max())))
        return model.Outcome(
            name,
            instance,
            recommended,
            messages=MessageLog(record=record),
            votes=votes,
            truncated=capped and running,
            agent_accuracy=model.finished_accuracy(instance, held),
            exit_rounds=exit_round[exit_round >= 0].astype(float),
            **fields,
        )
    elim = elim[:n_elim]
    log = model.EliminationLog(elim[:, 0].copy(), elim[:, 1].copy(), elim[:, 2].copy(), elim[:, 3].astype(bool))
    return model.vote_result(
        name, instance, log, G, votes, rng, record, running=running, capped=capped, board=board, **fields
    )


@fill
def _corrupted_elimination(
    instance: MultiUserInstance,
    probs: np.ndarray,
    rng: np.random.Generator,
    *,
    eta: float = 0.9,
    xi: float = 0.05,
    delta: float = 0.05,
    record: bool = True,
    **options: Any,
) -> Result:
    """CORRUPTED ELIMINATION (paper 003, Algorithm 3 with local routine 4b).

    Every agent runs SE at local failure probability ``eta_xi = 1 - (1-eta)/(1-xi)^(K-1)`` (Prop. 5.1), with
    width ``2 sqrt(log(c K t_n^2/eta_xi)/t_n)`` on its cumulative means. Each local elimination's vote is
    delivered with probability ``1 - xi`` (the corruption mask, drawn once per (agent, arm); a dropped vote is
    never sent, never flipped) and the arm still leaves the local set. An arm leaves the global set at
    ``M* = ceil(log(delta)/log(eta_xi))`` delivered votes (eta_xi, not Algorithm 3's printed eta: the M of the
    proof of Prop. 5.2); agents synchronise with the global set at the end of every activation and leave the
    pool once one arm is left. With ``xi = 0``: the Féraud et al. (2019) baseline as paper 003 describes it
    (Sec. 5).

    Parameters
    ----------
    {{mase_instance_probs_rng}}
    eta : float, optional
        Apparent privacy level eta in (0, 1) (default 0.9).
    xi : float, optional
        Probability in [0, 1) that a vote is dropped (default 0.05).
    {{mase_delta_record}}
    **options : dict, optional
        Keywords of the compiled round loop: ``width_c`` (constant c of the SE width, default 1),
        ``width_denominator`` (1: the width uses t, 2: it uses 2t; Sec. 4.1), ``max_rounds`` (stop, ``truncated``,
        after this many rounds; default 10^9), ``sampling`` (``"active"``, default: draw among the agents still
        running, as P_N(t) of Algorithm 3 reads; or ``"fixed"``), ``retire_on_sync`` (also retire agents left
        with at most one arm by a sync; default ``False``: Algorithm 3 tests ``|K_n| = 1`` before the sync).

    Returns
    -------
    anonbandits.results.Result
        The metrics (the recommendation, rounds, samples, ...), the curve, and in ``info`` the votes, the messages
        (one per delivered vote) and the eliminations (:meth:`.model.Outcome.result`).

    Raises
    ------
    ConfigError
        If eta, xi or delta is out of range, ``xi`` leaves no local failure budget, ``M*`` exceeds the number of
        agents, or the reward model or an option is invalid.

    {{refs_paper003_paper002}}

    {{mase_example}}
    >>> res = corrupted_elimination(toy, activity_probabilities(32), np.random.default_rng(0))
    >>> res.metrics["recommended"], res.metrics["vote_threshold"], res.info["votes"].tolist()
    (0, 27, [0, 27])
    """
    local = model.eta_xi(eta, xi, instance.arms)
    return _run(
        "corrupted-elimination",
        instance,
        probs,
        rng,
        record,
        local,
        model.voting_threshold(delta, local, probs.size, "eta_xi"),
        sync=se_kernel.SYNC_LAZY,
        xi=xi,
        **options,
    ).result()


@fill
def _mase(
    instance: MultiUserInstance,
    probs: np.ndarray,
    rng: np.random.Generator,
    *,
    beta: float = 0.5,
    delta: float = 0.05,
    channel: str = "direct",
    C: int = 3,
    record: bool = True,
    **options: Any,
) -> Result:
    """The generic MASE scheme (paper 003, Algorithm 1) with the SE local elimination of Sec. 4.1.

    Local rule: eliminate k when ``max_l mu_l - mu_k >= 2 sqrt(log(c K t_n^2/beta)/t_n)`` (eq. (1) at
    confidence beta). Every local elimination is a vote; an arm with ``M* = ceil(log(delta)/log(beta))`` votes
    leaves the global set *and every agent's set at once* (Alg. 1's immediate synchronisation). Agents are never
    removed from the pool: an agent left with one arm keeps being activated and pulling it.

    With ``channel="anonymous"`` the vote board is k-anonymous (:mod:`anonbandits.core.votes`): it releases an
    arm's votes only as a tally of at least C distinct agents' votes, so an arm leaves at its ``C ceil(M*/C)``-th
    vote (when the released tally first reaches M*), never if fewer than that many agents ever vote against it
    (then the agents run alone until each holds one arm: no sharing, and the run ``stalled``). The releases are
    in ``releases``.

    Parameters
    ----------
    {{mase_instance_probs_rng}}
    beta : float, optional
        Local failure probability of each agent's SE, in (0, 1) (default 0.5).
    delta : float, optional
        Global failure probability in (0, 1) (default 0.05).
    channel : str, optional
        ``"direct"`` (default: every vote reaches the board at once) or ``"anonymous"``.
    C : int, optional
        The anonymity parameter of the anonymous channel, at least 1 (default 3; unused on the direct one).
    record : bool, optional
        Keep every message and elimination (default ``True``; else only the counts).
    **options : dict, optional
        Keywords of the compiled round loop: ``width_c`` (constant c of the SE width, default 1),
        ``width_denominator`` (1: the width uses t, 2: it uses 2t; Sec. 4.1), ``max_rounds`` (stop, ``truncated``,
        after this many rounds; default 10^9).

    Returns
    -------
    anonbandits.results.Result
        The metrics (the recommendation, rounds, samples, ...), the curve, and in ``info`` the votes, the messages
        (one per vote), the eliminations and the board's releases (:meth:`.model.Outcome.result`).

    Raises
    ------
    ConfigError
        If beta or delta is outside (0, 1), ``M*`` exceeds the number of agents, the channel is unknown or C is
        below 1, or the reward model or an option is invalid.

    {{refs_paper003}}

    {{mase_example}}
    >>> res = mase(toy, activity_probabilities(8), np.random.default_rng(0))
    >>> res.metrics["recommended"], res.metrics["vote_threshold"], res.metrics["rounds"]
    (0, 5, 497)
    """
    return _run(
        "mase",
        instance,
        probs,
        rng,
        record,
        beta,
        model.voting_threshold(delta, beta, probs.size, "beta"),
        sync=se_kernel.SYNC_IMMEDIATE,
        board=board_size(channel, C),
        **options,
    ).result()


@fill
def _independent(
    instance: MultiUserInstance,
    probs: np.ndarray,
    rng: np.random.Generator,
    *,
    delta: float = 0.05,
    stop: str = "all",
    record: bool = True,
    **options: Any,
) -> Result:
    """INDEPENDENT baseline (paper 003, Sec. 6): every agent runs its own SE at confidence
    ``delta`` on its own samples, with no communication at all.

    The recommendation is the majority of the finished agents' arms; ``agent_accuracy`` is the fraction of
    finished agents that found the best arm.

    Parameters
    ----------
    {{mase_instance_probs_rng}}
    delta : float, optional
        Each agent's failure probability, in (0, 1) (default 0.05).
    stop : str, optional
        ``"all"`` (default): finished agents leave the pool and the run ends when every agent is done, so T is the
        sum of the agents' local complexities; ``"first"``: the run ends at the first agent done.
    record : bool, optional
        Keep every message and elimination (default ``True``; else only the counts).
    **options : dict, optional
        Keywords of the compiled round loop: ``width_c`` (constant c of the SE width, default 1),
        ``width_denominator`` (1: the width uses t, 2: it uses 2t; Sec. 4.1), ``max_rounds`` (stop, ``truncated``,
        after this many rounds; default 10^9), ``sampling`` (``"active"``, default: draw among the agents still
        running, as P_N(t) of Algorithm 3 reads; or ``"fixed"``).

    Returns
    -------
    anonbandits.results.Result
        The metrics (the recommendation, rounds, samples, the agents' accuracy, ...), the curve, and in ``info``
        the agents' exit rounds; no messages (:meth:`.model.Outcome.result`).

    Raises
    ------
    ConfigError
        If ``stop`` is unknown, delta is outside (0, 1), or the reward model or an option is invalid.

    {{refs_paper003}}

    {{mase_example}}
    >>> res = independent(toy, activity_probabilities(8), np.random.default_rng(0))
    >>> res.metrics["recommended"], res.metrics["users_best_arm_found"], res.info["messages"].count
    (0, 1.0, 0)
    """
    require(stop in STOP_RULES, "stop", f"one of {', '.join(STOP_RULES)}", stop)
    model.check_probability("delta", delta)
    return _run(
        "independent", instance, probs, rng, record, delta, None, sync=se_kernel.SYNC_NONE, stop=stop, **options
    ).result()


@fill
def _central(
    instance: MultiUserInstance,
    probs: np.ndarray,
    rng: np.random.Generator,
    *,
    delta: float = 0.05,
    width_c: float = 1.0,
    width_denominator: int = 1,
    max_rounds: int = 10**9,
    record: bool = True,
) -> Result:
    """CENTRAL baseline (paper 003, Sec. 6): no privacy, SE on the pooled raw rewards.

    The server runs SE (Sec. 4.1) at confidence delta on the pooled samples, eliminating k when
    ``max_l S_l - S_k >= g(t)``; T does not depend on N. Each round the active agent pulls every arm of the
    global set and sends the rewards: every reward is one message (sender = active agent, time = round,
    content = the reward, kind = the arm). Rounds are drawn in blocks: per-round rewards of the arms still
    active, cumulated, with the SE test evaluated on every round of the block at once; the block is cut at its
    first elimination.

    Parameters
    ----------
    {{mase_instance_probs_rng}}
    delta : float, optional
        Global failure probability in (0, 1) (default 0.05).
    width_c : float, optional
        Constant c of the SE width (default 1).
    width_denominator : int, optional
        1 (default): the width uses t; 2: it uses 2t (Sec. 4.1).
    max_rounds : int, optional
        Stop (``truncated``) after this many rounds (default 10^9).
    record : bool, optional
        Keep every message (default ``True``; else only the count).

    Returns
    -------
    anonbandits.results.Result
        The metrics (the recommendation, rounds, samples, ...), the curve, and in ``info`` the messages and the
        global eliminations (:meth:`.model.Outcome.result`).

    Raises
    ------
    ConfigError
        If delta is outside (0, 1).

    {{refs_paper003}}

    {{mase_example}}
    >>> res = central(toy, activity_probabilities(8), np.random.default_rng(0))
    >>> res.metrics["recommended"], res.metrics["rounds"], res.info["messages"].count
    (0, 84, 168)
    """
    model.check_probability("delta", delta)
    k, channel = instance.arms, DirectChannel.of(instance, rng)
    active, sums, t, pulls = np.ones(k, bool), np.zeros(k), 0, 0
    messages = MessageLog(record=record)
    global_elims: list[tuple[int, int]] = []
    while active.sum() > 1 and t < max_rounds:
        block = min(_BLOCK, max_rounds - t)
        rewards = channel.draw(instance.row, (block, k)) * active
        cum = sums + np.cumsum(rewards, axis=0)
        rounds = t + 1 + np.arange(block)
        gap = np.where(active, cum, -np.inf).max(axis=1)[:, None] - cum
        cond = active & (gap >= se_boundary(rounds, k, delta, width_c, width_denominator)[:, None]) & (gap > 0)
        hits = np.flatnonzero(cond.any(axis=1))
        j = int(hits[0]) if hits.size else block - 1
        senders = rng.choice(probs.size, size=j + 1, p=probs)
        r_idx, a_idx = np.nonzero(np.broadcast_to(active, (j + 1, k)))
        messages.add(senders[r_idx], rounds[: j + 1][r_idx], rewards[: j + 1][r_idx, a_idx], a_idx)
        pulls += (j + 1) * int(active.sum())
        sums, t = cum[j], int(rounds[j])
        global_elims += [(t, int(arm)) for arm in np.flatnonzero(cond[j])]
        active &= ~cond[j]
    left = np.flatnonzero(active)
    recommended = int(left[np.argmax(sums[left])])
    return model.Outcome(
        "central",
        instance,
        recommended,
        rounds=t,
        pulls=pulls,
        messages=messages,
        votes=np.zeros(k, np.int64),
        truncated=bool(left.size > 1),
        global_eliminations=global_elims,
    ).result()


# The library functions, checking their arguments by the registry's rules (anonbandits.validation.validated); the
# registry entries (anonbandits.multiagent.mase.ALGORITHMS) call the unchecked bodies, their parameters being
# checked by resolve already.
corrupted_elimination = validated(_corrupted_elimination, instance=INSTANCE, record=BOOL)
mase = validated(_mase, instance=INSTANCE, record=BOOL)
independent = validated(_independent, instance=INSTANCE, record=BOOL)
central = validated(_central, instance=INSTANCE, record=BOOL)
