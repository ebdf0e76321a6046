"""A fast first call: the registry's name index, what a first ``simulate`` imports, the exact normal law of
``model_means`` without scipy.stats, and the compiled core formulas of the kernels (the timings themselves
are measured by benchmarks/first_call.py)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import numpy as np
import pytest

from anonbandits import registry
from anonbandits.envs.rewards import model_means
from anonbandits.errors import ConfigError


def test_index_names_every_registered_algorithm_with_its_family() -> None:
    registered = {
        spec.name: module for module in registry._FAMILIES for spec in importlib.import_module(module).ALGORITHMS
    }
    assert registry._index() == registered
    assert list(registry.all_algorithms()) == list(registered)
    for module in registry._FAMILIES:  # each family's light names module: its ALGORITHMS' names, in order
        names = importlib.import_module(f"{module}.names").NAMES
        assert names == tuple(spec.name for spec in importlib.import_module(module).ALGORITHMS), module
        assert registry._names(module) == names


@pytest.mark.parametrize("name", ["se", "mase", "decentralized-elimination", "anon-etc", "cdp-se"])
def test_get_returns_the_registered_spec(name: str) -> None:
    spec = registry.get(name)
    assert spec is registry.all_algorithms()[name]


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown algorithm 'nope'; known: anon-bai, anon-batched, anon-etc"):
        registry.get("nope")


def _imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_simulate_se_imports_its_family_only_and_no_heavy_library() -> None:
    modules = _imported_after("import anonbandits\nanonbandits.simulate('se', seed=0, horizon=1000)")
    assert "anonbandits.dp" in modules
    for absent in (
        "anonbandits.anonymous",
        "anonbandits.dp.distributed",
        "anonbandits.multiagent.mase",
        "anonbandits.multiagent.decentralized",
        "numba",
        "scipy.stats",
        "matplotlib",
        "pyarrow",
        "anondecomp",
    ):
        assert absent not in modules, absent


def test_the_other_families_load_when_named() -> None:
    modules = _imported_after("from anonbandits import registry\nregistry.get('no-sharing')")
    assert "anonbandits.multiagent.decentralized" in modules
    assert "anonbandits.multiagent.mase" not in modules


# model_means("gaussian") as computed with scipy.stats.norm before (float.hex): one row per sigma, one column
# per mean of MUS
MUS = [0.0, 0.01, 0.1, 0.25, 0.5, 0.7, 0.9, 0.99, 1.0]
SIGMAS = [0.5, 0.1, 1.0, 2.5]
HEX = """
0x1.8fd289d506a02p-3 0x1.99aabfb4f64a1p-3 0x1.f87120f650e1bp-3 0x1.56444a5113f6ep-2 0x1.0000000000000p-1
0x1.449b58e36ebfep-1 0x1.81e3b7c26bc79p-1 0x1.99955012c26d8p-1 0x1.9c0b5d8abe580p-1 0x1.46d04297691dbp-5
0x1.7167fe406ebcep-5 0x1.bbb9dc3be143dp-4 0x1.0034898974d78p-2 0x1.0000000000000p-1 0x1.6661641a57662p-1
0x1.c888c47883d78p-1 0x1.e8e9801bf9143p-1 0x1.eb92fbd6896e2p-1 0x1.4333aca7903bbp-2 0x1.46b4893a42050p-2
0x1.66ea924b642e2p-2 0x1.9ee6ec8eb374dp-2 0x1.0000000000000p-1 0x1.26f8f4c64806dp-1 0x1.4c8ab6da4de90p-1
0x1.5ca5bb62defd8p-1 0x1.5e6629ac37e22p-1 0x1.af5e6aacfb76cp-2 0x1.b0f6015836e38p-2 0x1.bf57bfe95e8eep-2
0x1.d77c54be03a50p-2 0x1.0000000000000p-1 0x1.10371f31eb059p-1 0x1.2054200b50b88p-1 0x1.2784ff53e48e3p-1
0x1.2850caa98244ap-1
"""
BEFORE = dict(
    zip(SIGMAS, np.array([float.fromhex(h) for h in HEX.split()]).reshape(len(SIGMAS), len(MUS)), strict=True)
)


@pytest.mark.parametrize("sigma", sorted(BEFORE))
def test_model_means_keeps_the_values_of_scipy_stats(sigma: float) -> None:
    got = model_means("gaussian", np.array(MUS), sigma)
    np.testing.assert_allclose(got, BEFORE[sigma], rtol=1e-15, atol=0)
    from scipy import stats  # the formula with scipy.stats' normal law, in this environment: the very same floats

    a, b = (0 - np.array(MUS)) / sigma, (1 - np.array(MUS)) / sigma
    cdf, pdf = stats.norm.cdf, stats.norm.pdf
    assert np.array_equal(got, np.array(MUS) * (cdf(b) - cdf(a)) + sigma * (pdf(a) - pdf(b)) + (1 - cdf(b)))


def test_model_means_other_models_are_the_means() -> None:
    assert np.array_equal(model_means("bernoulli", np.array(MUS)), MUS)


def test_compiled_core_functions_are_the_core_functions() -> None:
    from anonbandits.core import compiled, radii

    rng = np.random.default_rng(3)
    for _ in range(50):
        x, y, z, u, v = rng.random(5) * [1, 2, 0.5, 3, 7]
        n = int(rng.integers(1, 1000))
        assert compiled.se_eliminates(x, y, z) == radii.se_eliminates(x, y, z) == (x + z >= y)
        assert compiled.ugapec_radius(v, n) == radii.ugapec_radius(v, n) == np.sqrt(v / n)
        assert compiled.ugapec_upper(x, y) == radii.ugapec_upper(x, y) == x + y
        assert compiled.ugapec_gap_index(u, x, y) == radii.ugapec_gap_index(u, x, y) == u - (x - y)
        assert compiled.widths_index(x, y, z, u, v) == radii.widths_index(x, y, z, u, v) == y * u + z * v + x
    # the SE test keeps an arm exactly at the boundary out (>=), with the slack counted
    assert radii.se_eliminates(0.5, 0.5) and not radii.se_eliminates(0.4, 0.5) and radii.se_eliminates(0.4, 0.5, 0.1)


def test_decentralized_kernel_is_compiled_once_per_subroutine_group() -> None:
    from anonbandits.multiagent.decentralized import kernel

    assert kernel.kernel_for(kernel.SE) is kernel.kernel_for(kernel.SER3)
    assert kernel.kernel_for(kernel.NAIVE) is kernel.kernel_for(kernel.MEDIAN)
    groups = {kernel.kernel_for(k) for k in range(len(kernel.SUBROUTINES))}
    assert len(groups) == 3
