"""Feedback channels: a driver asks for a batch (learners x arms x samples wanted) and gets back sums and
counts; privacy mechanisms apply to what a channel releases (see docs/architecture.md).

* :class:`DirectChannel`: exact sufficient statistics (a sum of n Bernoulli rewards is one binomial draw);
* :class:`AnonymousChannel`: paper 000's channel (decomposition by ``anondecomp``, the 2C+2-round
  sub-algorithm, the auditor: the only path by which an anonymous learner observes rewards);
* mechanisms :class:`CentralLaplace` and :class:`Distributed` (central, local, distributed and shuffle
  protocols of paper 004) on any channel's released sums.
"""

from anonbandits.channels.anonymous import AnonymousChannel, Feedback
from anonbandits.channels.direct import Batch, DirectChannel, RewardSum
from anonbandits.channels.mechanisms import CentralLaplace, Distributed, NoisyRelease

__all__ = ["AnonymousChannel", "Batch", "CentralLaplace", "DirectChannel", "Distributed", "Feedback",
           "NoisyRelease", "RewardSum"]
