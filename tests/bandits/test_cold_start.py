"""Safe cold starts (issue 31, item 7): several processes starting at once on one empty compiled-kernel cache all
succeed, with the results of a warm run.

Worker processes start cold together on every fresh install (``simulate --workers N``): each compiles the numba
kernels and writes them to the same cache. Three processes here share a fresh ``NUMBA_CACHE_DIR``, import the
package, then wait for one signal so that they compile and write the cache at the same moment. Hybrid-UCB's
kernel (paper 001) is the smallest that compiles the shared ones too (``core``, ``envs``: the cache entries every
compiled family writes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

#: each child: import, wait for the start file, run, print the metrics (numbers only) as JSON
CHILD = """
import json, os, sys, time
import anonbandits
import anonbandits.dp  # the family whose kernels compile (imported before the start signal)
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.005)
result = anonbandits.simulate("hybrid-ucb", seed=3, horizon=10000)
print(json.dumps(result.metrics, sort_keys=True))
"""


def _start(go: str, cache: str) -> subprocess.Popen:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, go], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


@pytest.mark.slow
def test_three_processes_compile_into_one_empty_cache_at_once(tmp_path):
    cache, go = tmp_path / "numba-cache", tmp_path / "go"
    cache.mkdir()
    children = [_start(str(go), str(cache)) for _ in range(3)]
    time.sleep(1.0)  # let them import; then they all start compiling together
    go.touch()
    outputs = [child.communicate(timeout=120) for child in children]
    for child, (_out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err[-2000:]
        assert "Traceback" not in err, err[-2000:]
    metrics = [json.loads(out) for out, _ in outputs]
    assert any(cache.iterdir()), "the kernels were cached"
    # a warm run from the cache the three wrote gives the same result
    warm = _start(str(go), str(cache))
    out, err = warm.communicate(timeout=120)
    assert warm.returncode == 0, err[-2000:]
    assert metrics == [json.loads(out)] * 3
    assert metrics[0]["releases"] == 10000 and metrics[0]["best_arm_found"] in (0, 1)
