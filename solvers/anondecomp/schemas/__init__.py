"""JSON Schemas of the input graph formats and the decomposition output (documented in docs/formats.md)."""

import json
from importlib import resources


def load_schema(name: str) -> dict:
    """``"graph"`` or ``"decomposition"``."""
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text())
