"""Command-line interface: ``anonbandits decompose | verify | simulate | ...``."""
