"""numba-compiled versions of core formulas, for the compiled kernels (papers 001, 002 and 003).

Each is the core function itself compiled by ``numba.njit``, not a second implementation; this module is
separate only so that importing :mod:`anonbandits.core` does not import numba. No C-callable wrappers (the
kernels call them natively): less to compile on a first call.
"""

from collections.abc import Callable
from typing import TypeVar

from numba import njit

from anonbandits.core import radii

Function = TypeVar("Function", bound=Callable[..., object])


def compile_inline(function: Function) -> Function:
    """``function`` compiled by ``numba.njit`` for calls from other compiled code: cached on disk, inlined
    into its callers (``forceinline``), without a C-callable wrapper. Called like ``function`` (typed as it)."""
    # numba's own annotations of njit leave out the option no_cfunc_wrapper, which njit passes on to the
    # dispatcher: the one option the type checker cannot see
    compiled: Function = njit(cache=True, no_cfunc_wrapper=True, forceinline=True)(function)  # type: ignore[call-overload]
    return compiled


#: The core functions of the same names compiled, for scalar arguments inside kernels.
se_boundary = compile_inline(radii.se_boundary)
se_eliminates = compile_inline(radii.se_eliminates)
hybrid_ucb_widths = compile_inline(radii.hybrid_ucb_widths)
widths_index = compile_inline(radii.widths_index)
ugapec_log_term = compile_inline(radii.ugapec_log_term)
ugapec_radius = compile_inline(radii.ugapec_radius)
ugapec_upper = compile_inline(radii.ugapec_upper)
ugapec_gap_index = compile_inline(radii.ugapec_gap_index)
