"""The names of the algorithms :mod:`anonbandits.dp.distributed` registers, in the order of its ``ALGORITHMS``.

The registry reads this file without importing the family, so that ``simulate(name)`` and ``get(name)`` import
the one family registering ``name``: ``NAMES`` stays a literal tuple of strings, and this module imports nothing.
A test checks it against ``ALGORITHMS``.
"""

NAMES = ("cdp-se", "ldp-se", "dist-dp-se", "dist-rdp-se", "dist-cdp-se", "shuffle-dp-se")
