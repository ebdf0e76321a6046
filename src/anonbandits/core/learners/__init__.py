"""Batched elimination learners: the protocol every elimination scheme speaks to a driver, and its
vectorised implementations for many learners at once.

A *learner* here is one user's (or agent's) elimination algorithm; an object of this module holds N of them as
(N, K) arrays. A driver runs them batch by batch over any channel (docs/architecture.md):

1. :meth:`BatchLearner.demand` -- the samples each learner wants from each arm in the next batch ((N, K)
   integers; a row of zeros for a learner that has stopped or wants nothing this batch);
2. the channel serves them (directly, or through an anonymous decomposition) and returns sums and counts;
3. :meth:`BatchLearner.update` takes exactly the demanded samples, with the channel's variance proxy
   ``sigma2`` (1/4 for rewards in [0, 1] on the direct channel; ``(4C+1)/4`` for the anonymous
   sub-algorithm's estimates; more with privacy noise), and eliminates;
4. :attr:`BatchLearner.exploring` says who still wants samples, :meth:`BatchLearner.recommendation` what each
   learner recommends (its commitment once it has stopped).

A learner uses exactly the samples it demanded: a decomposer that over-covers gives some pairs more samples,
and the driver discards the surplus (and counts it) before calling :meth:`~BatchLearner.update`, which
refuses any other count. Every confidence radius scales with the variance proxy: the papers' radii are written
for rewards in [0, 1] (sub-Gaussian with proxy 1/4), so a proxy ``sigma2`` multiplies squared radii, and the
sample counts of fixed-design schemes, by ``4 sigma2``.

:class:`BestArmElimination` implements the (epsilon, delta)-PAC best-arm identification subroutines of
"Decentralized Exploration in Multi-Armed Bandits" (Féraud, Alami, Laroche, ICML 2019, paper 002, Section 3):
naive and median elimination (Even-Dar, Mannor, Mansour, COLT 2002) and successive elimination, plain and
SER3's (Allesiardo, Féraud, Maillard, 2017). :class:`EpochElimination` is successive elimination with the
doubling epochs of DP-SE (Sajed and Sheffet, ICML 2019), the regret learner of "Near-Optimal Algorithms for
Private Online Learning in a Stochastic Environment" (paper 001) and of "Distributed Differential Privacy in
Multi-Armed Bandits" (Chowdhury and Zhou, ICLR 2023, paper 004): it needs no horizon. :class:`BaSEElimination`
puts Algorithm 1's BaSE learners (:class:`~anonbandits.core.elimination.BatchedElimination`) behind the same
protocol.
"""

from anonbandits.core.learners.batched_se import BaSEElimination
from anonbandits.core.learners.best_arm import SUBROUTINES, BestArmElimination
from anonbandits.core.learners.epochs import EpochElimination
from anonbandits.core.learners.protocol import UNIT_SIGMA2, BatchLearner
from anonbandits.core.learners.ugapec import BAI_SCHEMES, UGapEc

__all__ = [
    "BAI_SCHEMES",
    "SUBROUTINES",
    "UNIT_SIGMA2",
    "BaSEElimination",
    "BatchLearner",
    "BestArmElimination",
    "EpochElimination",
    "UGapEc",
]
