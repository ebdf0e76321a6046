"""Deprecated path of :mod:`anonbandits.privacy.protocols` (paper 004's protocols moved into the privacy package,
below the families that use them). Each name is still found here for one release, with a ``DeprecationWarning``
naming the new path."""

from anonbandits._deprecated import moved
from anonbandits.privacy import protocols as _protocols

#: the names this module held
_MOVED = (
    "PROTOCOLS",
    "BatchParams",
    "Release",
    "Protocol",
    "ShuffleProtocol",
    "CentralProtocol",
    "LocalProtocol",
    "SkellamProtocol",
    "DiscreteGaussianProtocol",
    "COMPLETE_MASKING_MAX_USERS",
    "RING_DEGREE",
    "SPLIT_SHARES",
)

__getattr__ = moved(__name__, dict.fromkeys(_MOVED, _protocols))
