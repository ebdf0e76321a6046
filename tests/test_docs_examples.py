"""Every example a reader can copy runs: the Python blocks and the shell command lines of README.md and
docs/*.md, each page's examples in document order in a scratch directory of its own (a copy of ``examples/``
and ``benchmarks/``, plus the input files the page's text shows, :data:`FIXTURES`).

* ``anonbandits ...`` lines run through :func:`anonbandits.cli.main.main`, at small size through the
  substitutions of :data:`SMALL`; ``.venv/bin/python benchmarks/...`` lines run in a subprocess, ``[--quick]``
  taken and the other bracketed options left out (they are marked ``slow``).
* A command that cannot run here is a recipe with its reason in :data:`RECIPES`; a test checks that every
  entry still names a command of the docs, so nothing is skipped silently.
* Where a page shows what an example prints, the test compares it: a ```text block right after a Python
  block is that block's output, and in a ```text block the lines after ``$ command`` are its output. Both
  sides are normalised by :data:`NORMALISE` (timings), and numbers are compared to 6 significant digits.
* Every file an example writes is one of its declared outputs (``--out``, ``--plot``, ``-o``, a Python
  ``open(NAME, "w")``, a benchmark's ``build/benchmarks/``), no two examples share an output, and every output
  is matched by ``.gitignore``, so running the docs from the repository root leaves the work tree clean.
* Every ``simulate --algorithm`` command shows its algorithm doing what it is for (:data:`SHOWCASE`),
  checked on its results table (written outside the scratch dir when the command has no ``--out``).
"""

from __future__ import annotations

import ast
import contextlib
import csv
import importlib.util
import io
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from anonbandits.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
COMMAND = re.compile(r"^(?:anonbandits|\.venv/bin/python|python) ")

#: (pattern, replacement) applied to ``anonbandits`` command lines: the same commands, test-sized
SMALL = [
    (r"--suite quick", "--suite quick --methods greedy,block --families niche-groups"),
    (r"--seeds \d+", "--seeds 2"),
    (r"^simulate ", "simulate --workers 1 --no-progress "),
    (r"--horizon (?:1000000|1048576)\b", "--horizon 200000"),
]

#: (pattern, replacement) applied to printed and shown output before comparing: timings vary run to run
NORMALISE = [(r"\b\d+(?:\.\d+)? s\b", "<seconds> s")]

#: command (without comment) -> why the suite does not run it
# fmt: off
RECIPES = {
    "anonbandits decompose BIG.parquet --C 10 --scheduler tcp://10.0.0.5:8786 -o OUT/":
        "needs a Dask scheduler at the reader's own address",
    "anonbandits simulate --config grid.toml --scheduler tcp://HOST:8786":
        "needs a Dask scheduler at the reader's own address (HOST is a placeholder)",
    "anonbandits simulate --config docs/results/anonymous_paper000_grid.toml --out anonymous_paper000_grid.csv "
    "--plot anonymous_paper000_grid.png":
        "the paper's whole grid, 1,800 runs up to T = 10^6: a reproduction (benchmarks/anonymous_paper000.py), "
        "minutes on two cores, not a test-sized example",
    ".venv/bin/python -m pytest tests/bandits/multiagent/mase -q":
        "runs part of this very test suite, which make test runs anyway",
    ".venv/bin/python examples/obd_means.py -o obd_types.csv --impressions-per-user 10":
        "downloads the obp source archive (network); tests/bandits/anonymous/test_means_file.py runs the recipe "
        "on build/obd/obp-0.5.7.tar.gz when it is there",
    "anonbandits simulate --algorithm anon-etc --means obd_types.csv --C 3 --horizon 1000000 --explore-scale 1 "
    "--seeds 2 --out obd_etc.csv":
        "needs obd_types.csv, which the OBD recipe above writes from the downloaded archive",
    "anonbandits simulate --algorithm anon-batched --means obd_types.csv --C 3 --horizon 1000000 --best-effort "
    "--alpha measured --seeds 2 --out obd_batched.csv":
        "needs obd_types.csv, which the OBD recipe above writes from the downloaded archive",
}
# fmt: on

#: page -> {file name: the page's text that is that file}: inputs the page shows but a clone does not hold
FIXTURES = {
    "formats.md": {
        "g.json": lambda text: _blocks(text, "json")[0][1],
        # the right-hand column of the side-by-side tables
        "g.csv": lambda text: "\n".join(
            line[27:].split()[0] for line in _csv_block(text).splitlines() if line[27:].strip()
        ),
    },
    # written by _big_parquet (a batched table at test size) and _log_parquet (a catalogue-family log)
    "decompositions.md": {"BIG.parquet": None, "log.parquet": None},
}

#: commands written inside a table or prose, run as if they were a command line at that place
INLINE = {"formats.md": ["anonbandits decompose g.csv --demand 1000 --C 1"]}

#: outputs named after the reader's own placeholder input (BIG.parquet): not files the docs make in a clone
PLACEHOLDER_OUTPUTS = {"OUT/"}

#: examples that take more than a few seconds (kernel compilation, benchmark smoke runs)
SLOW: dict[str, str] = {}


@dataclass
class Example:
    page: str
    line: int
    kind: str  # "python" or "shell"
    source: str
    shown: list[str] | None = None  # the output the page shows, if any
    outputs: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def recipe(self) -> str | None:
        return RECIPES.get(self.source) if self.kind == "shell" else None

    @property
    def slow(self) -> bool:
        return self.id in SLOW or self.source.startswith(".venv/bin/python benchmarks/")


def _blocks(text: str, lang: str | None = None) -> list:
    """(first line, lang, body, start, end) of every fenced block, or (first line, body) of those in ``lang``."""
    found = [
        (text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)
    ]
    return [(block[0], block[2]) for block in found if block[1] == lang] if lang is not None else found


def _csv_block(text: str) -> str:
    return next(body for _, lang, body, _, _ in _blocks(text) if lang == "text" and body.startswith("user,arm"))


def _outputs(command: list[str]) -> list[str]:
    if command[0] == ".venv/bin/python" and command[1].startswith("benchmarks/"):
        return ["build/benchmarks/"]
    return [command[i + 1] for i, word in enumerate(command[:-1]) if word in ("--out", "--plot", "-o", "--residual")]


def _examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    blocks = _blocks(text)
    found: list[Example] = []
    for i, (line, lang, body, _, end) in enumerate(blocks):
        if lang == "python":
            shown = None
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            if after and after[1] == "text" and not text[end : after[3]].strip() and not after[2].startswith("$ "):
                shown = after[2].splitlines()
            outputs = re.findall(r"open\(\"([^\"]+)\", \"w\"\)|write_decomposition\([^,\n]+, \"([^\"]+)\"\)", body)
            outputs = [a or b for a, b in outputs]
            found.append(Example(page.name, line, "python", body, shown, outputs))
            continue
        if lang not in ("", "bash", "sh", "console", "text"):
            continue
        joined = body.replace("\\\n", " ").splitlines()
        current: Example | None = None
        for offset, raw in enumerate(joined):
            prompt = raw.startswith("$ ")
            words = raw.removeprefix("$ ").split("#")[0].split()
            if (prompt or lang != "text") and COMMAND.match(raw.removeprefix("$ ")):
                source = " ".join(words)
                current = Example(page.name, line + 1 + offset, "shell", source, [] if prompt else None)
                current.outputs = _outputs(words)
                found.append(current)
            elif current is not None and current.shown is not None:  # the lines after a "$ command"
                current.shown.append(raw)
    for source in INLINE.get(page.name, []):
        line = text.count("\n", 0, text.index(f"({source})")) + 1
        found.append(Example(page.name, line, "shell", source, None, _outputs(source.split())))
    return sorted(found, key=lambda e: e.line)


EXAMPLES = {page.name: _examples(page) for page in PAGES}
ALL = [e for examples in EXAMPLES.values() for e in examples]


def _normalise(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        for pattern, replacement in NORMALISE:
            line = re.sub(pattern, replacement, line)
        if line.strip():
            out.append(" ".join(line.split()))
    return out


def _same(printed: list[str], shown: list[str]) -> bool:
    printed, shown = _normalise(printed), _normalise(shown)
    if len(printed) != len(shown):
        return False
    for a, b in zip(printed, shown, strict=True):
        words_a, words_b = a.split(), b.split()
        if len(words_a) != len(words_b):
            return False
        for x, y in zip(words_a, words_b, strict=True):
            try:
                if not math.isclose(float(x), float(y), rel_tol=1e-6):
                    return False
            except ValueError:
                if x != y:
                    return False
    return True


def _big_parquet(path: Path) -> None:
    """A batched table (2,000 users, 4 arms, demand 1000 in the metadata) standing in for BIG.parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    active = np.random.default_rng(0).random((2000, 4)) < 0.6
    active[np.arange(2000), np.arange(2000) % 4] = True
    users, arms = np.nonzero(active)
    table = pa.table({"user": users, "arm": arms}).replace_schema_metadata({"demand": "1000"})
    pq.write_table(table, path)


def _log_parquet(path: Path) -> None:
    """A catalogue-family log at test size (10,000 users x 300 items, C = 50) standing in for log.parquet."""
    from anondecomp.bench.real import powerlaw_log, write_edge_table

    write_edge_table(powerlaw_log(10_000, 300, C=50, seed=0, max_share=0.1), path, C=50)


PARQUET_FIXTURES = {"BIG.parquet": _big_parquet, "log.parquet": _log_parquet}


def _scratch(root: Path, page: str) -> Path:
    shutil.copytree(ROOT / "examples", root / "examples")
    shutil.copytree(ROOT / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "docs" / "results").mkdir(parents=True)
    for toml in (ROOT / "docs" / "results").glob("*.toml"):
        shutil.copy(toml, root / "docs" / "results" / toml.name)
    text = (ROOT / "docs" / page).read_text(encoding="utf-8") if page != "README.md" else ""
    for name, make in FIXTURES.get(page, {}).items():
        if make is None:
            PARQUET_FIXTURES[name](root / name)
        else:
            (root / name).write_text(make(text) + "\n", encoding="utf-8")
    return root


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _run(example: Example, root: Path) -> None:
    """Run one example in ``root`` (the current directory); compare what it prints with what the page shows."""
    if example.kind == "python":
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(example.source, f"<{example.id}>", "exec"), {"__name__": "__doc_example__"})
        if example.shown is not None:
            assert _same(out.getvalue().splitlines(), example.shown), f"{example.id} printed\n{out.getvalue()}"
        return
    words = shlex.split(example.source)
    if words[0] == ".venv/bin/python":
        args = [w for w in words[1:] if not (w.startswith("[") and w != "[--quick]")]
        args = [w.strip("[]") for w in args if not w.endswith("]") or w == "[--quick]"]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}
        done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{example.id}: {example.source}\n{done.stderr[-2000:]}"
        return
    small = example.source.removeprefix("anonbandits ")
    for pattern, replacement in SMALL:
        small = re.sub(pattern, replacement, small)
    argv = shlex.split(small)
    # a simulate command without --out writes its table outside the scratch dir, for the showcase check only
    showcase = root.parent / f"{root.name}-showcase" / f"line{example.line}.csv"
    if "--algorithm" in argv and "--help" not in argv and "--out" not in argv:
        showcase.parent.mkdir(exist_ok=True)
        argv += ["--out", str(showcase)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    # a shown "anonbandits CMD: error: ..." line is a refusal, exit code 2 (README: "Bad input ...")
    refused = bool(example.shown) and any(": error: " in line for line in example.shown)
    assert code == (2 if refused else 0), f"{example.id}: {example.source}\n{err.getvalue()}"
    printed = (out.getvalue() + err.getvalue()).splitlines()
    assert printed, example.source
    if example.shown is not None:
        assert _same(printed, example.shown), f"{example.id} printed\n" + "\n".join(printed)
    for name in example.outputs:
        if name != "/dev/full" and not refused:
            assert (root / name).exists(), f"{example.id} did not write {name}"
    if "--algorithm" in words and "--help" not in words:
        _showcase(example, root / words[words.index("--out") + 1] if "--out" in words else showcase)


def _check_page(page: str, examples: list[Example], root: Path, monkeypatch) -> None:
    _scratch(root, page)
    monkeypatch.chdir(root)
    before = _files(root)
    for example in examples:
        _run(example, root)
    allowed = [name for e in examples for name in e.outputs]
    stray = [
        f
        for f in _files(root) - before
        if not any(f == name or (name.endswith("/") and f.startswith(name)) for name in allowed)
    ]
    assert not stray, f"{page}: examples wrote files that are not their declared outputs: {sorted(stray)}"


PAGE_IDS = [p.name for p in PAGES if any(e.recipe is None and not e.slow for e in EXAMPLES[p.name])]


@pytest.mark.parametrize("page", PAGE_IDS)
def test_page_examples_run_and_print_what_the_page_shows(page, tmp_path, monkeypatch):
    """Every example of the page that is neither a recipe nor slow, in document order, in one scratch dir."""
    _check_page(page, [e for e in EXAMPLES[page] if e.recipe is None and not e.slow], tmp_path, monkeypatch)


SLOW_EXAMPLES = [e for e in ALL if e.slow and e.recipe is None]


@pytest.mark.slow
@pytest.mark.parametrize("example", SLOW_EXAMPLES, ids=[e.id for e in SLOW_EXAMPLES])
def test_slow_example_runs(example, tmp_path, monkeypatch):
    _check_page(example.page, [example], tmp_path, monkeypatch)


def test_examples_are_collected_from_every_kind_of_block():
    kinds = {(e.page, e.kind) for e in ALL}
    assert {
        ("README.md", "python"),
        ("README.md", "shell"),
        ("optimal.md", "python"),
        ("optimal.md", "shell"),
        ("formats.md", "shell"),
        ("distributed-dp.md", "shell"),
        ("multi-agent-bai.md", "shell"),
    } <= kinds
    readme = {shlex.split(e.source)[1] for e in EXAMPLES["README.md"] if e.kind == "shell"}
    assert readme >= {"decompose", "verify", "beta", "bench", "simulate"}
    assert sum(e.shown is not None for e in ALL) >= 4  # outputs shown in the docs are compared
    assert not [e.id for e in ALL if e.kind == "shell" and "..." in e.source], "a command holds a literal ..."


def test_every_recipe_names_a_command_of_the_docs_and_says_why():
    commands = {e.source for e in ALL if e.kind == "shell"}
    assert set(RECIPES) <= commands, set(RECIPES) - commands
    assert all(len(reason) > 20 for reason in RECIPES.values())
    assert set(SLOW) <= {e.id for e in ALL}, set(SLOW) - {e.id for e in ALL}


def test_no_two_examples_write_the_same_output():
    seen: dict[str, str] = {}
    for e in ALL:
        for name in e.outputs if e.recipe is None else []:
            # the benchmarks share build/benchmarks/, each under file names of its own (benchmarks/_output.py)
            if name in ("/dev/full", "build/benchmarks/"):
                continue
            assert name not in seen, f"{e.id} and {seen[name]} both write {name}"
            seen[name] = e.id


def test_every_output_of_the_examples_is_gitignored():
    names = sorted({name for e in ALL for name in e.outputs} - PLACEHOLDER_OUTPUTS - {"/dev/full"})
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "--verbose", "--non-matching", *names],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    unmatched = [line.split("\t")[1] for line in done.stdout.splitlines() if line.startswith("::")]
    assert not unmatched, f"outputs of the docs' examples not in .gitignore: {unmatched}"
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--ignored", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert not tracked, f".gitignore's patterns match tracked files: {tracked}"


# --- showcases: each simulate command with --out shows its algorithm doing what it is for -------------------


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


#: the results-table column that says a run found the best arm (one name in every family)
FOUND = ("best_arm_found",)


def _found(row: dict[str, str]) -> bool:
    values = [row[c] for c in FOUND if row.get(c, "") != ""]
    assert values, f"no column of {FOUND} in {sorted(row)}"
    return all(v in ("1", "1.0") for v in values)


def _learns(rows: list[dict[str, str]]) -> bool:
    """Regret under half a uniformly random policy's (horizon x mean gap), and the best arm found."""
    means = np.array([float(m) for m in rows[0]["means"].split(",")])
    uniform = int(rows[0]["horizon"]) * float(np.mean(means.max() - means))
    return np.mean([float(r["regret"]) for r in rows]) < 0.5 * uniform and all(_found(r) for r in rows)


def _commits(rows: list[dict[str, str]]) -> bool:
    return (
        all(int(r["exploration_rounds"]) < int(r["horizon"]) for r in rows)
        and np.mean([float(r["optimal_fraction"]) for r in rows]) >= 0.95
    )


#: algorithm -> (what the run is for, check on its results table)
SHOWCASE = {
    "anon-etc": ("commits within the horizon, nearly every user to its best arm", _commits),
    "anon-batched": (
        "ends with nearly every user on its best arm",
        lambda rows: np.mean([float(r["optimal_fraction"]) for r in rows]) >= 0.95,
    ),
    **{
        name: ("learns the best arm with regret well below a uniformly random policy's", _learns)
        for name in (
            "se",
            "dp-se",
            "anytime-lazy-ucb",
            "hybrid-ucb",
            "ftnl",
            "naive-ftnl",
            "cdp-se",
            "ldp-se",
            "dist-dp-se",
            "dist-rdp-se",
            "dist-cdp-se",
            "shuffle-dp-se",
        )
    },
    **{
        name: ("finds the best arm in every run", lambda rows: all(_found(r) for r in rows))
        for name in (
            "decentralized-elimination",
            "no-sharing",
            "full-sharing",
            "mase",
            "dp-mase",
            "corrupted-elimination",
            "feraud",
            "central",
            "independent",
        )
    },
}


def _showcase(example: Example, table: Path) -> None:
    rows = _rows(table)
    claim, holds = SHOWCASE[rows[0]["algorithm"]]
    keys = ("seed", "regret", "horizon", "optimal_fraction", "exploration_rounds", *FOUND)
    shown = [{k: r[k] for k in keys if k in r} for r in rows]
    assert holds(rows), f"{example.id}: {rows[0]['algorithm']} should show that it {claim}; got {shown}"


def test_every_simulate_command_of_the_docs_has_a_showcase_check():
    algorithms = {
        e.source.split("--algorithm ")[1].split()[0]
        for e in ALL
        if e.kind == "shell" and "--algorithm" in e.source and "--help" not in e.source
    }
    assert algorithms <= set(SHOWCASE), algorithms - set(SHOWCASE)


def test_readme_anon_etc_curve_bends_where_it_commits():
    """The README says its anon-etc line commits within the horizon, so the regret curve bends and flattens."""
    from anonbandits import simulate

    line = next(e.source for e in EXAMPLES["README.md"] if "--algorithm anon-etc" in e.source)
    words = shlex.split(line)
    params = {
        w[2:].replace("-", "_"): v
        for w, v in zip(words, words[1:], strict=False)
        if w.startswith("--") and w[2:] not in ("algorithm", "seeds", "out", "plot")
    }
    run = simulate("anon-etc", seed=0, **params)
    rounds, regret = run.curve
    steep = np.diff(regret) / np.diff(rounds)
    commit = int(run.metrics["exploration_rounds"])
    assert commit < rounds[-1]
    assert steep[rounds[1:] <= commit].min() > 10 * steep[rounds[:-1] >= commit].max()
    assert "bends" in README.read_text(encoding="utf-8")


def test_optimal_fraction_scores_the_recommendations_when_the_run_never_committed(tmp_path, monkeypatch):
    """docs/anonymous-bandits.md: ``optimal_fraction`` scores "the arm each user would commit to" if the run
    never committed: a number, never an empty cell or NaN."""
    page = (ROOT / "docs" / "anonymous-bandits.md").read_text(encoding="utf-8")
    assert "the arm each user would commit to if the run never committed" in " ".join(page.split())
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            [
                "simulate",
                "--algorithm",
                "anon-etc",
                "--seeds",
                "1",
                "--workers",
                "1",
                "--no-progress",
                "--out",
                "never.csv",
            ]
        )
    assert code == 0
    (row,) = _rows(tmp_path / "never.csv")
    assert int(row["exploration_rounds"]) >= int(row["horizon"])  # it never committed
    assert 0 <= float(row["optimal_fraction"]) <= 1


def test_formats_csv_example_is_the_batched_json_example():
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    sets = json.loads(_blocks(text, "json")[1][1])["active_sets"]
    rows = FIXTURES["formats.md"]["g.csv"](text).splitlines()[1:]
    assert sorted(tuple(r.split(",")) for r in rows) == sorted((u, a) for u, arms in sets.items() for a in arms)


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
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and ast.get_docstring(node)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


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
