"""The project's habits hold: ``make test`` runs the complexity limit, the formatter check and mypy on both
layers; the limit's only exemptions are the compiled kernels and the plain reference loops; no source file
silences a check inline; the version is written in one place."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SOURCES = sorted([*(ROOT / "solvers").rglob("*.py"), *(ROOT / "src").rglob("*.py")])


def _recipe(target: str) -> list[str]:
    """The command lines of one Makefile target."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip().removeprefix("$(BIN)/"))
    return recipe


def test_make_test_runs_every_check_before_pytest():
    recipe = _recipe("test")
    expected = [
        "ruff check solvers src tests benchmarks",
        "ruff format --check solvers src tests benchmarks",
        "mypy solvers",
        "mypy src",
    ]
    assert recipe[:4] == expected, recipe
    assert recipe[-1].startswith("python -m pytest"), recipe


def test_complexity_limit_is_on_with_only_the_kernel_and_reference_exemptions():
    lint = PYPROJECT["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"]
    assert lint["mccabe"]["max-complexity"] == 15
    exempt = {pattern for pattern, codes in lint.get("per-file-ignores", {}).items() if "C901" in codes}
    assert exempt == {"**/*kernel.py", "src/anonbandits/reference/*.py", "tests/**/*reference*.py"}
    assert "C901" not in lint.get("ignore", [])


def test_mypy_ignores_errors_in_compiled_kernels_only():
    for override in PYPROJECT["tool"]["mypy"].get("overrides", []):
        if override.get("ignore_errors"):
            for module in override["module"]:
                assert module.endswith(("kernel", "_loop")), f"{module}: only compiled kernels may skip mypy"
    assert "exclude" not in PYPROJECT["tool"]["mypy"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_inline_silencing(path):
    """No ``noqa`` for the complexity limit, and every ``type: ignore`` names its error code."""
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"noqa:[^\n]*C901", text), f"{path}: the complexity limit is silenced inline"
    assert not re.search(r"type:\s*ignore(?!\[)", text), f"{path}: a bare 'type: ignore' (name the error code)"


def test_version_is_written_once():
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert "version" not in PYPROJECT["project"]
    written = [p for p in SOURCES if re.search(r'^__version__\s*=\s*"', p.read_text(encoding="utf-8"), re.M)]
    assert [p.relative_to(ROOT).as_posix() for p in written] == ["src/anonbandits/_version.py"]
    import anonbandits
    from anonbandits._version import __version__

    assert anonbandits.__version__ == __version__
