"""Decentralized exploration in multi-armed bandits (paper 002: Féraud, Alami, Laroche, ICML 2019).

DECENTRALIZED ELIMINATION with its Arm Selection subroutines, the 1-PRIVACY (no sharing) and 0-PRIVACY (full
sharing) baselines and the non-stationary DSER4, all simulated step by step by one compiled kernel
(:mod:`.kernel`). One run of each is a plain function returning an :class:`anonbandits.results.Result`, the
per-player and per-arm data in its ``info``; :data:`ALGORITHMS` registers them with the simulator. The functions
are those of :mod:`.algorithms`, which check their arguments by the registry's rules (:mod:`anonbandits.validation`).
"""

from anonbandits._deprecated import moved
from anonbandits.multiagent.decentralized.algorithms import (
    ALGORITHMS,
    KIND_REWARD,
    KIND_VOTE,
    run_decentralized_elimination,
    run_dser4,
    run_full_sharing,
    run_no_sharing,
    vote_threshold,
)
from anonbandits.multiagent.decentralized.environment import MeansSchedule
from anonbandits.results import Result

__all__ = [
    "ALGORITHMS",
    "KIND_REWARD",
    "KIND_VOTE",
    "MeansSchedule",
    "run_decentralized_elimination",
    "run_dser4",
    "run_full_sharing",
    "run_no_sharing",
    "vote_threshold",
]

__getattr__ = moved(
    __name__,
    {},
    {
        "DecentralizedResult": (Result, "anonbandits.results.Result (the per-player and per-arm data are in its info)"),
        "Environment": (MeansSchedule, "anonbandits.multiagent.decentralized.MeansSchedule"),
    },
)
