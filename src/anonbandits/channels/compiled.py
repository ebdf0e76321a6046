"""The channel's reward draws compiled for the engines' loops (MASE's and the decentralized family's kernels).

Each is the function of :mod:`anonbandits.envs.rewards` itself compiled by ``numba.njit``, not a second
implementation, so a compiled loop draws its rewards exactly as :class:`~anonbandits.channels.DirectChannel`
does; this module is separate only so that importing :mod:`anonbandits.channels` does not import numba.
"""

from typing import Any

from numba import njit

from anonbandits.envs import rewards

#: numba's options for a scalar helper inlined into the kernels (``no_cfunc_wrapper`` is missing from numba's
#: typed signature of ``njit``, hence the untyped mapping)
_INLINED: dict[str, Any] = {"cache": True, "no_cfunc_wrapper": True, "forceinline": True}

#: One Bernoulli reward from one uniform draw, for scalar arguments inside kernels.
bernoulli_reward = njit(**_INLINED)(rewards.bernoulli_reward)
