"""Shared helpers: the plain per-pull reference loops live in benchmarks/mase_reference.py."""

import importlib.util
import sys
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parents[4] / "benchmarks" / "mase_reference.py"


@pytest.fixture(scope="session")
def reference():
    spec = importlib.util.spec_from_file_location("mase_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
