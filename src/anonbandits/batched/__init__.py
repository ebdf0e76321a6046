"""Static batch grids and batched successive elimination, vectorised over many learners."""

from anonbandits.batched.base import THRESHOLDS, BatchedElimination
from anonbandits.batched.grids import GRIDS, default_batches, static_grid

__all__ = ["GRIDS", "THRESHOLDS", "BatchedElimination", "default_batches", "static_grid"]
