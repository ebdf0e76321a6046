"""Anonymous bandits (paper 000): Algorithm 1 (``anon-batched``), Algorithm 2 (``anon-etc``), best-arm
identification for every user (``anon-bai``) and the regret of any batched learners over either channel
(:func:`batched_regret`: ``se`` and ``dp-se --channel anonymous``)."""

from anonbandits.anonymous import algorithm1, algorithm2
from anonbandits.anonymous.algorithm1 import NotUBatchedError
from anonbandits.anonymous.bai import IdentificationRun, identify, stop_curve
from anonbandits.anonymous.regret import AnonymousRun, BatchRecord, batched_regret
from anonbandits.anonymous.specs import ALGORITHMS
from anonbandits.core import schedules
from anonbandits.validation import validated

# The library functions, checking their arguments by the registry's rules (anonbandits.validation) before
# they run (the registry entries call the unchecked ones: resolve has checked their parameters).
_NAMES = {"n_users": "users", "n_arms": "arms"}
anon_batched = validated(algorithm1.anon_batched, **_NAMES)
anon_etc = validated(algorithm2.anon_etc, **_NAMES)
etc_assignments = validated(algorithm2.etc_assignments, **_NAMES)
guaranteed_ratio = validated(algorithm1.guaranteed_ratio, **_NAMES)
exploration_length = validated(schedules.exploration_length, **_NAMES)  # Algorithm 2's, in the core

__all__ = ["ALGORITHMS", "AnonymousRun", "BatchRecord", "IdentificationRun", "NotUBatchedError", "anon_batched",
           "anon_etc", "batched_regret", "etc_assignments", "exploration_length", "guaranteed_ratio", "identify",
           "stop_curve"]
