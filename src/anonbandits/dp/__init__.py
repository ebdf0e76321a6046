"""Single-learner private bandits (paper 001) and the DP-SE baseline shared with paper 004.

Algorithms, each a function that runs one simulation and returns a :class:`BanditRun`:
:func:`se`, :func:`dp_se` (:func:`successive_elimination` underneath), :func:`anytime_lazy_ucb`,
:func:`hybrid_ucb` (and :func:`hybrid_ucb_batch` for many runs in lockstep) and :func:`ftnl` (experts
setting; ``naive=True`` for naive FTNL). ``ALGORITHMS`` registers them with the simulator. The
distributed-DP elimination family lives in :mod:`anonbandits.dp.distributed`.
"""

from anonbandits.dp.algorithms import ALGORITHMS
from anonbandits.dp.common import BanditRun, Ledger, RegretTrace
from anonbandits.dp.elimination import dp_se, se, successive_elimination
from anonbandits.dp.ftnl import ftnl
from anonbandits.dp.hybrid_ucb import HybridBatch, hybrid_ucb, hybrid_ucb_batch
from anonbandits.dp.lazy_ucb import anytime_lazy_ucb

__all__ = ["ALGORITHMS", "BanditRun", "HybridBatch", "Ledger", "RegretTrace", "anytime_lazy_ucb", "dp_se",
           "ftnl", "hybrid_ucb", "hybrid_ucb_batch", "se", "successive_elimination"]
