"""Distributed-DP batched successive elimination (paper 004, Chowdhury & Zhou, ICLR 2023): Algorithm 1 with
central, local, SecAgg (Polya, Skellam, discrete Gaussian) and shuffle protocols."""

from anonbandits.dp.distributed.algorithms import ALGORITHMS
from anonbandits.dp.distributed.elimination import EliminationResult, run_elimination
from anonbandits.dp.distributed.protocols import PROTOCOLS, BatchParams, Protocol

__all__ = ["ALGORITHMS", "PROTOCOLS", "BatchParams", "EliminationResult", "Protocol", "run_elimination"]
