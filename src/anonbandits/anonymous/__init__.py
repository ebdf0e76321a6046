"""Anonymous bandits (paper 000): Algorithm 1 (``anon-batched``) and Algorithm 2 (``anon-etc``)."""

from anonbandits.anonymous.algorithm1 import AnonymousRun, BatchRecord, NotUBatchedError, anon_batched, guaranteed_ratio
from anonbandits.anonymous.algorithm2 import anon_etc, etc_assignments
from anonbandits.anonymous.specs import ALGORITHMS
from anonbandits.core.schedules import exploration_length  # Algorithm 2's, in the core with every schedule

__all__ = ["ALGORITHMS", "AnonymousRun", "BatchRecord", "NotUBatchedError", "anon_batched", "anon_etc",
           "etc_assignments", "exploration_length", "guaranteed_ratio"]
