"""Test-session setup: every pytest-xdist worker keeps its compiled numba kernels in a cache of its own
(``build/numba-cache/<worker>``), so that workers starting cold together on a fresh clone never load a kernel
another worker is still writing (a fresh clone's CI once failed so in ``multiagent.mase``). Cold starts that
share one cache are tested on purpose by ``tests/bandits/test_cold_start.py``, which sets its own cache."""

import os
from pathlib import Path

_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER and "NUMBA_CACHE_DIR" not in os.environ:  # before any test module imports numba
    os.environ["NUMBA_CACHE_DIR"] = str(Path(__file__).resolve().parents[1] / "build" / "numba-cache" / _WORKER)
