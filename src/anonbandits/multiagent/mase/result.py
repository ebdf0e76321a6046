"""What one run of a paper-003 algorithm reports: the recommendation, costs, messages and audit logs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonbandits.multiagent.shared import MessageLog


@dataclass
class EliminationLog:
    """Every local elimination: ``agent``, ``arm``, ``time`` (round) and ``delivered`` (vote actually sent).

    For CORRUPTED ELIMINATION an undelivered entry is a vote dropped by the corruption mask; the other
    algorithms deliver every vote.
    """

    agent: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    arm: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    time: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    delivered: np.ndarray = field(default_factory=lambda: np.empty(0, bool))


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
    """Outcome of one run.

    ``rounds`` is the paper's sample complexity T (iterations of the main loop); ``pulls`` counts every arm
    pull (one round pulls every arm of the active agent's set) and is reported as ``samples``.
    """

    algorithm: str
    recommended: int
    correct: bool
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
    arms: int = 0
    best: int = 0

    def metrics(self) -> dict[str, Any]:
        """Columns of the results table."""
        out: dict[str, Any] = {
            "samples": int(self.pulls), "rounds": int(self.rounds), "messages": int(self.messages.count),
            "recommended": int(self.recommended), "correct": bool(self.correct),
            "threshold": -1 if self.threshold is None else int(self.threshold),
            "stalled": bool(self.stalled), "truncated": bool(self.truncated),
            "votes": ",".join(str(int(v)) for v in self.votes),
        }
        if self.eliminations is not None:
            best = self.eliminations.arm == self.best
            out["local_eliminations"] = int(self.eliminations.arm.size)
            out["best_eliminated_locally"] = int(best.sum())
            out["dropped_votes"] = int((~self.eliminations.delivered).sum())
        if self.agent_accuracy is not None:
            out["agent_accuracy"] = float(self.agent_accuracy)
        return out

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        """Step curve: arms left in the global set against rounds (agents still running for INDEPENDENT)."""
        if self.exit_rounds is not None:
            steps = np.sort(self.exit_rounds)
            start = float(self.exit_rounds.size)
        else:
            steps = np.array([r for r, _ in self.global_eliminations], dtype=float)
            start = float(self.arms)
        x = np.concatenate([[0.0], np.repeat(steps, 2), [float(self.rounds)]])
        levels = start - np.arange(steps.size + 1)
        y = np.repeat(levels, 2)
        return x, y


def recommend(global_set: np.ndarray, votes: np.ndarray, rng: np.random.Generator) -> int:
    """The last arm of the global set; after a stall or truncation, an arm with the fewest votes, at random."""
    left = np.flatnonzero(global_set)
    if left.size == 1:
        return int(left[0])
    return int(rng.choice(left[votes[left] == votes[left].min()]))
