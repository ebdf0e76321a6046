"""The names of the algorithms :mod:`anonbandits.multiagent.mase` registers, in the order of its ``ALGORITHMS``.

The registry reads this file without importing the family, so that ``simulate(name)`` and ``get(name)`` import
the one family registering ``name``: ``NAMES`` stays a literal tuple of strings, and this module imports nothing.
A test checks it against ``ALGORITHMS``.
"""

NAMES = ("mase", "dp-mase", "corrupted-elimination", "feraud", "central", "independent")
