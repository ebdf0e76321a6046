"""``anonbandits decompose`` and ``verify``: summaries, output files, and one clear line per user mistake."""

import json
import signal
import subprocess
import sys

import numpy as np
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


@pytest.mark.parametrize(
    "doc, extra, message",
    [
        (None, [], "no such file"),
        ("{not json", [], "malformed JSON at line 1"),
        ({"hello": 1}, [], "neither format"),
        ({"demand": 5, "active_sets": {"u": ["a"]}}, [], "no C given"),
        ({"demand": 5, "active_sets": {"u": ["a"]}, "C": 0}, [], "C must be at least 1"),
        ({"demand": 0, "active_sets": {"u": ["a"]}}, ["--C", "1"], "'demand' must be positive"),
        ({"demand": 5, "active_sets": {"u": []}}, ["--C", "1"], "user 'u' has no demand"),
        (
            {
                "nodes": [{"id": "u", "bipartite": 0}, {"id": "a", "bipartite": 1}],
                "links": [{"source": "u", "target": "a", "weight": -2}],
            },
            ["--C", "1"],
            "must be positive",
        ),
        (
            {
                "nodes": [{"id": "u", "bipartite": 0}, {"id": "a", "bipartite": 1}],
                "links": [{"source": "u", "target": "a", "weight": "lots"}],
            },
            ["--C", "1"],
            "must be a finite number",
        ),
        (
            {"demand": 5, "active_sets": {"u1": ["a", "b"], "u2": ["a"], "u3": ["a"]}},
            ["--C", "2"],
            "arm(s) 'b' are wanted by fewer than C+1 = 3 users",
        ),
    ],
)
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
    code, out, _ = run(["decompose", _graph(tmp_path, doc), "--C", "2", "--best-effort", "-o", str(out_file)], capsys)
    assert code == 0 and "not coverable" in out and "(u1, b)" in out
    assert json.loads(out_file.read_text())["uncovered"] == [{"user": "u1", "arm": "b"}]


def test_installed_command_exits_2_without_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "anonbandits.cli.main", "decompose", str(tmp_path / "nope.json"), "--C", "2"],
        capture_output=True,
        text=True,
    )
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


@pytest.mark.parametrize(
    ("out", "script"), [("out.json", SLOW_WRITE), ("d.parquet", SLOW_PARQUET), ("parts/", SLOW_PARQUET)]
)
def test_sigterm_during_a_write_leaves_nothing(tmp_path, out, script):
    """SIGTERM unwinds like Ctrl-C: the writers (JSON, a Parquet file, a part directory) remove their hidden
    temporary file or directory, and the run says so."""
    (tmp_path / "g.json").write_text(json.dumps({"demand": 4, "active_sets": {f"u{i}": ["a", "b"] for i in range(8)}}))
    proc = subprocess.Popen(
        [sys.executable, "-c", script, "decompose", "g.json", "--C", "1", "-o", out],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
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
    assert err == (
        "anonbandits: warning: --time-limit is read only by --method auto, optimal and --certify; "
        "ignored for --method block\n"
    )


def test_library_warnings_name_the_flags():
    from anonbandits.cli.main import cli_wording

    assert cli_wording("use best_effort to cover everything else") == "use --best-effort to cover everything else"
    assert cli_wording("use method='polytope' or 'block'") == "use --method polytope or block"


def write_forms(tmp_path, N: int = 600, K: int = 6, D: int = 60, C: int = 4) -> dict:
    """One random batched graph in every input form: Parquet (batched, and weights D / |A_i|), CSV, JSON."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    active = rng.random((N, K)) < 0.5
    active[np.arange(N), rng.integers(0, K, N)] = True
    u, a = np.nonzero(active)
    w = D / active.sum(axis=1)[u]
    paths = {
        form: tmp_path / f"g_{form}.{ext}"
        for form, ext in (("batched", "parquet"), ("weighted", "parquet"), ("csv", "csv"), ("json", "json"))
    }
    pq.write_table(
        pa.table({"user": u, "arm": a}).replace_schema_metadata({"demand": str(D), "C": str(C)}), paths["batched"]
    )
    pq.write_table(
        pa.table({"user": u, "arm": a, "weight": w}).replace_schema_metadata({"C": str(C)}), paths["weighted"]
    )
    rows = zip(u.tolist(), a.tolist(), w.tolist(), strict=True)
    paths["csv"].write_text("user,arm,weight\n" + "".join(f"u{i},a{j},{x!r}\n" for i, j, x in rows))
    paths["json"].write_text(
        json.dumps(
            {
                "C": C,
                "demand": D,
                "active_sets": {f"u{i}": [f"a{j}" for j in np.flatnonzero(active[i])] for i in range(N)},
            }
        )
    )
    return paths


def schedule_of(path, graph) -> np.ndarray:
    """(R, N) every round's arm indices from a compact schedule (user, arm, first_round, rounds)."""
    import pyarrow.parquet as pq

    t = pq.read_table(path).to_pydict()
    users, arms = {u: i for i, u in enumerate(graph.users)}, {a: j for j, a in enumerate(graph.arms)}
    R = max(f + n for f, n in zip(t["first_round"], t["rounds"], strict=True))
    out = np.full((R, graph.n_users), -1)
    for u, a, f, n in zip(t["user"], t["arm"], t["first_round"], t["rounds"], strict=True):
        out[f : f + n, users[u]] = arms[a]
    return out


@pytest.mark.parametrize("form", ["batched", "weighted", "csv", "json"])
def test_the_command_and_the_library_give_one_schedule_for_a_large_batched_graph(form, tmp_path, capsys, monkeypatch):
    import anondecomp
    from anonbandits.cli import decompose
    from anondecomp.compact import verify_compact
    from anondecomp.methods import phase

    path = write_forms(tmp_path)[form]
    args = ["decompose", str(path), "--C", "4", "-o", str(tmp_path / "out.parquet")]
    code, small, _ = run(args, capsys)  # below the threshold: the paper's route
    assert code == 0 and "phase" not in small
    monkeypatch.setattr(decompose, "FAST_PAIRS", 100)
    monkeypatch.setattr(phase, "PHASE_PAIRS", 100)
    code, out, _ = run(args, capsys)
    streamed = form in ("batched", "weighted")  # a Parquet table of integer ids: streamed into its support
    method = "sharded (phase)" if streamed else "phase"
    assert code == 0 and f"method               {method}\n" in out and "R / lower bound      1.0000" in out
    graph, _ = anondecomp.read_graph(path)
    assert verify_compact(graph, 4, tmp_path / "out.parquet").valid
    library = anondecomp.decompose(graph, 4)
    assert library.method == "phase" and anondecomp.verify(graph, 4, library).valid
    # the same schedule: the same assignments, each run as many rounds (the command's rows expanded to rounds)
    rounds = schedule_of(tmp_path / "out.parquet", graph)
    distinct, counts = np.unique(rounds, axis=0, return_counts=True)
    order = np.lexsort(library.assignments.T[::-1])
    assert np.array_equal(distinct, library.assignments[order])
    assert np.array_equal(counts, library.multiplicities[order])


def test_certify_on_the_sharded_path_prints_the_certified_bound(tmp_path, capsys, monkeypatch):
    from anonbandits.cli import decompose

    monkeypatch.setattr(decompose, "FAST_PAIRS", 100)
    path = write_forms(tmp_path)["batched"]
    for extra in ([], ["--shards", "2"]):
        code, out, _ = run(["decompose", str(path), "--C", "4", "--certify", *extra], capsys)
        R = int(out.split("R (assignments)")[1].split()[0])
        assert code == 0 and "sharded" in out
        assert f"LP lower bound       {R:.4f}   (certified; trivial bound" in out


@pytest.mark.parametrize(
    "extra", [["--method", "polytope"], ["--best-effort"], ["--time-limit", "5"], ["-o", "out.json"]]
)
def test_tuning_flags_and_json_output_read_the_table_whole(extra, tmp_path, capsys, monkeypatch):
    from anonbandits.cli import decompose

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(decompose, "FAST_PAIRS", 100)
    path = write_forms(tmp_path)["weighted"]
    code, out, _ = run(["decompose", str(path), *extra], capsys)
    assert code == 0 and "sharded" not in out and "distinct assignments" in out


def test_the_default_command_keeps_general_weights_on_the_dense_path(tmp_path, capsys, monkeypatch):
    import pyarrow.parquet as pq

    from anonbandits.cli import decompose

    monkeypatch.setattr(decompose, "FAST_PAIRS", 100)
    path = write_forms(tmp_path)["weighted"]
    table = pq.read_table(path)
    pq.write_table(
        table.set_column(
            2, "weight", [table.column("weight").to_numpy() * 1.5 ** (table.column("user").to_numpy() % 2)]
        ),
        path,
    )  # two demands, D and 1.5 D: no single D gives every user its rounds
    code, out, _ = run(["decompose", str(path), "-o", str(tmp_path / "out.parquet")], capsys)
    assert code == 0 and "sharded" not in out and "distinct assignments" in out
    assert run(["verify", str(path), str(tmp_path / "out.parquet")], capsys)[1].startswith("valid")


@pytest.mark.parametrize("threshold", [100, 10**9])
def test_a_thin_arm_is_the_same_one_line_error_on_either_path(threshold, tmp_path, capsys, monkeypatch):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from anonbandits.cli import decompose

    monkeypatch.setattr(decompose, "FAST_PAIRS", threshold)
    path = write_forms(tmp_path)["weighted"]
    table = pq.read_table(path)
    u, a = table.column("user").to_numpy(), table.column("arm").to_numpy()
    keep = (a != 5) | (u < 3)  # arm 5 keeps 3 users, fewer than C+1 = 5
    u, a = u[keep], a[keep]
    pq.write_table(pa.table({"user": u, "arm": a, "weight": 60 / np.bincount(u)[u]}), path)
    code, out, err = run(["decompose", str(path), "--C", "4", "-o", str(tmp_path / "out.parquet")], capsys)
    assert code == 2 and out == "" and not (tmp_path / "out.parquet").exists()
    assert (
        err.strip().endswith(
            "arm(s) '5' are wanted by fewer than C+1 = 5 users and can never be observed; "
            "use --best-effort to cover everything else"
        )
        and "\n" not in err.strip()
    )


def test_a_json_output_of_many_assignment_cells_names_the_parquet_form(tmp_path, capsys, monkeypatch):
    """-o X.json on a graph whose JSON would list more than JSON_CELLS_WARNING (10^7) assignment cells (distinct
    assignments x users) says so in one line naming -o X.parquet, and still writes the JSON."""
    from anonbandits.cli import decompose

    args = ["decompose", EXAMPLE, "--C", "3", "--method", "greedy"]
    code, out, err = run([*args, "-o", str(tmp_path / "d.json")], capsys)
    distinct = int(out.split("distinct assignments")[1].split()[0])
    assert code == 0 and err == "" and distinct * 60 <= decompose.JSON_CELLS_WARNING == 10**7
    monkeypatch.setattr(decompose, "JSON_CELLS_WARNING", distinct * 60 - 1)  # as if the graph were that large
    code, out, err = run([*args, "-o", str(tmp_path / "big.json")], capsys)
    assert code == 0 and json.loads((tmp_path / "big.json").read_text())["distinct_assignments"] == distinct
    assert err == (
        f"anonbandits: warning: {tmp_path / 'big.json'} will hold {distinct * 60:.1e} assignment cells "
        f"({distinct} distinct assignments x 60 users); -o {tmp_path / 'big.parquet'} writes the compact "
        "schedule (docs/formats.md)\n"
    )
    code, _, err = run([*args, "-o", str(tmp_path / "big.parquet")], capsys)  # the compact form: no warning
    assert code == 0 and err == ""


# -- Ctrl-C and SIGTERM in every phase: exit 130 (143) within 3 s, no output -------------------------------------

#: the command in a child process, with progress lines every 0.1 s off a terminal (so a test sees each phase)
WITH_PHASES = """
import sys
from anonbandits.cli import progress
progress.INTERVAL = 0.1
from anonbandits.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

#: as WITH_PHASES, but the solve (or the write of each Parquet file) first spends seconds in one call into C that
#: releases the GIL and checks no signal, as a HiGHS solve does: Python's KeyboardInterrupt waits for its end
STUCK_IN_C = """
import hashlib, sys
import anondecomp
from anondecomp import compact
from anonbandits.cli import progress
progress.INTERVAL = 0.1

def c_call():
    print("in C", file=sys.stderr, flush=True)
    hashlib.pbkdf2_hmac("sha256", b"x", b"y", 50_000_000)

if sys.argv.pop(1) == "solve":
    real = anondecomp.decompose
    anondecomp.decompose = lambda *a, **k: (c_call(), real(*a, **k))[1]
else:
    real_write = compact._write_file
    compact._write_file = lambda path, *a: (real_write(path, *a), c_call())
from anonbandits.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _interrupt_in(phase: str, cmd: list[str], cwd, sig=signal.SIGINT, delay: float = 0.0) -> tuple[int, float, str]:
    """Run ``cmd`` (a Python child), send ``sig`` ``delay`` seconds after a line of its stderr says ``: phase``
    (progress) or is ``phase``; (exit code, seconds from the signal to the exit, stderr after that line)."""
    import time

    # Ctrl-C as from a terminal: a shell may have started the tests with SIGINT ignored, which a child inherits
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if f": {phase}" in line or line.strip() == phase:
            break
    else:
        proc.wait()
        raise AssertionError(f"phase {phase!r} not seen: {''.join(seen)}")
    time.sleep(delay)
    start = time.monotonic()
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=30)
    finally:
        proc.kill()
    took = time.monotonic() - start
    return code, took, proc.stderr.read()


def _ring_table(path, n: int) -> None:
    """An edge table of n users and n items, user i wanting items i and i+1 (mod n), C = 1: read in about a second,
    solved (sessions) in a few (tests/hostile's ring_50000 fixture)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    users = np.repeat(np.arange(n), 2)
    table = pa.table({"user": users, "arm": (users + np.tile([0, 1], n)) % n, "weight": np.ones(2 * n)})
    pq.write_table(table.replace_schema_metadata({"C": "1"}), path)


@pytest.mark.slow
def test_ctrl_c_while_solving_a_large_graph_exits_130_within_3_s_and_writes_nothing(tmp_path):
    _ring_table(tmp_path / "g.parquet", 50_000)
    code, took, err = _interrupt_in(
        "solving", [sys.executable, "-c", WITH_PHASES, "decompose", "g.parquet", "-o", "d.parquet"], tmp_path
    )
    assert code == 130 and took < 3, (code, took, err)
    assert err.strip().endswith("anonbandits: interrupted") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.parquet"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stuck", "out", "sig"),
    [("solve", "d.json", signal.SIGINT), ("write", "d.parquet", signal.SIGINT), ("write", "parts/", signal.SIGTERM)],
)
def test_a_signal_during_a_long_call_into_c_still_ends_the_command_within_3_s(tmp_path, stuck, out, sig):
    """The main thread inside one long library call (a HiGHS solve) cannot raise KeyboardInterrupt until it
    returns; the command's deadline ends it INTERRUPT_GRACE (2 s) after the signal, removing the temporary
    file or part directory being written, with the exit code and the line of the ordinary path."""
    from anonbandits.cli.main import INTERRUPT_GRACE

    (tmp_path / "g.json").write_text(json.dumps({"demand": 4, "active_sets": {f"u{i}": ["a", "b"] for i in range(8)}}))
    # the signal comes 0.3 s after the child says it calls into C: else it may land just before the call
    code, took, err = _interrupt_in(
        "in C",
        [sys.executable, "-c", STUCK_IN_C, stuck, "decompose", "g.json", "--C", "1", "-o", out],
        tmp_path,
        sig,
        delay=0.3,
    )
    assert code == 128 + sig and INTERRUPT_GRACE - 0.1 < took < 3, (code, took, err)
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.strip().endswith(f"anonbandits: {word}") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]
