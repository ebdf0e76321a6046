"""Exception family of the solver layer.

Every error a caller can cause is an :class:`AnonDecompError`; its message is one line naming the problem
(which user, which arm, which field), so a command-line front end can print it as is.
"""


class AnonDecompError(Exception):
    """Base class of every error ``anondecomp`` raises on purpose.

    Examples
    --------
    >>> issubclass(InvalidInputError, AnonDecompError) and issubclass(InfeasibleError, AnonDecompError)
    True
    """


class InvalidInputError(AnonDecompError, ValueError):
    """The graph, the decomposition or a parameter is malformed (bad JSON, negative weight, C < 1, ...).

    Also a ``ValueError``.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> anondecomp.decompose(anondecomp.DemandGraph.from_batched(4, np.ones((3, 1), bool)), C=0)
    Traceback (most recent call last):
    ...
    anondecomp.errors.InvalidInputError: C must be an integer >= 1, got 0
    """


class InfeasibleError(AnonDecompError):
    """No C-anonymous decomposition covers the demand: some arms are wanted by too few users.

    An arm wanted by at most C users can never be observed (paper 000, Section 3).

    Parameters
    ----------
    message : str
        The one-line message.
    arms : sequence of str, optional
        The names of the arms wanted by too few users (kept as ``arms``).
    uncovered : sequence of tuple, optional
        The (user, arm) pairs left out, when known (kept as ``uncovered``).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.array([[1, 0], [0, 1], [0, 1]], bool))
    >>> try:
    ...     anondecomp.decompose(g, C=1)
    ... except InfeasibleError as exc:
    ...     print(exc.arms)
    ('a0',)
    """

    def __init__(self, message: str, arms=(), uncovered=()):
        super().__init__(message)
        self.arms = tuple(arms)
        self.uncovered = tuple(uncovered)


class MethodNotApplicableError(AnonDecompError):
    """The chosen method's precondition does not hold for this graph (e.g. ``polytope`` with a thin arm).

    References
    ----------
    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.array([[1, 0], [1, 1], [0, 1]], bool))
    >>> try:
    ...     anondecomp.decompose(g, C=1, method="polytope")
    ... except MethodNotApplicableError:
    ...     print("use block")
    use block
    """


class AnonDecompWarning(UserWarning):
    """A call did something the caller may not expect but that is not an error.

    For example an option the chosen method does not read (as ``scipy.optimize.OptimizeWarning`` does for
    ``linprog``).

    Examples
    --------
    >>> import warnings, numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.ones((4, 2), bool))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = anondecomp.decompose(g, C=1, method="greedy", time_limit=3)
    >>> caught[0].category.__name__
    'AnonDecompWarning'
    """


class SolverError(AnonDecompError, RuntimeError):
    """An internal step of a solver failed (a bug or a numerical breakdown, never the caller's input).

    The message is one line naming the step; it also subclasses ``RuntimeError`` so that code written against
    the old behaviour keeps catching it.

    Examples
    --------
    >>> issubclass(SolverError, RuntimeError)
    True
    """


class InvalidTypeError(InvalidInputError, TypeError):
    """An argument of the wrong type (a bool or a string where a number is meant, ``None`` as a name, ...).

    An :class:`InvalidInputError` that is also a ``TypeError``; the message names the argument and the value.

    Examples
    --------
    >>> import anondecomp
    >>> try:
    ...     anondecomp.method_info(["auto"])
    ... except InvalidTypeError as exc:
    ...     print(exc)
    method must be a string, got ['auto']
    """
