"""Feedback channels (a driver asks for a batch: learners x arms x samples; it gets sums and counts) and the
privacy mechanisms on what they release (docs/architecture.md).

Every channel of the multi-user drivers implements :class:`FeedbackChannel` (:mod:`anonbandits.channels.feedback`):
:class:`DirectFeedback` (exact sufficient statistics) and :class:`AnonymousChannel` (the 2C+2-round feedback
elicitation of Esfandiari, Mirrokni, Schneider, *Anonymous Bandits for Multi-User Systems*, NeurIPS 2022,
Section 3.1, audited). :data:`CHANNELS` is the one table naming them: the command line's ``--channel NAME`` is
resolved there (:func:`channel_named`), and adding a channel is one module plus one entry of it.
:class:`DirectChannel` is the reward source every non-anonymous driver draws from; :class:`CentralLaplace` and
:class:`Distributed` (Chowdhury, Zhou, *Distributed Differential Privacy in Multi-Armed Bandits*, ICLR 2023)
are found here and in their module :mod:`anonbandits.privacy.mechanisms`.
"""

from __future__ import annotations

from anonbandits.channels.anonymous import (
    AnonymousChannel,
    Feedback,
    check_decomposer,
    elicitation_rounds,
    elicitation_variance,
)
from anonbandits.channels.direct import Batch, DirectChannel, DirectFeedback, RewardSum
from anonbandits.channels.feedback import ChannelFactory, ChannelOptions, FeedbackChannel, Served
from anonbandits.errors import require
from anonbandits.privacy.mechanisms import CentralLaplace, Distributed, NoisyRelease, laplace_noise
from anonbandits.validation import Rule, checks

#: The channels by the name the command line and the grid files give (``--channel direct|anonymous``): the one
#: place a name becomes a channel.
CHANNELS: dict[str, ChannelFactory] = {
    "direct": DirectFeedback,
    "anonymous": AnonymousChannel,
}


def _factory(value: object) -> bool:
    return isinstance(value, type) and all(
        callable(getattr(value, m, None)) for m in ("open", "sample_variance", "min_group")
    )


@checks(
    channel=Rule(
        lambda v: isinstance(v, str) or _factory(v),
        "a name of anonbandits.channels.CHANNELS or a channel class (with open, sample_variance and min_group)",
    )
)
def channel_named(channel: str | ChannelFactory) -> ChannelFactory:
    """The channel a name stands for in :data:`CHANNELS` (a channel given itself is returned as it is).

    Parameters
    ----------
    channel : str or channel class
        A name of :data:`CHANNELS`, or a channel (a class implementing :class:`FeedbackChannel`).

    Returns
    -------
    channel class
        The channel.

    Raises
    ------
    ConfigError
        For a name :data:`CHANNELS` does not hold (the message lists those it does), or a value that is
        neither a str nor a class with the channel's ``open``, ``sample_variance`` and ``min_group``.

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022 (Section 3.1).

    Examples
    --------
    >>> channel_named("anonymous") is AnonymousChannel, channel_named(DirectFeedback) is DirectFeedback
    (True, True)
    >>> channel_named("carrier pigeon")
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: channel must be one of direct, anonymous, got 'carrier pigeon'
    """
    if not isinstance(channel, str):
        return channel
    require(channel in CHANNELS, "channel", f"one of {', '.join(CHANNELS)}", channel)
    return CHANNELS[channel]


__all__ = [
    "CHANNELS",
    "AnonymousChannel",
    "Batch",
    "CentralLaplace",
    "ChannelFactory",
    "ChannelOptions",
    "DirectChannel",
    "DirectFeedback",
    "Distributed",
    "Feedback",
    "FeedbackChannel",
    "NoisyRelease",
    "RewardSum",
    "Served",
    "channel_named",
    "check_decomposer",
    "elicitation_rounds",
    "elicitation_variance",
    "laplace_noise",
]
