"""Pieces of numpydoc docstrings that many objects share, written once (as scipy's ``doccer`` does).

In a docstring of an object decorated with :func:`fill`, a line holding only ``{{name}}`` is replaced by the
snippet ``name`` of :data:`SNIPPETS`, indented as that line was. Sphinx, numpydoc, ``help()`` and the doctests
all read the filled ``__doc__``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T", bound=Callable)

#: References, one per paper (title and venue), and parameter and section texts shared by many objects.
SNIPPETS: dict[str, str] = {
    "paper000": 'Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.',
    "paper001": 'Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic\n'
                'Environment", arXiv preprint 2102.07929, 2021.',
    "paper002": 'Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019.',
    "paper003": 'Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications",\n'
                'ICML 2023.',
    "paper004": 'Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023.',
    "paper005": 'Sajed, Sheffet, "An Optimal Private Stochastic-MAB Algorithm Based on an Optimal Private Stopping\n'
                'Rule", ICML 2019.',
    "paper006": 'Dwork, McSherry, Nissim, Smith, "Calibrating Noise to Sensitivity in Private Data Analysis",\n'
                'TCC 2006.',
    "size": "size : int, tuple of int or None\n    Shape of the draw (numpy's ``size``); ``None`` draws one value.",
    "rng": "rng : numpy.random.Generator\n    The source of randomness.",
    "int_draws": "Returns\n-------\nnumpy.ndarray or numpy.int64\n    ``int64`` draws of shape ``size``.",
}


def _papers(*numbers: str) -> str:
    """The references of papers ``numbers`` (e.g. ``"003"``), one paragraph each."""
    return "\n\n".join(SNIPPETS["paper" + n] for n in numbers)


# A whole References section (``refs003_005``: papers 003 and 005, in that order), or, where a sentence leads the
# section, the list of papers alone (``papers...``).
SNIPPETS.update({"refs" + key: "References\n----------\n" + _papers(*key.split("_"))
                 for key in ("000", "001", "002", "002_003", "002_005", "003", "003_002", "003_005", "004", "005",
                             "005_001", "005_001_004", "005_004", "006", "006_004", "006_005")})
SNIPPETS.update({"papers" + key: _papers(*key.split("_"))
                 for key in ("000_001_004_003_002", "000_001_005_004_003_002", "002", "004")})

_MARK = re.compile(r"^([ \t]*)\{\{(\w+)\}\}[ \t]*$", re.M)


def fill(obj: T) -> T:
    """``obj`` with every ``{{name}}`` line of its docstring replaced by its snippet (see the module docstring).

    Parameters
    ----------
    obj : callable
        A function or class whose docstring holds ``{{name}}`` lines.

    Returns
    -------
    callable
        ``obj`` itself, its ``__doc__`` filled.

    Raises
    ------
    KeyError
        For a ``{{name}}`` that is not a snippet.

    Examples
    --------
    >>> @fill
    ... def f():
    ...     '''Draw.
    ...
    ...     {{rng}}
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    rng : numpy.random.Generator
    """
    if obj.__doc__:
        obj.__doc__ = _MARK.sub(lambda m: textwrap.indent(SNIPPETS[m.group(2)], m.group(1)), obj.__doc__)
    return obj
