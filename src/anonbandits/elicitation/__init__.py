"""The 2C+2-round feedback-eliciting sub-algorithm and the anonymity auditor (paper 000, Section 3.1); the
channel that runs them is :class:`anonbandits.channels.AnonymousChannel`."""

from anonbandits.elicitation.auditor import AnonymityAuditor
from anonbandits.elicitation.subalgorithm import elicitation_rounds, estimates_from_sums, partition_groups, round_labels

__all__ = ["AnonymityAuditor", "elicitation_rounds", "estimates_from_sums", "partition_groups", "round_labels"]
