"""What a base install (``pip install anonbandits``, without the ``[sim]`` extra) can do, and the HiGHS shim.

The base install has numpy, scipy, highspy and pyarrow only; the simulation stack is simulated away by a
meta path finder that refuses to import it, in a fresh interpreter.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from anondecomp import highs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ads_60x4.json"
SIM = ("numba", "dask", "distributed", "matplotlib", "tqdm", "networkx")

BASE_INSTALL = """
import importlib.abc, json, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Refuse())
from anonbandits.cli.main import main

codes = [main(args) for args in RUNS]
print(json.dumps({"codes": codes, "loaded": sorted({m.split(".")[0] for m in sys.modules} & BLOCKED)}))
"""


def _run_base_install(runs: list[list[str]], cwd: Path) -> tuple[dict, str]:
    code = f"BLOCKED = {set(SIM)!r}\nRUNS = {runs!r}\n" + BASE_INSTALL
    p = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def test_decompose_and_verify_run_without_the_simulation_stack(tmp_path):
    ex = str(EXAMPLE)
    runs = [
        ["decompose", ex, "--C", "3", "-o", "d.json"],
        ["verify", ex, "d.json"],
        ["decompose", ex, "--C", "3", "-o", "d.parquet"],
        ["verify", ex, "d.parquet"],
        ["beta", ex, "--C", "3"],
    ]
    result, _ = _run_base_install(runs, tmp_path)
    assert result == {"codes": [0] * len(runs), "loaded": []}
    assert (tmp_path / "d.json").exists() and (tmp_path / "d.parquet").exists()


def test_simulation_commands_say_what_to_install(tmp_path):
    # bench itself is a solver benchmark and runs on a base install; only its plot needs matplotlib, which
    # it says before the first graph. simulate imports only the family of its algorithm: MASE's needs numba.
    runs = [
        ["simulate", "--algorithm", "mase", "--seeds", "1"],
        ["bench", "--suite", "quick", "--plot", "b.png"],
        ["--help"],
    ]
    result, err = _run_base_install(runs, tmp_path)
    assert result["codes"] == [2, 2, 0]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2 and all("pip install 'anonbandits[sim]'" in line for line in lines), lines
    assert lines[0].startswith("anonbandits simulate: error: needs the simulation packages (")


def test_the_solver_layer_imports_only_the_base_packages():
    code = (
        "import sys, anondecomp, anonbandits.cli.decompose, anonbandits.cli.verify; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(SIM)!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def _solve_tiny_lp(h) -> float:
    import scipy.sparse as sp

    highs.load_model(
        h,
        sp.csc_matrix(np.array([[1.0, 1.0]])),
        np.array([1.0, 2.0]),
        np.zeros(2),
        np.full(2, np.inf),
        np.array([1.0]),
        np.array([np.inf]),
    )
    h.run()
    return h.getInfo().objective_function_value


def test_new_highs_prints_nothing_and_solves(capfd):
    assert _solve_tiny_lp(highs.new_highs(time_limit=5)) == 1.0
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_new_highs_falls_back_to_the_public_class(monkeypatch):
    """Without the private base class (a future highspy), the public class is used and gives the same LP."""
    import highspy

    monkeypatch.delattr(highspy, "_Highs")
    monkeypatch.delattr(highspy._core, "_Highs")
    assert highs._solver_class() is highspy.Highs
    assert _solve_tiny_lp(highs.new_highs()) == 1.0
