"""Old import paths of names that moved: still found for one release, with a ``DeprecationWarning`` naming the
new path (a module-level ``__getattr__``, so the old module holds no copy of the name and the warning comes
only from the old path)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def moved(old: str, names: Mapping[str, ModuleType]) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``old`` for ``names``, each moved to the module it maps to.

    Parameters
    ----------
    old : str
        The old module's name (its ``__name__``).
    names : Mapping of str to module
        Each moved name and the module that holds it now.

    Returns
    -------
    callable
        ``__getattr__(name)``: the moved object, after a ``DeprecationWarning`` naming both paths; an
        ``AttributeError`` for any other name.

    Examples
    --------
    >>> import warnings
    >>> from anonbandits import errors
    >>> __getattr__ = moved("anonbandits.old", {"ConfigError": errors})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     found = __getattr__("ConfigError")
    >>> found is errors.ConfigError, str(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    (True, 'anonbandits.old.ConfigError is deprecated, import it from anonbandits.errors
    (the old path goes in the next release)')
    """

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} is deprecated, import it from {new.__name__} (the old path goes in the next "
                      "release)", DeprecationWarning, stacklevel=2)
        return getattr(new, name)

    return __getattr__
