"""What one run of a paper-003 algorithm reports: the recommendation, costs, messages and audit logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonbandits.multiagent.mase.instances import Instance
from anonbandits.multiagent.shared import MessageLog


@dataclass
class EliminationLog:
    """Every local elimination: ``agent``, ``arm``, ``time`` (round) and ``delivered`` (vote actually sent).

    For CORRUPTED ELIMINATION an undelivered entry is a vote dropped by the corruption mask; the other
    algorithms deliver every vote.
    """

    agent: np.ndarray
    arm: np.ndarray
    time: np.ndarray
    delivered: np.ndarray


@dataclass
class NoiseAudit:
    """DP-MASE's Laplace mechanism, one row per released noisy mean (agent, epoch, arm).

    ``scale`` is the Laplace scale used (``1/(eps_dp R)``); ``noisy - mean`` is the noise actually added.
    """

    agent: np.ndarray
    epoch: np.ndarray
    arm: np.ndarray
    length: np.ndarray
    mean: np.ndarray
    noisy: np.ndarray
    scale: np.ndarray


@dataclass
class MaseResult:
    """Outcome of one run on ``instance``.

    ``rounds`` is the paper's sample complexity T (iterations of the main loop); ``pulls`` counts every arm
    pull (one round pulls every arm of the active agent's set) and is reported as ``samples``; ``correct``
    says whether the recommended arm has the largest mean.
    """

    algorithm: str
    instance: Instance
    recommended: int
    rounds: int
    pulls: int
    messages: MessageLog
    votes: np.ndarray
    threshold: int | None = None
    stalled: bool = False
    truncated: bool = False
    eliminations: EliminationLog | None = None
    global_eliminations: list[tuple[int, int]] = field(default_factory=list)
    agent_accuracy: float | None = None
    exit_rounds: np.ndarray | None = None
    noise: NoiseAudit | None = None

    @property
    def correct(self) -> bool:
        return self.instance.is_best(self.recommended)

    def metrics(self) -> dict[str, Any]:
        """Columns of the results table."""
        out: dict[str, Any] = {
            "samples": int(self.pulls), "rounds": int(self.rounds), "messages": int(self.messages.count),
            "recommended": int(self.recommended), "correct": self.correct,
            "threshold": -1 if self.threshold is None else int(self.threshold),
            "stalled": bool(self.stalled), "truncated": bool(self.truncated),
            "votes": ",".join(str(int(v)) for v in self.votes),
        }
        if self.eliminations is not None:
            out["local_eliminations"] = int(self.eliminations.arm.size)
            out["best_eliminated_locally"] = int((self.eliminations.arm == self.instance.best).sum())
            out["dropped_votes"] = int((~self.eliminations.delivered).sum())
        if self.agent_accuracy is not None:
            out["agent_accuracy"] = float(self.agent_accuracy)
        return out | {"instance": self.instance.name, "arms": self.instance.arms}

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        """Step curve: arms left in the global set against rounds (agents still running for INDEPENDENT)."""
        if self.exit_rounds is not None:
            steps, start = np.sort(self.exit_rounds), float(self.exit_rounds.size)
        else:
            steps, start = np.array([r for r, _ in self.global_eliminations], dtype=float), float(self.instance.arms)
        x = np.concatenate([[0.0], np.repeat(steps, 2), [float(self.rounds)]])
        return x, np.repeat(start - np.arange(steps.size + 1), 2)


def vote_result(algorithm: str, instance: Instance, log: EliminationLog, global_set: np.ndarray, votes: np.ndarray,
                rng: np.random.Generator, record: bool, **fields: Any) -> MaseResult:
    """The result of a voting run (MASE, DP-MASE, CORRUPTED ELIMINATION): every delivered elimination of ``log``
    is a message (sender, round, arm index); the recommendation is the last arm of ``global_set``, or after a
    stall or truncation an arm with the fewest ``votes``, drawn with ``rng``. ``fields``: the other
    :class:`MaseResult` fields."""
    messages = MessageLog(record=record)
    messages.add(log.agent[log.delivered], log.time[log.delivered], log.arm[log.delivered])
    left = np.flatnonzero(global_set)
    recommended = int(left[0]) if left.size == 1 else int(rng.choice(left[votes[left] == votes[left].min()]))
    return MaseResult(algorithm, instance, recommended, messages=messages, votes=votes, eliminations=log, **fields)
