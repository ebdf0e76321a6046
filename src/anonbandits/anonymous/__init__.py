"""Anonymous bandits (Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS
2022): Algorithm 1 (``anon-batched``), Algorithm 2 (``anon-etc``), best-arm identification for every user
(``anon-bai``) and the regret of any batched learners over any feedback channel (:func:`batched_regret`: ``se``
and ``dp-se --channel anonymous``). Every library call returns :class:`anonbandits.results.Result`."""

from anonbandits.anonymous._legacy import old_names
from anonbandits.anonymous.algorithm1 import NotUBatchedError, anon_batched, guaranteed_ratio
from anonbandits.anonymous.algorithm2 import anon_etc, etc_assignments
from anonbandits.anonymous.bai import error_rate, identify, stop_curve
from anonbandits.anonymous.batches import BatchRecord
from anonbandits.anonymous.entries import ALGORITHMS
from anonbandits.anonymous.regret import batched_regret
from anonbandits.core import schedules
from anonbandits.validation import validated

# The library functions check their arguments by the registry's rules (anonbandits.validation) before they run;
# Algorithm 2's exploration length is the core's, exported here checked.
exploration_length = validated(schedules.exploration_length, n_users="users", n_arms="arms")

# the result types before Result (for one release, with a DeprecationWarning)
__getattr__ = old_names(__name__, ("AnonymousRun", "IdentificationRun"))

__all__ = [
    "ALGORITHMS",
    "BatchRecord",
    "NotUBatchedError",
    "anon_batched",
    "anon_etc",
    "batched_regret",
    "error_rate",
    "etc_assignments",
    "exploration_length",
    "guaranteed_ratio",
    "identify",
    "stop_curve",
]
