"""Decentralized exploration in multi-armed bandits (paper 002: Féraud, Alami, Laroche, ICML 2019).

DECENTRALIZED ELIMINATION with its Arm Selection subroutines, the 1-PRIVACY (no sharing) and 0-PRIVACY (full
sharing) baselines and the non-stationary DSER4, all simulated step by step by one compiled kernel
(:mod:`.kernel`). One run of each is a plain function returning a :class:`DecentralizedResult`;
:data:`ALGORITHMS` registers them with the simulator.
"""

from anonbandits.multiagent.decentralized import algorithms as _algorithms
from anonbandits.multiagent.decentralized.algorithms import (
    ALGORITHMS,
    KIND_REWARD,
    KIND_VOTE,
    DecentralizedResult,
    vote_threshold,
)
from anonbandits.multiagent.decentralized.environment import Environment
from anonbandits.validation import validated

# The library functions, checking their arguments by the registry's rules (anonbandits.validation) under the
# registry's names; ``means`` may be an Environment and ``eps`` 0 (se, ser3), so the functions check those.
_NAMES = {"n_agents": "users", "max_steps": "max_rounds", "means": "", "horizon": "horizon"}
run_decentralized_elimination = validated(_algorithms.run_decentralized_elimination, **_NAMES)
run_dser4 = validated(_algorithms.run_dser4, **_NAMES)
run_full_sharing = validated(_algorithms.run_full_sharing, **_NAMES)
run_no_sharing = validated(_algorithms.run_no_sharing, **_NAMES)

__all__ = ["ALGORITHMS", "KIND_REWARD", "KIND_VOTE", "DecentralizedResult", "Environment",
           "run_decentralized_elimination", "run_dser4", "run_full_sharing", "run_no_sharing", "vote_threshold"]
