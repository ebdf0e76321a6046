"""Old import paths of names that moved: still found for one release, with a ``DeprecationWarning`` naming the
new path (a module-level ``__getattr__``, so the old module holds no copy of the name and the warning comes
only from the old path)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def moved(
    old: str, names: Mapping[str, ModuleType], replaced: Mapping[str, tuple[Any, str]] | None = None
) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``old`` for ``names``, each moved to the module it maps to.

    Parameters
    ----------
    old : str
        The old module's name (its ``__name__``).
    names : Mapping of str to module
        Each moved name and the module that holds it now.
    replaced : Mapping of str to (object, str), optional
        Names deprecated without a new home: the object still given for one release and what replaces it
        (the warning says "use <that> instead").

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
    >>> __getattr__ = moved("anonbandits.old", {}, {"OldError": (ValueError, "anonbandits.errors.ConfigError")})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     found = __getattr__("OldError")
    >>> found is ValueError, str(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    (True, 'anonbandits.old.OldError is deprecated, use anonbandits.errors.ConfigError instead
    (the name goes in the next release)')
    """

    def __getattr__(name: str) -> Any:
        if replaced and name in replaced:
            found, instead = replaced[name]
            warnings.warn(
                f"{old}.{name} is deprecated, use {instead} instead (the name goes in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            return found
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old}.{name} is deprecated, import it from {new.__name__} (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(new, name)

    return __getattr__
