"""Deprecated path of :mod:`anonbandits.privacy.mechanisms` (the privacy mechanisms on what any channel releases
moved into the privacy package). Each name is still found here for one release, with a ``DeprecationWarning``
naming the new path."""

from anonbandits._deprecated import moved
from anonbandits.privacy import mechanisms as _mechanisms

#: the names this module held
_MOVED = ("REAL_ORDERS", "NoisyRelease", "laplace_noise", "CentralLaplace", "Distributed", "Mechanism", "guarantee")

__getattr__ = moved(__name__, dict.fromkeys(_MOVED, _mechanisms))
