"""The solver benchmark suite (issue 6): graph families and the runner behind ``anonbandits bench``."""
