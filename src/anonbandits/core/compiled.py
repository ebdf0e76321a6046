"""numba-compiled versions of core formulas, for the compiled kernels (papers 001, 002 and 003).

Each is the core function itself compiled by ``numba.njit``, not a second implementation; this module is
separate only so that importing :mod:`anonbandits.core` does not import numba. No C-callable wrappers (the
kernels call them natively): less to compile on a first call.
"""

from numba import njit

from anonbandits.core import radii

_compile = njit(cache=True, no_cfunc_wrapper=True, forceinline=True)

#: The core functions of the same names compiled, for scalar arguments inside kernels.
se_boundary = _compile(radii.se_boundary)
se_eliminates = _compile(radii.se_eliminates)
hybrid_ucb_widths = _compile(radii.hybrid_ucb_widths)
widths_index = _compile(radii.widths_index)
ugapec_log_term = _compile(radii.ugapec_log_term)
ugapec_radius = _compile(radii.ugapec_radius)
ugapec_upper = _compile(radii.ugapec_upper)
ugapec_gap_index = _compile(radii.ugapec_gap_index)
