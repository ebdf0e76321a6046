"""Multi-agent best-arm identification with private communications (paper 003: Rio et al., ICML 2023).

MASE (Alg. 1), DP-MASE (Alg. 2), CORRUPTED ELIMINATION (Alg. 3) and the CENTRAL and INDEPENDENT baselines;
see docs/multi-agent-bai.md. The Féraud et al. (2019) baseline is paper 002's Decentralized Elimination
(``decentralized-elimination`` with the SE subroutine), or CORRUPTED ELIMINATION with ``xi = 0``.
"""

from anonbandits.multiagent.mase.algorithms import ALGORITHMS
from anonbandits.multiagent.mase.dp_mase import DPMASEConfig, dp_mase, dp_mase_local_elimination
from anonbandits.multiagent.mase.instances import Instance, activity_probabilities, problem
from anonbandits.multiagent.mase.result import EliminationLog, MaseResult, NoiseAudit
from anonbandits.multiagent.mase.voting import central, corrupted_elimination, independent, mase

__all__ = ["ALGORITHMS", "DPMASEConfig", "EliminationLog", "Instance", "MaseResult", "NoiseAudit",
           "activity_probabilities", "central", "corrupted_elimination", "dp_mase", "dp_mase_local_elimination",
           "independent", "mase", "problem"]
