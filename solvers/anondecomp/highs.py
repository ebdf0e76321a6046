"""HiGHS instances for the LPs and MIPs of the solver layer: silent, and loaded from one sparse matrix.

``highspy`` and scipy are imported lazily, so commands that never solve an LP start fast.
"""

from __future__ import annotations

import numpy as np


def _solver_class():
    """The one shim over highspy's private API: the class :func:`new_highs` instantiates.

    ``highspy.Highs()`` (checked up to highspy 1.16) prints the "Running HiGHS ..." banner on stdout in its
    constructor, which enables its Python callback layer, before any option such as ``output_flag`` can be
    set; HiGHS's maintainers keep ``output_flag`` true by default (HiGHS issue 1702), and highspy offers no
    constructor argument or class option to start silent. Its base class ``_Highs`` (the compiled solver
    without the callback layer, which we never use) prints nothing, and highspy lists it in ``__all__``.
    When a highspy release drops it, the public class is used: results are the same, and the banner line
    may then appear once per solver instance.
    """
    import highspy

    core = getattr(highspy, "_Highs", None) or getattr(getattr(highspy, "_core", None), "_Highs", None)
    return core if core is not None else highspy.Highs


def new_highs(time_limit: float | None = None):
    """A HiGHS instance that prints nothing (see :func:`_solver_class`)."""
    h = _solver_class()()
    h.setOptionValue("output_flag", False)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    return h


def load_model(
    h,
    A,
    cost: np.ndarray,
    col_lower: np.ndarray,
    col_upper: np.ndarray,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    *,
    maximize: bool = False,
    integer: bool = False,
) -> None:
    """Pass ``min|max cost.x  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper`` to ``h``.

    ``A`` (rows, cols) is any scipy sparse matrix (converted to CSC once); bounds may hold ``numpy.inf``.
    ``integer`` makes every column integral.
    """
    import highspy
    import scipy.sparse as sp

    A = sp.csc_matrix(A)
    lp = highspy.HighsLp()
    lp.num_row_, lp.num_col_ = A.shape
    lp.col_cost_ = np.asarray(cost, dtype=np.float64)
    lp.col_lower_ = np.asarray(col_lower, dtype=np.float64)
    lp.col_upper_ = np.asarray(col_upper, dtype=np.float64)
    lp.row_lower_ = np.asarray(row_lower, dtype=np.float64)
    lp.row_upper_ = np.asarray(row_upper, dtype=np.float64)
    if maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * A.shape[1]
    h.passModel(lp)
