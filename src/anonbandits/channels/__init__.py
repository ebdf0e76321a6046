"""Feedback channels (a driver asks for a batch: learners x arms x samples; it gets sums and counts) and the
privacy mechanisms on what they release (docs/architecture.md): :class:`DirectChannel` (exact sufficient
statistics), :class:`AnonymousChannel` (paper 000's audited 2C+2-round channel), :class:`CentralLaplace` and
:class:`Distributed` (paper 004's protocols), the last two found here and in their module
:mod:`anonbandits.privacy.mechanisms`."""

from anonbandits.channels.anonymous import AnonymousChannel, Feedback, elicitation_rounds, elicitation_variance
from anonbandits.channels.direct import Batch, DirectChannel, RewardSum
from anonbandits.privacy.mechanisms import CentralLaplace, Distributed, NoisyRelease, laplace_noise

__all__ = ["AnonymousChannel", "Batch", "CentralLaplace", "DirectChannel", "Distributed", "Feedback",
           "NoisyRelease", "RewardSum", "elicitation_rounds", "elicitation_variance", "laplace_noise"]
