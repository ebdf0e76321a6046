"""``anonbandits decompose`` and ``verify``: summaries, output files, and one clear line per user mistake."""

import json
import signal
import subprocess
import sys

import pytest

from anonbandits.cli.main import main

EXAMPLE = "examples/ads_60x4.json"


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_decompose_prints_the_summary_and_verify_accepts_it(tmp_path, capsys):
    out_file = tmp_path / "d.json"
    code, out, _ = run(["decompose", EXAMPLE, "--C", "3", "--method", "polytope", "-o", str(out_file)], capsys)
    assert code == 0
    for field in ("method", "R (assignments)", "lower bound", "R / lower bound", "distinct assignments", "wall time"):
        assert field in out
    doc = json.loads(out_file.read_text())
    assert doc["method"] == "polytope" and doc["C"] == 3
    code, out, _ = run(["verify", EXAMPLE, str(out_file), "--C", "3"], capsys)
    assert code == 0 and out.startswith("valid")


@pytest.mark.parametrize("method", ["greedy", "block", "polytope", "randomized", "auto"])
def test_every_method_from_the_command_line_verifies(method, tmp_path, capsys):
    out_file = tmp_path / "d.json"
    assert run(["decompose", EXAMPLE, "--method", method, "-o", str(out_file)], capsys)[0] == 0  # C from file
    assert run(["verify", EXAMPLE, str(out_file)], capsys)[0] == 0


def test_verify_lists_every_short_pair(tmp_path, capsys):
    graph = {"demand": 4, "active_sets": {"u1": ["a"], "u2": ["a", "b"], "u3": ["a", "b"], "u4": ["b"]}}
    (tmp_path / "g.json").write_text(json.dumps(graph))
    bad = {"assignments": [{"multiplicity": 4, "arms": {"u1": "a", "u2": "a", "u3": "b", "u4": "b"}}]}
    (tmp_path / "d.json").write_text(json.dumps(bad))
    code, out, _ = run(["verify", str(tmp_path / "g.json"), str(tmp_path / "d.json"), "--C", "1"], capsys)
    assert code == 1
    assert out.startswith("INVALID")
    assert "user 'u2', arm 'b': 0 informative samples, needs 2" in out
    assert "user 'u3', arm 'a': 0 informative samples, needs 2" in out


def _graph(tmp_path, doc):
    path = tmp_path / "g.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("doc, extra, message", [
    (None, [], "no such file"),
    ("{not json", [], "malformed JSON at line 1"),
    ({"hello": 1}, [], "neither format"),
    ({"demand": 5, "active_sets": {"u": ["a"]}}, [], "no C given"),
    ({"demand": 5, "active_sets": {"u": ["a"]}, "C": 0}, [], "C must be at least 1"),
    ({"demand": 0, "active_sets": {"u": ["a"]}}, ["--C", "1"], "'demand' must be positive"),
    ({"demand": 5, "active_sets": {"u": []}}, ["--C", "1"], "user 'u' has no demand"),
    ({"nodes": [{"id": "u", "bipartite": 0}, {"id": "a", "bipartite": 1}],
      "links": [{"source": "u", "target": "a", "weight": -2}]}, ["--C", "1"], "must be positive"),
    ({"nodes": [{"id": "u", "bipartite": 0}, {"id": "a", "bipartite": 1}],
      "links": [{"source": "u", "target": "a", "weight": "lots"}]}, ["--C", "1"], "must be a finite number"),
    ({"demand": 5, "active_sets": {"u1": ["a", "b"], "u2": ["a"], "u3": ["a"]}}, ["--C", "2"],
     "arm(s) 'b' are wanted by fewer than C+1 = 3 users"),
])
def test_bad_input_is_one_line_and_exit_2(doc, extra, message, tmp_path, capsys):
    path = str(tmp_path / "missing.json") if doc is None else _graph(tmp_path, doc)
    out_file = tmp_path / "out.json"
    code, _, err = run(["decompose", path, *extra, "-o", str(out_file)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not out_file.exists()


def test_unreadable_file_is_one_line(tmp_path, capsys):
    code, _, err = run(["decompose", str(tmp_path), "--C", "2"], capsys)  # a directory, not a file
    assert code == 2 and "cannot read file" in err and err.count("\n") == 1


def test_unknown_method_is_rejected(capsys):
    assert main(["decompose", EXAMPLE, "--method", "simplex"]) == 2
    assert "invalid choice: 'simplex'" in capsys.readouterr().err


def test_polytope_refusal_names_arms_and_suggests_block(tmp_path, capsys):
    doc = {"demand": 6, "active_sets": {f"u{i}": ["x", "y"] if i < 4 else ["x"] for i in range(8)}}
    code, _, err = run(["decompose", _graph(tmp_path, doc), "--C", "3", "--method", "polytope"], capsys)
    assert code == 2 and "'y' (2)" in err and "use --method block" in err


def test_best_effort_covers_the_rest_and_reports_it(tmp_path, capsys):
    doc = {"demand": 4, "active_sets": {"u1": ["a", "b"], "u2": ["a"], "u3": ["a"]}}
    out_file = tmp_path / "out.json"
    code, out, _ = run(["decompose", _graph(tmp_path, doc), "--C", "2", "--best-effort", "-o", str(out_file)],
                       capsys)
    assert code == 0 and "not coverable" in out and "(u1, b)" in out
    assert json.loads(out_file.read_text())["uncovered"] == [{"user": "u1", "arm": "b"}]


def test_installed_command_exits_2_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "anonbandits.cli.main", "decompose", str(tmp_path / "nope.json"),
                           "--C", "2"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("no such file") and "Traceback" not in proc.stderr


SLOW_WRITE = """
import contextlib, sys, time
import anondecomp.io as io
real_open = io.atomic_open

@contextlib.contextmanager
def slow_open(path, newline=None):
    with real_open(path, newline) as fh:
        fh.write("partial")
        fh.flush()
        print("writing", file=sys.stderr, flush=True)
        time.sleep(60)
        yield fh

io.atomic_open = slow_open
from anonbandits.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


SLOW_PARQUET = """
import sys, time
from anondecomp import compact

real = compact._write_file

def slow(path, *args):
    real(path, *args)
    print("writing", file=sys.stderr, flush=True)
    time.sleep(60)

compact._write_file = slow
from anonbandits.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("out", "script"), [("out.json", SLOW_WRITE), ("d.parquet", SLOW_PARQUET),
                                             ("parts/", SLOW_PARQUET)])
def test_sigterm_during_a_write_leaves_nothing(tmp_path, out, script):
    """SIGTERM unwinds like Ctrl-C: the writers (JSON, a Parquet file, a part directory) remove their hidden
    temporary file or directory, and the run says so."""
    (tmp_path / "g.json").write_text(json.dumps({"demand": 4, "active_sets": {f"u{i}": ["a", "b"] for i in range(8)}}))
    proc = subprocess.Popen([sys.executable, "-c", script, "decompose", "g.json", "--C", "1", "-o", out],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    assert proc.stderr.readline().strip() == "writing"
    assert any(p.name.startswith(f".{out.rstrip('/')}.") for p in tmp_path.iterdir())  # the write is under way
    proc.send_signal(signal.SIGTERM)
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert err.strip() == "anonbandits: terminated"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


def test_version_comes_from_the_package_metadata(capsys):
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"anonbandits {metadata.version('anonbandits')}"


def test_warnings_become_one_line_in_cli_wording(tmp_path, capsys):
    graph = _graph(tmp_path, {"demand": 4, "active_sets": {f"u{i}": ["a", "b"] for i in range(8)}})
    code, out, err = run(["decompose", graph, "--C", "1", "--method", "block", "--time-limit", "5"], capsys)
    assert code == 0 and "R (assignments)" in out
    assert err == ("anonbandits: warning: --time-limit is read only by --method optimal and --certify; "
                   "ignored for --method block\n")


def test_library_warnings_name_the_flags():
    from anonbandits.cli.main import cli_wording

    assert cli_wording("use best_effort to cover everything else") == "use --best-effort to cover everything else"
    assert cli_wording("use method='polytope' or 'block'") == "use --method polytope or block"
