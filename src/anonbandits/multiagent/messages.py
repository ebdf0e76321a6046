"""The messages a multi-agent algorithm sends, kept as columns so privacy can be checked after a run.

Algorithms append one block of messages per epoch (vectorised over agents), never one Python object per
message, so a run with millions of messages stays cheap. ``content`` holds one number per message; what it
means (an arm index, a vote, a noisy count) is the algorithm's to document, with ``kind`` telling apart
message types of one algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MessageLog:
    """Columns ``sender``, ``time``, ``kind``, ``content``, each a 1-D array of one entry per message.

    ``record=False`` keeps only the count (for large benchmark runs).
    """

    record: bool = True
    count: int = 0
    _blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def add(self, sender, time, content, kind: int | np.ndarray = 0) -> None:
        """Append messages; the arguments broadcast against each other."""
        sender, time, content, kind = np.broadcast_arrays(np.asarray(sender), np.asarray(time),
                                                          np.asarray(content), np.asarray(kind))
        self.count += sender.size
        if self.record and sender.size:
            self._blocks.append((sender.ravel().copy(), time.ravel().copy(), kind.ravel().copy(),
                                 content.ravel().copy()))

    def _column(self, k: int) -> np.ndarray:
        if not self.record:
            raise ValueError("this log was created with record=False and kept only the count")
        return np.concatenate([b[k] for b in self._blocks]) if self._blocks else np.empty(0)

    @property
    def sender(self) -> np.ndarray:
        return self._column(0)

    @property
    def time(self) -> np.ndarray:
        return self._column(1)

    @property
    def kind(self) -> np.ndarray:
        return self._column(2)

    @property
    def content(self) -> np.ndarray:
        return self._column(3)

    def of_sender(self, agent: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(time, kind, content) of every message ``agent`` sent: what an observer of that agent sees."""
        mask = self.sender == agent
        return self.time[mask], self.kind[mask], self.content[mask]
