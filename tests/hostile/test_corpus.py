"""The hostile-input corpus: every case in ``cases/*.toml`` runs the command line on crafted files.

A case is a ``[[case]]`` table:

* ``id``: unique name; ``args``: the argument list after ``anonbandits`` (paths are relative to a fresh
  temporary directory, which is the working directory of the run);
* ``files``: ``{name = content}`` written before the run; a content starting with ``@`` names a fixture of
  :data:`FIXTURES` (``"@example"``, ``"@deep_json"``, ...); ``dirs``: directories to create;
* ``exit``: the expected exit code; ``stderr``: a regular expression the one stderr line must match
  (searched, case-insensitive); with ``exit = 0`` stderr may be empty and ``stdout`` (a regex) is checked;
* ``creates``: files the run may add (every other file in the directory must be byte-for-byte unchanged
  and no other file may appear, hidden temporary files included);
* ``subprocess = true``: run the installed command in a child process instead of in-process (for signals
  and broken pipes); ``pipe_to_head = true``: its stdout is closed after the first line;
* ``specials``: ``{name = kind}`` files that are not regular, made before the run: ``"chardev"`` (a character
  device with /dev/full's numbers; the case is skipped where ``mknod`` is not permitted), ``"fifo"``, or
  ``"link:TARGET"`` (a symbolic link). They are compared by type and device number, never opened (opening
  a FIFO would block); a case with a FIFO runs in a subprocess, whose timeout ends a run that would hang.
  An absolute ``/dev/...`` argument must keep its type and device number too.

A *library* case calls the Python API instead (``call`` instead of ``args``; see :func:`_run_library_case`):
``call`` is a Python expression, ``raises`` the expected exception class and ``message`` a regular expression
for its message, or ``returns`` a regular expression for the result's repr.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from anonbandits.cli.main import main

CASES_DIR = Path(__file__).parent / "cases"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ads_60x4.json"


def _deep_json(depth: int = 100_000) -> bytes:
    return ("[" * depth + "]" * depth).encode()


def _deep_object(depth: int = 100_000) -> bytes:
    return ('{"a": ' * depth + "0" + "}" * depth).encode()


def _one_arm_decomposition(multiplicity: str) -> bytes:
    """A decomposition of the three-user, one-arm graph ``{"u0", "u1", "u2"} -> "a"`` (any multiplicity text)."""
    return (
        '{"assignments": [{"multiplicity": ' + multiplicity + ', "arms": {"u0": "a", "u1": "a", "u2": "a"}}]}'
    ).encode()


def _parquet(columns: dict, metadata: dict | None = None, types: dict | None = None) -> bytes:
    """A Parquet file of ``columns`` (``types`` forces Arrow types; ``metadata`` values are stored as JSON)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = types or {}
    table = pa.table({k: pa.array(v, types.get(k)) for k, v in columns.items()})
    if metadata:
        table = table.replace_schema_metadata({k: json.dumps(v) for k, v in metadata.items()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def _dictionary_strings():
    import pyarrow as pa

    return pa.dictionary(pa.int32(), pa.string())


SMALL_USERS = [f"u{i}" for i in range(8)]  # the users of "small_batched": each wants arms a and b, demand 4


def _edges(weights: list, users=SMALL_USERS, arms=("a", "b"), **kw) -> bytes:
    """An edge table giving every user of ``users`` each arm of ``arms`` with the next weight of ``weights``."""
    rows = [(u, a) for u in users for a in arms]
    w = (weights * len(rows))[: len(rows)]
    return _parquet({"user": [u for u, _ in rows], "arm": [a for _, a in rows], "weight": w}, **kw)


def _schedule(rows: list[tuple], metadata: dict | None = None, types: dict | None = None) -> bytes:
    """A compact decomposition: (user, arm, first_round, rounds) rows, C = 1 unless ``metadata`` says."""
    return _parquet(
        {name: [r[k] for r in rows] for k, name in enumerate(("user", "arm", "first_round", "rounds"))},
        {"C": 1} if metadata is None else metadata,
        {"first_round": "int64", "rounds": "int64", **(types or {})},
    )


def _small_schedule(b_rounds: int = 2, start: int = 0, users=SMALL_USERS, a_rounds: int = 2, **kw) -> bytes:
    """Every user of "small_batched" on arm a for ``a_rounds`` rounds from ``start``, then on b for ``b_rounds``."""
    return _schedule(
        [row for u in users for row in ((u, "a", start, a_rounds), (u, "b", start + a_rounds, b_rounds))], **kw
    )


def _log(time=None, types: dict | None = None) -> bytes:
    """An interaction log of the small_batched users: each on items a and b in each of two hours, timestamps in
    ms (UTC) unless ``time`` maps the seconds to other values (``types`` forces Arrow types)."""
    import pyarrow as pa

    rows = [(u, item, 3600 * h + 60 * k) for h in range(2) for k, u in enumerate(SMALL_USERS) for item in "ab"]
    seconds = [t for _, _, t in rows]
    stamps = pa.array([1_700_000_000_000 + 1000 * t for t in seconds], pa.timestamp("ms", tz="UTC"))
    columns = {"user": [u for u, _, _ in rows], "item": [i for _, i, _ in rows]}
    return _parquet({**columns, "timestamp": stamps if time is None else time(seconds)}, types=types)


def _ring(n: int) -> bytes:
    """An edge table of ``n`` users and ``n`` items, user i wanting items i and i+1 (mod n): every item has two
    users. Dense it would hold n^2 cells (2.5 x 10^9 at n = 50,000: 42 GB of weights, demands and support)."""
    users = np.repeat(np.arange(n), 2)
    items = (users + np.tile([0, 1], n)) % n
    return _parquet(
        {"user": users, "arm": items, "weight": np.ones(2 * n)}, {"C": 1}, {"user": "int64", "arm": "int64"}
    )


def _ring_schedule(n: int) -> bytes:
    """The decomposition of :func:`_ring`'s graph by the library, as a compact Parquet schedule."""
    import tempfile

    import anondecomp

    with tempfile.TemporaryDirectory() as tmp:
        graph_path, out = Path(tmp) / "g.parquet", Path(tmp) / "d.parquet"
        graph_path.write_bytes(_ring(n))
        graph, C = anondecomp.read_graph(graph_path)
        anondecomp.write_decomposition(anondecomp.decompose(graph, C), out)
        return out.read_bytes()


WIDE = {"demand": 4, "active_sets": {f"u{i}": ["a", "b", "c", "d"] for i in range(12)}}  # 12 users, 4 arms


def _plan(graph_doc: dict, C: int, header: dict | None = None, **options) -> bytes:
    """A JSON decomposition of the graph ``graph_doc`` by the library (``options`` to decompose: absence, ...),
    with ``header`` fields written over its own (a tampered file)."""
    import tempfile

    import anondecomp
    from anondecomp.io import graph_from_document

    graph, _ = graph_from_document(graph_doc)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "plan.json"
        anondecomp.write_decomposition(anondecomp.decompose(graph, C, **options), out)
        doc = json.loads(out.read_text())
    return json.dumps({**doc, **(header or {})}).encode()


FIXTURES = {
    "example": lambda: EXAMPLE.read_bytes(),
    # -- absent users (tests/hostile/cases/absence.toml) ---------------------------------------------
    "wide_batched": lambda: json.dumps(WIDE).encode(),
    "wide_plan": lambda: _plan(WIDE, 2),
    "wide_plan_robust": lambda: _plan(WIDE, 2, absence=0.2, confidence=0.9),
    # today's plan, groups of C+1 = 3 users, read as if made for absence 0.2: its groups miss Q = 0.9
    "wide_plan_claims_absence": lambda: _plan(WIDE, 2, {"absence": 0.2, "confidence": 0.9}),
    "wide_plan_absence_1_5": lambda: _plan(WIDE, 2, {"absence": 1.5, "confidence": 0.9}),
    "wide_plan_absence_text": lambda: _plan(WIDE, 2, {"absence": "often", "confidence": 0.9}),
    "wide_plan_confidence_1": lambda: _plan(WIDE, 2, {"absence": 0.2, "confidence": 1}),
    "wide_plan_absence_unknown_user": lambda: _plan(
        WIDE, 2, {"absence": {**{f"u{i}": 0.1 for i in range(12)}, "zz": 0.1}, "confidence": 0.9}
    ),
    "wide_plan_absence_missing_user": lambda: _plan(
        WIDE, 2, {"absence": {f"u{i}": 0.1 for i in range(11)}, "confidence": 0.9}
    ),
    "wide_plan_no_C": lambda: json.dumps({k: v for k, v in json.loads(_plan(WIDE, 2)).items() if k != "C"}).encode(),
    "wide_schedule": lambda: _compact_plan(WIDE, 2),
    "ring_50000": lambda: _ring(50_000),
    "ring_50000_schedule": lambda: _ring_schedule(50_000),
    "deep_json": _deep_json,
    "deep_toml": lambda: b"runs = " + _deep_json(),
    "binary": lambda: bytes(range(256)) * 4,
    "latin1": lambda: "demand = 1 # caf\xe9\n".encode("latin-1"),
    "empty": lambda: b"",
    "deep_object": _deep_object,
    "digits_5000": lambda: _one_arm_decomposition("9" * 5000),
    "digits_400": lambda: _one_arm_decomposition("9" * 400),
    "demand_5000_digits": lambda: ('{"demand": ' + "9" * 5000 + ', "active_sets": {"u0": ["a"]}}').encode(),
    # 5000 users: an invalid decomposition of it lists more than a pipe buffer holds (| head breaks the pipe)
    "many_users": lambda: json.dumps(
        {"demand": 2, "active_sets": {f"user{i:05d}": ["a"] for i in range(5000)}}
    ).encode(),
    "small_batched": lambda: json.dumps({"demand": 4, "active_sets": {f"u{i}": ["a", "b"] for i in range(8)}}).encode(),
    # -- columnar graphs (tests/hostile/cases/columnar.toml): the small_batched graph as tables ----------
    "pq_edges": lambda: _edges([2]),
    "pq_edges_int_ids": lambda: _parquet(
        {"user": [1, 1, 2, 2, 3, 3], "arm": [10, 20] * 3, "weight": [3] * 6},
        types={"user": "int32", "arm": "int8", "weight": "uint16"},
    ),
    "pq_batched": lambda: _parquet({"user": [u for u in SMALL_USERS for _ in "ab"], "arm": ["a", "b"] * 8}),
    "pq_batched_int_ids": lambda: _parquet({"user": [u for u in range(8) for _ in "ab"], "arm": [0, 1] * 8}),
    "pq_batched_int_thin_arm": lambda: _parquet(
        {"user": [*(u for u in range(8) for _ in "ab"), 8], "arm": [0, 1] * 8 + [7]}
    ),
    "pq_batched_meta": lambda: _parquet(
        {"user": [u for u in SMALL_USERS for _ in "ab"], "arm": ["a", "b"] * 8}, {"demand": 4, "C": 1}
    ),
    "pq_batched_demand_text": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"]}, {"demand": "ten"}),
    "pq_batched_demand_negative": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"]}, {"demand": -4}),
    "pq_batched_demand_huge": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"]}, {"demand": 10**20}),
    "pq_batched_C_text": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"]}, {"demand": 2, "C": "one"}),
    "pq_no_arm": lambda: _parquet({"user": ["u0"], "weight": [1]}),
    "pq_float_users": lambda: _parquet({"user": [0.5, 1.5], "arm": ["a", "a"], "weight": [1, 1]}),
    "pq_null_user": lambda: _parquet({"user": ["u0", None], "arm": ["a", "a"], "weight": [1, 1]}),
    "pq_null_weight": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"], "weight": [1.0, None]}),
    "pq_text_weight": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"], "weight": ["1", "2"]}),
    "pq_bool_weight": lambda: _parquet({"user": ["u0", "u1"], "arm": ["a", "a"], "weight": [True, True]}),
    "pq_nan_weight": lambda: _edges([2.0, float("nan")]),
    "pq_inf_weight": lambda: _edges([float("inf")]),
    "pq_negative_weight": lambda: _edges([2, -1]),
    "pq_zero_weight": lambda: _edges([0.0]),
    "pq_weight_over_limit": lambda: _edges([2**53 + 1], types={"weight": "int64"}),
    "pq_weight_uint64_max": lambda: _edges([2**64 - 1], types={"weight": "uint64"}),
    "pq_weight_1e300": lambda: _edges([1e300]),
    "pq_user_total_over_limit": lambda: _edges([2**53], types={"weight": "int64"}),
    "pq_duplicate_pair": lambda: _parquet({"user": ["u0", "u1", "u2", "u0"], "arm": ["a"] * 4, "weight": [1] * 4}),
    "pq_empty": lambda: _parquet(
        {"user": [], "arm": [], "weight": []}, types={"user": "string", "arm": "string", "weight": "float64"}
    ),
    "pq_empty_user": lambda: _parquet({"user": ["u0", "", "u2"], "arm": ["a"] * 3, "weight": [1] * 3}),
    "pq_empty_arm_dictionary": lambda: _parquet(
        {"user": ["u0", "u1", "u2"], "arm": ["a", "a", ""], "weight": [1] * 3}, types={"arm": _dictionary_strings()}
    ),
    # batched tables with integer user ids: decompose --shards streams them (scale.read_batched)
    "pq_batched_int_empty_arm": lambda: _parquet(
        {"user": [u for u in range(8) for _ in "ab"], "arm": ["a", "b"] * 7 + ["a", ""]}, {"demand": 4}
    ),
    "pq_batched_int_null_arm": lambda: _parquet(
        {"user": [u for u in range(8) for _ in "ab"], "arm": ["a", "b"] * 4 + [None] + ["b"] + ["a", "b"] * 3},
        {"demand": 4},
    ),
    "pq_thin_arm": lambda: _parquet({"user": ["u0", "u1", "u1"], "arm": ["a", "a", "z"], "weight": [1, 1, 1]}),
    "pq_truncated": lambda: _edges([2])[:300],
    # -- compact decompositions of the small_batched graph (C = 1) -----------------------------------
    "pq_schedule": lambda: _small_schedule(),
    "pq_schedule_short": lambda: _small_schedule(b_rounds=1),
    "pq_schedule_overlap": lambda: _schedule(
        [("u0", "a", 0, 3), *[r for u in SMALL_USERS for r in ((u, "a", 0, 2), (u, "b", 2, 2))][1:]]
    ),
    "pq_schedule_gap": lambda: _schedule(
        [("u0", "a", 0, 1), *[r for u in SMALL_USERS for r in ((u, "a", 0, 2), (u, "b", 2, 2))][1:]]
    ),
    "pq_schedule_missing_user": lambda: _small_schedule(users=SMALL_USERS[:-1]),
    "pq_schedule_late_start": lambda: _small_schedule(start=1),
    "pq_schedule_unknown_user": lambda: _small_schedule(users=["nobody", *SMALL_USERS]),
    "pq_schedule_unknown_arm": lambda: _schedule([("u0", "zz", 0, 4)]),
    "pq_schedule_zero_rounds": lambda: _schedule([("u0", "a", 0, 0)]),
    "pq_schedule_negative_first": lambda: _schedule([("u0", "a", -1, 2)]),
    "pq_schedule_end_overflows": lambda: _schedule([("u0", "a", 2**62, 2**62)]),
    "pq_schedule_uint64_rounds": lambda: _schedule([("u0", "a", 0, 2**63)], types={"rounds": "uint64"}),
    "pq_schedule_float_rounds": lambda: _schedule([("u0", "a", 0, 2.0)], types={"rounds": "float64"}),
    "pq_schedule_null_rounds": lambda: _schedule([("u0", "a", 0, None)]),
    "pq_schedule_no_rounds": lambda: _parquet({"user": ["u0"], "arm": ["a"], "first_round": [0]}, {"C": 1}),
    "pq_schedule_not_consecutive": lambda: _schedule([("u0", "a", 0, 2), ("u1", "a", 0, 4), ("u0", "b", 2, 2)]),
    "pq_schedule_C2": lambda: _small_schedule(metadata={"C": 2}),
    "pq_schedule_C_text": lambda: _small_schedule(metadata={"C": "one"}),
    "pq_schedule_huge_R": lambda: _small_schedule(a_rounds=2**61, b_rounds=2**61),
    # the "thin" graph (u0..u3 want a, u3 also z; C = 2: (u3, z) is not coverable), as decompose --best-effort
    # writes it, and one short of a coverable pair (u3 spends 3 of its 4 rounds on z, needs 2 on a)
    "pq_thin_schedule": lambda: _schedule([(u, "a", 0, 4) for u in ("u0", "u1", "u2", "u3")], {"C": 2}),
    "pq_thin_schedule_short": lambda: _schedule(
        [("u0", "a", 0, 4), ("u1", "a", 0, 4), ("u2", "a", 0, 4), ("u3", "z", 0, 3), ("u3", "a", 3, 1)], {"C": 2}
    ),
    "pq_schedule_first_half": lambda: _small_schedule(users=SMALL_USERS[:4]),
    "pq_schedule_second_half": lambda: _small_schedule(users=SMALL_USERS[4:]),
    "pq_schedule_second_half_C2": lambda: _small_schedule(users=SMALL_USERS[4:], metadata={"C": 2}),
    # -- interaction logs (tests/hostile/cases/stream.toml): the small_batched users on a and b, two hours ------
    "pq_log": lambda: _log(),
    "pq_log_text_time": lambda: _log(time=lambda t: [f"hour {x // 3600}" for x in t]),
    "pq_log_date": lambda: _log(types={"timestamp": "date32"}, time=lambda t: [x // 86400 for x in t]),
    "pq_log_null_time": lambda: _log(time=lambda t: [None, *t[1:]], types={"timestamp": "int64"}),
    "pq_log_dictionary_items": lambda: _log(types={"item": _dictionary_strings()}),
}


def _compact_plan(graph_doc: dict, C: int) -> bytes:
    """The decomposition of ``graph_doc`` by the library as a compact Parquet schedule."""
    import tempfile

    import anondecomp
    from anondecomp.io import graph_from_document

    graph, _ = graph_from_document(graph_doc)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d.parquet"
        anondecomp.write_decomposition(anondecomp.decompose(graph, C), out)
        return out.read_bytes()


def _load_cases() -> list[dict]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.toml")):
        for case in tomllib.loads(path.read_text())["case"]:
            case["source"] = path.name
            cases.append(case)
    ids = [c["id"] for c in cases]
    dupes = {i for i in ids if ids.count(i) > 1}
    assert not dupes, f"duplicate case ids: {sorted(dupes)}"
    return cases


CASES = _load_cases()


def _content(value: str) -> bytes:
    if value.startswith("@"):
        return FIXTURES[value[1:]]()
    return value.encode()


def _entry(path: Path) -> bytes | tuple:
    """A regular file's bytes; for anything else (directory, link, device, FIFO) its type and identity, read
    without opening it."""
    st = path.lstat()
    if stat.S_ISREG(st.st_mode):
        return path.read_bytes()
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    return (stat.S_IFMT(st.st_mode), st.st_rdev)


def _snapshot(root: Path) -> dict[str, bytes | tuple]:
    return {str(p.relative_to(root)): _entry(p) for p in sorted(root.rglob("*"))}


def _make_special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind.startswith("link:"):
        os.symlink(kind[len("link:") :], path)
    elif kind == "chardev":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers
        except PermissionError:
            pytest.skip("mknod is not permitted here (needs root)")
    else:
        raise ValueError(f"unknown special file kind {kind!r}")


def _devices(args: list[str]) -> dict[str, tuple]:
    """Type and device number of every absolute /dev path in ``args`` (a broken check would replace one)."""
    return {a: _entry(Path(a)) for a in args if a.startswith("/dev/") and os.path.lexists(a)}


def _run_inprocess(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse's own exits (--help, --version)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return code, out.getvalue(), err.getvalue()


def _run_subprocess(args: list[str], cwd: Path, pipe_to_head: bool) -> tuple[int, str, str]:
    cmd = [sys.executable, "-m", "anonbandits.cli.main", *args]
    if not pipe_to_head:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    return p.wait(timeout=120), first, err


def test_corpus_is_large_enough():
    assert len(CASES) >= 200, f"the hostile-input corpus has only {len(CASES)} cases"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case, tmp_path, monkeypatch):
    if "call" in case:
        _run_library_case(case, tmp_path, monkeypatch)
        return
    for d in case.get("dirs", []):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    for name, value in case.get("files", {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(_content(value))
    for name, kind in case.get("specials", {}).items():
        _make_special(tmp_path / name, kind)
    assert "fifo" not in case.get("specials", {}).values() or case.get("subprocess"), (
        "a case with a FIFO runs in a subprocess (its timeout ends a run that would block)"
    )
    before = _snapshot(tmp_path)
    devices = _devices(case["args"])
    monkeypatch.chdir(tmp_path)
    if case.get("subprocess"):
        code, out, err = _run_subprocess(case["args"], tmp_path, case.get("pipe_to_head", False))
    else:
        code, out, err = _run_inprocess(case["args"])
    assert "Traceback" not in err, err
    assert code == case["exit"], f"exit {code}, stderr: {err!r}"
    lines = [line for line in err.splitlines() if line.strip()]
    if case["exit"] != 0 or "stderr" in case:
        assert len(lines) == 1, f"expected one stderr line, got {lines!r}"
        assert re.search(case["stderr"], lines[0], re.IGNORECASE), lines[0]
    if "stdout" in case:
        assert re.search(case["stdout"], out, re.IGNORECASE | re.MULTILINE), out
    after = _snapshot(tmp_path)
    created = set(after) - set(before)
    allowed = set(case.get("creates", []))
    assert created == allowed, f"new files {sorted(created)}, expected {sorted(allowed)}"
    changed = [name for name, data in before.items() if after.get(name, b"<deleted>") != data]
    assert not changed, f"files changed or deleted: {changed}"
    assert _devices(case["args"]) == devices, "a device node was replaced"


def _library_namespace(tmp_path: Path) -> dict:
    """What a library case's ``call`` may name: numpy, the packages, and a small graph ``G`` (8 users wanting
    arms a and b, demand 4) with its decomposition ``R`` at C = 1."""
    import anondecomp

    graph = anondecomp.DemandGraph.from_batched(4, np.ones((8, 2), bool), arms=["a", "b"])
    return {"np": np, "anondecomp": anondecomp, "G": graph, "R": anondecomp.decompose(graph, 1), "tmp": tmp_path}


def _run_library_case(case: dict, tmp_path: Path, monkeypatch) -> None:
    """A library case: ``call`` is a Python expression (names: :func:`_library_namespace`), run after ``files``
    (and ``specials``) are written in a fresh working directory. ``raises`` names the exception class (looked
    up in ``anondecomp``, then ``anonbandits``) and ``message`` a regular expression its one-line message
    must match (searched, case-insensitive); without ``raises``, ``returns`` is a regular expression the
    result's repr must match. No exception outside the expected family may escape, and no file may change."""
    import importlib

    for name, value in case.get("files", {}).items():
        (tmp_path / name).write_bytes(_content(value))
    for name, kind in case.get("specials", {}).items():
        _make_special(tmp_path / name, kind)
    monkeypatch.chdir(tmp_path)
    before = _snapshot(tmp_path)
    namespace = _library_namespace(tmp_path)
    if "raises" in case:
        kind = next(
            getattr(importlib.import_module(m), case["raises"])
            for m in ("anondecomp", "anonbandits")
            if hasattr(importlib.import_module(m), case["raises"])
        )
        with pytest.raises(kind) as caught:
            eval(case["call"], namespace)  # noqa: S307 - the corpus is the project's own test data
        message = str(caught.value)
        assert "\n" not in message.strip(), message
        assert re.search(case["message"], message, re.IGNORECASE), message
    else:
        out = eval(case["call"], namespace)  # noqa: S307
        assert re.search(case["returns"], repr(out), re.IGNORECASE), repr(out)
    assert _snapshot(tmp_path) == before, "a library call changed files"


def test_harness_detects_a_replaced_device_node(tmp_path):
    """A device node replaced by a regular file (an atomic rename over it) changes the snapshot."""
    try:
        _make_special(tmp_path / "dev", "chardev")
    except pytest.skip.Exception:
        _make_special(tmp_path / "dev", "fifo")
    before = _snapshot(tmp_path)
    (tmp_path / "new").write_bytes(b"")
    os.replace(tmp_path / "new", tmp_path / "dev")
    assert _snapshot(tmp_path) != before


def test_harness_detects_a_changed_file(tmp_path):
    """The unchanged-files check can fail: a case that overwrites its input is caught."""
    (tmp_path / "g.json").write_bytes(FIXTURES["example"]())
    before = _snapshot(tmp_path)
    (tmp_path / "g.json").write_text("{}")
    assert _snapshot(tmp_path) != before
    os.remove(tmp_path / "g.json")
