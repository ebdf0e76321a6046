"""Every example a reader can copy runs: the Python blocks of README.md and docs/*.md, and the README's
``anonbandits ...`` command lines (at small size), so a broken example fails the suite.

Python blocks run in a fresh namespace in a temporary working directory. Shell lines run in order through
:func:`anonbandits.cli.main.main` in a temporary directory holding a copy of ``examples/``, with the
substitutions of :data:`SMALL` keeping them fast.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import shlex
import shutil
from pathlib import Path

import pytest

from anonbandits.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

#: (pattern, replacement) applied to README command lines: same commands, test-sized
SMALL = [
    (r"--suite quick", "--suite quick --methods greedy,block --families niche-groups"),
    (r"--seeds \d+", "--seeds 2"),
    (r"^simulate ", "simulate --workers 1 --no-progress "),
]


def _blocks(path: Path, lang: str) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(2)) for m in FENCE.finditer(text) if m.group(1) == lang]


PYTHON = [pytest.param(code, id=f"{path.name}:{line}") for path in PAGES for line, code in _blocks(path, "python")]


def test_every_page_with_python_has_its_blocks_collected():
    assert len(PYTHON) >= 6
    assert any(p.id.startswith("README.md:") for p in PYTHON)


@pytest.mark.parametrize("code", PYTHON)
def test_python_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<doc example>", "exec"), {"__name__": "__doc_example__"})


def _readme_commands() -> list[str]:
    lines = []
    for _, block in _blocks(README, ""):
        for line in block.splitlines():
            if line.startswith("anonbandits "):
                lines.append(line.split("#")[0].strip())
    return lines


def test_readme_shell_examples_run_at_small_size(tmp_path, monkeypatch):
    commands = _readme_commands()
    assert {c.split()[1] for c in commands} >= {"decompose", "verify", "beta", "bench", "simulate"}
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    for command in commands:
        small = command.removeprefix("anonbandits ")
        for pattern, replacement in SMALL:
            small = re.sub(pattern, replacement, small)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(shlex.split(small))
        assert code == 0, f"{command}\n{err.getvalue()}"
        assert out.getvalue().strip(), command
    for name in ("examples/ads_60x4.decomposition.json", "bench.csv", "bench.png", "results.csv", "curve.png",
                 "grid.csv"):
        assert (tmp_path / name).stat().st_size > 0, name


def test_readme_starts_with_the_two_make_commands_and_says_where_the_command_is():
    text = README.read_text(encoding="utf-8")
    first = FENCE.search(text).group(2).splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make demo", "make test"]
    assert ".venv/bin/anonbandits" in text and "source .venv/bin/activate" in text


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_pages_cite_papers_not_files_a_clone_lacks(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"(\.\./)?shared/", text), f"{page.name} points at a shared/ file"
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not re.match(r"https?://", target):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


BENCHMARKS = ROOT / "benchmarks"
# record_alg1_graphs.py writes solver test data, not results; _output.py is where docs/results is named
OWN_OUTPUT = {"record_alg1_graphs.py", "_output.py"}


def _code_strings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and ast.get_docstring(node)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name not in OWN_OUTPUT))
def test_quick_benchmarks_never_write_the_committed_results(script):
    """Only ``_output.results_dir(quick=False)`` names docs/results, so a --quick run cannot overwrite it."""
    text = (BENCHMARKS / script).read_text(encoding="utf-8")
    assert not [s for s in _code_strings(BENCHMARKS / script) if s == "docs" or s.startswith("docs/results")], script
    if "--quick" in text:
        assert "results_dir(" in text, f"{script} has --quick but does not use _output.results_dir"


def test_results_dir_keeps_quick_runs_out_of_docs():
    spec = importlib.util.spec_from_file_location("_output", BENCHMARKS / "_output.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.results_dir(True) == ROOT / "build" / "benchmarks"
    assert module.results_dir(False) == ROOT / "docs" / "results"
    assert "build/" in (ROOT / ".gitignore").read_text().splitlines()


def test_the_platform_scale_tables_are_generated_from_the_committed_results(monkeypatch):
    """docs/decompositions.md shows exactly what benchmarks/decompose_scale.py renders from its CSVs."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("decompose_scale", BENCHMARKS / "decompose_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "decompositions.md").read_text(encoding="utf-8")
    for name, table in module.docs_tables(ROOT / "docs" / "results").items():
        assert f"<!-- {name} -->\n{table}\n<!-- /{name} -->" in page, name
