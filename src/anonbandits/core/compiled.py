"""numba-compiled versions of core formulas, for the compiled kernels (paper 003's SE round loop).

Each is the core function itself compiled by ``numba.njit``, not a second implementation; this module is
separate only so that importing :mod:`anonbandits.core` does not import numba.
"""

from numba import njit

from anonbandits.core import radii

#: :func:`anonbandits.core.radii.se_boundary` compiled, for scalar arguments inside kernels.
se_boundary = njit(cache=True)(radii.se_boundary)
