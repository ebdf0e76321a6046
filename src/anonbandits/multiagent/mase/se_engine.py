"""Many agents running Successive Elimination on one bandit: the protocol options and the run's outcome.

This engine runs the voting schemes of paper 003 whose local routine is Successive Elimination (SE, Sec. 4.1):
CORRUPTED ELIMINATION (Alg. 3 with Alg. 4b), the generic MASE scheme (Alg. 1) and the INDEPENDENT baseline
(Sec. 6). One *round* is one activation of one agent, which pulls every arm of its local set. The simulation
is the compiled round loop of :mod:`~anonbandits.multiagent.mase.se_kernel`; this module turns the options
into its arguments and its arrays into logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anonbandits.multiagent.mase import se_kernel
from anonbandits.multiagent.mase.instances import Instance
from anonbandits.multiagent.mase.result import EliminationLog
from anonbandits.multiagent.messages import MessageLog

_SYNC = {"none": se_kernel.SYNC_NONE, "lazy": se_kernel.SYNC_LAZY, "immediate": se_kernel.SYNC_IMMEDIATE}
_STOP = {"global": se_kernel.STOP_GLOBAL, "all": se_kernel.STOP_ALL, "first": se_kernel.STOP_FIRST}


@dataclass(frozen=True)
class SEProtocol:
    """How the agents interact.

    conf : local failure probability of every agent's SE (``eta_xi``, ``beta`` or ``delta``).
    threshold : votes needed for a global elimination (``M*``); ``None`` means no communication.
    xi : probability that a vote is dropped (CORRUPTED ELIMINATION's mask, spec A21).
    sync : ``"lazy"`` (K_n := K_n ∩ K_glob at the end of each activation, Alg. 3 line 12), ``"immediate"``
        (every agent loses a globally eliminated arm at once, Alg. 1) or ``"none"``.
    retire : agents whose local set has one arm leave the pool (Alg. 3 line 10); otherwise (Alg. 1) they stay
        and keep pulling that arm.
    retire_on_sync : also retire agents left with at most one arm by a sync (spec A9 option).
    sampling : ``"active"`` draws the agent among those still in the pool (spec A10); ``"fixed"`` keeps
        drawing from the fixed P_N, the rounds of agents that left being idle rounds that still count.
    stop : ``"global"`` (one arm left globally), ``"all"`` (every agent finished) or ``"first"`` (the first
        agent finished; INDEPENDENT's options, spec A14).
    width_c, width_denominator : the constant c and the t / 2t choice of the SE width (spec A4).
    max_rounds : the run stops (``truncated``) after this many rounds.
    """

    conf: float
    threshold: int | None
    xi: float = 0.0
    sync: str = "lazy"
    retire: bool = True
    retire_on_sync: bool = False
    sampling: str = "active"
    stop: str = "global"
    width_c: float = 1.0
    width_denominator: int = 1
    max_rounds: int = 10**9


@dataclass
class SEOutcome:
    """Raw outcome of :func:`run_se_agents` (turned into a :class:`MaseResult` by the algorithm modules)."""

    rounds: int
    pulls: int
    global_set: np.ndarray
    votes: np.ndarray
    local_sets: np.ndarray
    finished: np.ndarray
    exit_rounds: np.ndarray
    messages: MessageLog
    eliminations: EliminationLog
    global_eliminations: list[tuple[int, int]] = field(default_factory=list)
    stalled: bool = False
    truncated: bool = False


def run_se_agents(instance: Instance, probs: np.ndarray, proto: SEProtocol, rng: np.random.Generator,
                  record: bool = True) -> SEOutcome:
    """Simulate ``len(probs)`` agents running SE under ``proto`` until its stopping rule fires.

    Local eliminations are logged in round order (by arm within a round); every delivered one is a vote and a
    message (sender, round, arm) when ``proto.threshold`` is set. ``exit_rounds[n]`` is the round in which
    agent n left the pool or (Alg. 1) was left with one arm by its own eliminations, -1 if it did not.
    """
    (rounds, pulls, G, votes, held, status, exit_round, elim, n_elim, glob, n_glob) = se_kernel.run_kernel(
        rng, np.asarray(instance.means, float), instance.model == "gaussian", float(instance.sigma),
        np.asarray(probs, float), float(proto.conf), float(proto.width_c), int(proto.width_denominator),
        int(proto.threshold or 0), float(proto.xi), _SYNC[proto.sync], bool(proto.retire),
        bool(proto.retire_on_sync), proto.sampling == "fixed", _STOP[proto.stop], int(proto.max_rounds))
    elim = elim[:n_elim]
    log = EliminationLog(elim[:, 0].copy(), elim[:, 1].copy(), elim[:, 2].copy(), elim[:, 3].astype(bool))
    messages = MessageLog(record=record)
    if proto.threshold is not None:
        ok = log.delivered
        messages.add(log.agent[ok], log.time[ok], log.arm[ok])
    running = bool((status == se_kernel.RUNNING).any())
    done_globally = proto.stop == "global" and int(G.sum()) == 1
    stalled = proto.stop == "global" and not done_globally and not running and rounds < proto.max_rounds
    truncated = rounds >= proto.max_rounds and not done_globally and running
    return SEOutcome(int(rounds), int(pulls), G, votes, held, held.sum(axis=1) == 1, exit_round, messages, log,
                     [(int(r), int(a)) for r, a in glob[:n_glob]], bool(stalled), bool(truncated))
