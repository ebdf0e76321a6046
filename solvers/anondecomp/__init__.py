"""anondecomp: C-anonymous decompositions of demand graphs (the solver layer of anonbandits).

Standalone: depends only on numpy, scipy, highspy and pyarrow (imported when a Parquet or CSV file is read or
written). Reference: Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022
(paper 000).

>>> import numpy as np, anondecomp
>>> g = anondecomp.DemandGraph.from_batched(100, np.ones((12, 3), bool))
>>> res = anondecomp.decompose(g, C=3, method="polytope")
>>> res.total_assignments, anondecomp.verify(g, 3, res).valid
(102, True)
"""

from anondecomp.absence import robust_group_size
from anondecomp.beta import BetaResult, beta
from anondecomp.caratheodory import CaratheodoryResult, caratheodory
from anondecomp.decompose import METHOD_TABLE, METHODS, Method, decompose, method_info
from anondecomp.errors import (
    AnonDecompError,
    AnonDecompWarning,
    InfeasibleError,
    InvalidInputError,
    InvalidTypeError,
    MethodNotApplicableError,
    SolverError,
)
from anondecomp.graph import DemandGraph
from anondecomp.io import read_decomposition, read_graph, write_decomposition
from anondecomp.lower_bound import LPBound, lp_lower_bound
from anondecomp.polytope import Membership, check_membership, membership
from anondecomp.replan import replan
from anondecomp.result import Decomposition
from anondecomp.stream import InteractionLog, StreamWindow, read_log, stream_windows, write_stream
from anondecomp.ubatched import check_u_batched
from anondecomp.verify import VerificationReport, coverage, verify

__all__ = [
    "METHODS",
    "METHOD_TABLE",
    "AnonDecompError",
    "AnonDecompWarning",
    "BetaResult",
    "CaratheodoryResult",
    "Decomposition",
    "DemandGraph",
    "InfeasibleError",
    "InteractionLog",
    "InvalidInputError",
    "InvalidTypeError",
    "LPBound",
    "Membership",
    "Method",
    "MethodNotApplicableError",
    "SolverError",
    "StreamWindow",
    "VerificationReport",
    "beta",
    "caratheodory",
    "check_membership",
    "check_u_batched",
    "coverage",
    "decompose",
    "lp_lower_bound",
    "membership",
    "method_info",
    "read_decomposition",
    "read_graph",
    "read_log",
    "replan",
    "robust_group_size",
    "stream_windows",
    "verify",
    "write_decomposition",
    "write_stream",
]
