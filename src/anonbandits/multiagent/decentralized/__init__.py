"""Decentralized exploration in multi-armed bandits (paper 002: Féraud, Alami, Laroche, ICML 2019).

DECENTRALIZED ELIMINATION with its Arm Selection subroutines, the 1-PRIVACY (no sharing) and 0-PRIVACY (full
sharing) baselines and the non-stationary DSER4, all simulated step by step by one compiled kernel
(:mod:`.kernel`). One run of each is a plain function returning a :class:`DecentralizedResult`;
:data:`ALGORITHMS` registers them with the simulator.
"""

from anonbandits.multiagent.decentralized.algorithms import (
    ALGORITHMS,
    KIND_REWARD,
    KIND_VOTE,
    DecentralizedResult,
    run_decentralized_elimination,
    run_dser4,
    run_full_sharing,
    run_no_sharing,
    vote_threshold,
)
from anonbandits.multiagent.decentralized.environment import Environment

__all__ = ["ALGORITHMS", "KIND_REWARD", "KIND_VOTE", "DecentralizedResult", "Environment",
           "run_decentralized_elimination", "run_dser4", "run_full_sharing", "run_no_sharing", "vote_threshold"]
