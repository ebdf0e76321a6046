"""The channel's reward draws compiled for the engines' loops (MASE's and the decentralized family's kernels).

Each is the function of :mod:`anonbandits.envs.rewards` itself compiled by ``numba.njit``, not a second
implementation, so a compiled loop draws its rewards exactly as :class:`~anonbandits.channels.DirectChannel`
does; this module is separate only so that importing :mod:`anonbandits.channels` does not import numba.
"""

from numba import njit

from anonbandits.envs import rewards

#: One Bernoulli reward from one uniform draw, for scalar arguments inside kernels.
bernoulli_reward = njit(cache=True, no_cfunc_wrapper=True, forceinline=True)(rewards.bernoulli_reward)
