"""Exception family of the solver layer.

Every error a caller can cause is an :class:`AnonDecompError`; its message is one line naming the problem
(which user, which arm, which field), so a command-line front end can print it as is.
"""


class AnonDecompError(Exception):
    """Base class of every error ``anondecomp`` raises on purpose."""


class InvalidInputError(AnonDecompError, ValueError):
    """The graph, the decomposition or a parameter is malformed (bad JSON, negative weight, C < 1, ...)."""


class InfeasibleError(AnonDecompError):
    """No C-anonymous decomposition covers the demand: some arms are wanted by too few users.

    ``arms`` lists the offending arm names; ``uncovered`` (when known) the (user, arm) pairs left out.
    """

    def __init__(self, message: str, arms=(), uncovered=()):
        super().__init__(message)
        self.arms = tuple(arms)
        self.uncovered = tuple(uncovered)


class MethodNotApplicableError(AnonDecompError):
    """The chosen method's precondition does not hold for this graph (e.g. ``polytope`` with a thin arm)."""


class AnonDecompWarning(UserWarning):
    """A call did something the caller may not expect but that is not an error, e.g. an option the chosen
    method does not read (as ``scipy.optimize.OptimizeWarning`` does for ``linprog``)."""


class SolverError(AnonDecompError, RuntimeError):
    """An internal step of a solver failed (a bug or a numerical breakdown, never the caller's input).

    The message is one line naming the step; it also subclasses ``RuntimeError`` so that code written against
    the old behaviour keeps catching it.
    """
