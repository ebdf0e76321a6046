"""The elimination core: every confidence radius, batch or epoch schedule and elimination rule of the bandit
layer (see docs/architecture.md). Drivers compose these; no other module computes a radius."""

from anonbandits.core.elimination import THRESHOLDS, BatchedElimination, gap_survivors, interval_survivors
from anonbandits.core.schedules import GRIDS, checkpoint_grid, default_batches, epoch_length, static_grid

__all__ = [
    "GRIDS",
    "THRESHOLDS",
    "BatchedElimination",
    "checkpoint_grid",
    "default_batches",
    "epoch_length",
    "gap_survivors",
    "interval_survivors",
    "static_grid",
]
