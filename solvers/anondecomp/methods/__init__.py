"""Decomposition methods, one module each, each with one public function returning a Decomposition."""

from anondecomp.methods.auto import auto_decomposition
from anondecomp.methods.block import block_decomposition
from anondecomp.methods.greedy import greedy_decomposition
from anondecomp.methods.optimal import optimal_decomposition
from anondecomp.methods.polytope import polytope_decomposition
from anondecomp.methods.randomized import randomized_decomposition
from anondecomp.methods.sessions import sessions_decomposition
from anondecomp.methods.slack import slack_decomposition

__all__ = [
    "auto_decomposition",
    "block_decomposition",
    "greedy_decomposition",
    "optimal_decomposition",
    "polytope_decomposition",
    "randomized_decomposition",
    "sessions_decomposition",
    "slack_decomposition",
]
