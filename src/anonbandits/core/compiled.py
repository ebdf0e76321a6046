"""numba-compiled versions of core formulas, for the compiled kernels (papers 001, 002 and 003).

Each is the core function itself compiled by ``numba.njit``, not a second implementation; this module is
separate only so that importing :mod:`anonbandits.core` does not import numba.
"""

from numba import njit

from anonbandits.core import radii

#: The core functions of the same names compiled, for scalar arguments inside kernels.
se_boundary = njit(cache=True)(radii.se_boundary)
hybrid_ucb_widths = njit(cache=True)(radii.hybrid_ucb_widths)
ugapec_log_term = njit(cache=True)(radii.ugapec_log_term)
