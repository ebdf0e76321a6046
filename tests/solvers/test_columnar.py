"""Columnar formats (docs/formats.md): graph tables in Parquet and CSV, compact Parquet decompositions.

Every compact decomposition is checked twice: by the streaming verifier of the Parquet file and by the exact
in-memory verifier of the decomposition it was written from; both must agree.
"""

import json
import re
import sys
import time
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_array

import anondecomp
from anonbandits.cli.main import main
from anondecomp import DemandGraph, InvalidInputError, compact, verify
from anondecomp.columnar import file_kind
from anondecomp.io import graph_from_document, read_graph
from anondecomp.result import Decomposition
from tests.solvers.strategies import batched_graphs, weighted_graphs

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def edge_table(graph: DemandGraph) -> pa.Table:
    u, a = np.nonzero(graph.weights)
    return pa.table({"user": np.array(graph.users)[u], "arm": np.array(graph.arms)[a], "weight": graph.weights[u, a]})


def write_parquet(table: pa.Table, path, metadata: dict | None = None):
    if metadata:
        table = table.replace_schema_metadata({k: json.dumps(v) for k, v in metadata.items()})
    pq.write_table(table, path)
    return path


# -- graph tables -------------------------------------------------------------------------------------


@SETTINGS
@given(st.one_of(batched_graphs(), weighted_graphs()))
def test_an_edge_table_reads_back_the_graph_of_its_json(tmp_path_factory, case):
    graph, _ = case
    d = tmp_path_factory.mktemp("g")
    table = edge_table(graph)
    for path in (write_parquet(table, d / "g.parquet"), d / "g.csv"):
        if path.suffix == ".csv":
            pacsv.write_csv(table, path)
        read, C = read_graph(path)
        assert C is None
        wanted = graph.weights.any(axis=0)  # arms nobody wants have no row in a table
        assert set(read.users) == set(graph.users)
        order_u = [read.users.index(x) for x in graph.users]
        order_a = [read.arms.index(x) for x in np.array(graph.arms)[wanted]]
        np.testing.assert_array_equal(read.weights[np.ix_(order_u, order_a)], graph.weights[:, wanted])
        np.testing.assert_array_equal(read.required[np.ix_(order_u, order_a)], graph.required[:, wanted])


def test_a_batched_table_takes_its_demand_from_the_flag_or_the_metadata(tmp_path):
    table = pa.table({"user": ["a", "a", "a", "b"], "arm": ["x", "y", "z", "y"]})
    path = write_parquet(table, tmp_path / "g.parquet", {"demand": 10, "C": 1})
    graph, C = read_graph(path)
    json_graph, _ = graph_from_document({"demand": 10, "active_sets": {"a": ["x", "y", "z"], "b": ["y"]}})
    assert C == 1 and graph.users == json_graph.users and graph.arms == json_graph.arms
    np.testing.assert_array_equal(graph.required, json_graph.required)
    assert read_graph(path, demand=4)[0].required.tolist() == [[2, 2, 2], [0, 4, 0]]
    pacsv.write_csv(table, tmp_path / "g.csv")
    assert read_graph(tmp_path / "g.csv", demand=10)[0].lower_bound == 12
    with pytest.raises(InvalidInputError, match=r"batched table .* give its total demand with demand=D"):
        read_graph(tmp_path / "g.csv")


def test_integer_ids_are_names_and_read_in_compact_dtypes(tmp_path):
    table = pa.table(
        {
            "user": pa.array([7, 7, 8], pa.int64()),
            "arm": pa.array([1, 2, 2], pa.int8()),
            "weight": pa.array([3, 1, 2], pa.uint8()),
        }
    )
    graph, _ = read_graph(write_parquet(table, tmp_path / "g.parquet"))
    assert graph.users == ("7", "8") and graph.arms == ("1", "2")
    assert graph.required.tolist() == [[3, 1], [0, 2]]


def test_content_decides_when_the_extension_does_not(tmp_path):
    write_parquet(pa.table({"user": ["a"], "arm": ["x"], "weight": [1]}), tmp_path / "g.data")
    (tmp_path / "g.txt").write_text("user,arm,weight\na,x,1\n")
    (tmp_path / "g.graph").write_text('{"demand": 1, "active_sets": {"a": ["x"]}}')
    assert [file_kind(tmp_path / n) for n in ("g.data", "g.txt", "g.graph")] == ["parquet", "csv", "json"]
    assert all(read_graph(tmp_path / n)[0].users == ("a",) for n in ("g.data", "g.txt", "g.graph"))


@pytest.mark.parametrize(
    "table, message",
    [
        ({"user": ["a"], "weight": [1]}, "no column 'arm'"),
        ({"user": [1.5], "arm": ["x"], "weight": [1]}, "column 'user' must hold strings or integers, got double"),
        ({"user": ["a", None], "arm": ["x", "x"], "weight": [1, 1]}, "column 'user' is empty in row 2"),
        ({"user": ["a"], "arm": ["x"], "weight": ["1"]}, "column 'weight' must hold numbers, got string"),
        ({"user": ["a", "b"], "arm": ["x", "x"], "weight": [1.0, float("nan")]}, r"'b' on arm 'x' \(row 2\) is nan"),
        ({"user": ["a"], "arm": ["x"], "weight": [-2]}, "is -2; weights must be positive"),
        ({"user": ["a"], "arm": ["x"], "weight": [-0.5]}, r"is -0\.5; weights must be positive and finite \(or 0: "),
        ({"user": ["a"], "arm": ["x"], "weight": [2**53 + 1]}, r"is 9\.0072e\+15; the limit is 2\^53"),
        (
            {"user": ["a", "b", "a"], "arm": ["x", "x", "x"], "weight": [1, 1, 1]},
            r"row 3 gives user 'a' and arm 'x' again \(duplicate pair\)",
        ),
        ({"user": pa.array([], pa.string()), "arm": pa.array([], pa.string())}, "the table has no rows"),
    ],
)
def test_bad_tables_name_the_problem(tmp_path, table, message):
    path = write_parquet(pa.table(table), tmp_path / "g.parquet")
    with pytest.raises(InvalidInputError, match=message):
        read_graph(path)


def test_demand_is_refused_for_weighted_tables_and_json(tmp_path):
    path = write_parquet(pa.table({"user": ["a"], "arm": ["x"], "weight": [1]}), tmp_path / "g.parquet")
    with pytest.raises(InvalidInputError, match="'weight' column .* demand=D is only for a batched table"):
        read_graph(path, demand=3)
    (tmp_path / "g.json").write_text('{"demand": 1, "active_sets": {"a": ["x"]}}')
    with pytest.raises(InvalidInputError, match="JSON graph, which carries its own demand"):
        read_graph(tmp_path / "g.json", demand=3)


def _traced(call):
    """(result, seconds, peak bytes of numpy and Python allocations) of ``call()``."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        out = call()
        return out, time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("weighted", [True, False])
def test_a_large_sparse_table_is_read_without_a_users_by_arms_matrix(tmp_path, weighted):
    """200,000 users x 100,000 arms in 600,000 rows: dense float64 weights would take 160 GB (dense booleans
    20 GB); the graph is built from the rows, in about a second and some tens of MB."""
    N, K = 200_000, 100_000
    u = np.repeat(np.arange(N), 3)
    a = (u % K + np.tile([0, 33_333, 66_666], N)) % K  # three distinct arms per user; every arm in some row
    w = ((u + a) % 8 + 1) / 2.0  # 0.5 .. 4.0
    w[(u % 1000 == 0) & (np.arange(len(u)) % 3 == 2)] = 0.0  # one user in 1000 pads an arm it wants nothing of
    columns = {"user": u, "arm": a, **({"weight": w} if weighted else {})}
    path = write_parquet(pa.table(columns), tmp_path / "g.parquet", None if weighted else {"demand": 10})
    (graph, _), seconds, peak = _traced(lambda: read_graph(path))
    assert graph.shape == (N, K) and graph.nnz == 3 * N and peak < 300 * 2**20
    assert seconds < 60  # about 1 s alone (tracemalloc adds some); a dense matrix would not fit in memory
    assert graph.users[123_457] == "123457"  # ids are names, users in order of first appearance (here: sorted)
    if not weighted:
        assert graph.lower_bound == 12 and not graph.explicit_support  # ceil(10 / 3) on each of three arms
        assert (graph.edge_required == 4).all() and np.allclose(graph.edge_weights, 10 / 3)
        return
    assert graph.explicit_support and graph.lower_bound == int(np.ceil(w).reshape(N, 3).sum(axis=1).max())
    for i in (0, 1, 1000, 123_457, N - 1):
        e = slice(graph.indptr[i], graph.indptr[i + 1])
        read = {
            graph.arms[j]: (x, r)
            for j, x, r in zip(graph.edge_arms[e], graph.edge_weights[e], graph.edge_required[e], strict=True)
        }
        rows = slice(3 * i, 3 * i + 3)
        assert read == {str(j): (x, int(np.ceil(x))) for j, x in zip(a[rows], w[rows], strict=True)}
    assert graph.user_demand[1000] == int(np.ceil(w[3000:3002]).sum())  # the 0 row adds nothing


# -- compact decompositions ---------------------------------------------------------------------------


def _same_verdict(graph, C, res, path):
    """The streaming check of the file agrees with the exact check of the decomposition itself."""
    streamed = compact.verify_compact(graph, C, path)
    direct = verify(graph, C, res)
    assert streamed.valid == direct.valid
    assert streamed.total_assignments == direct.total_assignments
    assert sorted(streamed.deficits) == sorted(direct.deficits)
    assert (streamed.n_off_support > 0) == (direct.n_off_support > 0)
    return streamed


@pytest.mark.parametrize("method", anondecomp.METHODS)
def test_every_methods_output_round_trips_through_parquet(tmp_path, method):
    graph, _ = read_graph(anondecomp.__file__.replace("solvers/anondecomp/__init__.py", "examples/ads_60x4.json"))
    res = anondecomp.decompose(graph, 3, method, **({"time_limit": 20} if method == "optimal" else {}))
    for out in (tmp_path / "d.parquet", f"{tmp_path}/parts/"):  # (pathlib would drop the slash)
        anondecomp.write_decomposition(res, out)
        report = _same_verdict(graph, 3, res, out)
        assert report.valid and report.n_distinct <= res.n_distinct
        header = compact.read_header(out)
        assert header["format"] == compact.FORMAT and header["method"] == res.method
        assert (header["C"], header["total_assignments"], header["lower_bound"], header["distinct_assignments"]) == (
            3,
            res.total_assignments,
            graph.lower_bound,
            res.n_distinct,
        )
    rows = pq.read_table(tmp_path / "d.parquet")
    assert rows.num_rows < res.n_distinct * graph.n_users  # compact: the point of the form


@SETTINGS
@given(st.one_of(batched_graphs(), weighted_graphs()), st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_streaming_check_agrees_with_the_exact_verifier_on_any_decomposition(tmp_path_factory, case, seed, parts):
    """Random (mostly invalid) assignments with random multiplicities, written as several parts and read in
    small batches: the same verdict and the same deficits as the in-memory verifier."""
    graph, C = case
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    a = rng.integers(0, graph.n_arms, size=(n, graph.n_users))
    sure = rng.random(n) < 0.5  # half of them stay on the support
    pick = np.argmax(graph.support * rng.random(graph.shape), axis=1)
    a[sure] = pick
    res = Decomposition._unchecked(graph, C, "test", a, rng.integers(1, 30, size=n))
    out = f"{tmp_path_factory.mktemp('d')}/parts/"
    compact.write_compact(res, out, {"C": C}, users_per_part=int(rng.integers(1, graph.n_users + 1)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compact, "_BATCH", parts)
        _same_verdict(graph, C, res, out)


def test_the_streaming_check_of_a_sparse_graph_finds_short_pairs_and_off_support_rows(tmp_path):
    """A graph given as a scipy.sparse matrix with a support wider than its demand, checked per edge: a pair
    with demand but no row is short, a row off the support is reported, as by the exact verifier."""
    w = np.zeros((12, 6))
    w[:6, 0] = 3.0  # u0..u5 want a0
    w[6:, 1], w[6:, 2] = 1.5, 1.0  # u6..u11 want a1 (2 samples) and a2
    support = w > 0
    support[0, 3] = True  # u0 may pad a3, which it wants nothing of
    graph = DemandGraph.from_weights(csr_array(w), support=csr_array(support))
    res = anondecomp.decompose(graph, 2)
    assert verify(graph, 2, res).valid
    anondecomp.write_decomposition(res, tmp_path / "good.parquet")
    assert _same_verdict(graph, 2, res, tmp_path / "good.parquet").valid
    bad = res.assignments.copy()
    bad[:, 0] = 3  # u0 never on a0: short with no row on it at all
    bad[0, 6] = 4  # u6 on a4 in the first assignment: off its support
    res = Decomposition._unchecked(graph, 2, "test", bad, res.multiplicities)
    anondecomp.write_decomposition(res, tmp_path / "bad.parquet")
    streamed, direct = _same_verdict(graph, 2, res, tmp_path / "bad.parquet"), verify(graph, 2, res)
    assert not streamed.valid and ("u0", "a0", 3, 0) in streamed.deficits
    assert streamed.n_short == len(direct.deficits) and streamed.n_off_support == direct.n_off_support == 1
    assert [(u, a) for _, u, a in streamed.off_support] == [(u, a) for _, u, a in direct.off_support] == [("u6", "a4")]


def test_the_streaming_check_lists_the_first_1000_short_pairs_and_counts_all(tmp_path):
    graph = DemandGraph.from_batched(8, csr_array(np.ones((1500, 2), dtype=bool)))  # 4 samples of each arm
    res = Decomposition(graph, 2, "test", np.array([[0] * 1500, [1] * 1500]), np.array([3, 4]))
    direct = verify(graph, 2, res)
    anondecomp.write_decomposition(res, tmp_path / "d.parquet")
    streamed = compact.verify_compact(graph, 2, tmp_path / "d.parquet")
    assert not direct.valid and len(direct.deficits) == streamed.n_short == 1500
    assert streamed.deficits == direct.deficits[:1000] == [(f"u{i}", "a0", 4, 3) for i in range(1000)]


def test_the_streaming_check_in_best_effort_drops_the_same_pairs(tmp_path):
    active = np.zeros((8, 3), dtype=bool)
    active[:, 0] = True
    active[:2, 1] = True  # a1: wanted by 2 users, never observable at C = 2
    active[2:, 2] = True
    graph = DemandGraph.from_batched(6, csr_array(active))
    res = anondecomp.decompose(graph, 2, best_effort=True)
    direct = verify(graph, 2, res, best_effort=True)
    anondecomp.write_decomposition(res, tmp_path / "d.parquet")
    streamed = compact.verify_compact(graph, 2, tmp_path / "d.parquet", best_effort=True)
    assert direct.valid and streamed.valid
    assert streamed.uncoverable == direct.uncoverable == [("u0", "a1"), ("u1", "a1")]


def _corrupt(tmp_path, edit):
    graph, _ = graph_from_document(
        {"demand": 6, "active_sets": {f"u{i}": ["p", "q"] if i % 2 else ["p"] for i in range(8)}}
    )
    res = anondecomp.decompose(graph, 2, "greedy")  # u0: p in rounds 0..11; u7: p in 0..5, q in 6..11
    good = tmp_path / "good.parquet"
    anondecomp.write_decomposition(res, good)
    rows = pq.read_table(good).to_pylist()
    rows = edit(rows)
    table = pa.Table.from_pylist(rows, schema=pq.read_schema(good))
    pq.write_table(table, tmp_path / "bad.parquet")
    return graph


@pytest.mark.parametrize(
    "edit, stdout",
    [
        (
            lambda rows: [{**r, "rounds": r["rounds"] - 1} if k == len(rows) - 1 else r for k, r in enumerate(rows)],
            r"user 'u7': not placed in rounds 11\.\.11",
        ),
        (
            lambda rows: [{**r, "arm": "q"} if r["user"] == "u0" else r for r in rows],
            r"round 0: user 'u0' is on arm 'q', which it has no demand for",
        ),
        (
            lambda rows: rows[:1] + [{**rows[0], "first_round": 2}] + rows[1:],
            r"user 'u0': rounds 2\.\.11 placed twice \(overlapping rows\)",
        ),
        (lambda rows: [r for r in rows if r["user"] != "u3"], r"user 'u3' has no rows"),
    ],
)
def test_corrupted_parquet_decompositions_are_invalid(tmp_path, monkeypatch, capsys, edit, stdout):
    _corrupt(tmp_path, edit)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.json").write_text(
        json.dumps({"demand": 6, "active_sets": {f"u{i}": ["p", "q"] if i % 2 else ["p"] for i in range(8)}})
    )
    assert main(["verify", "g.json", "bad.parquet", "--C", "2"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("INVALID: R = ")
    assert any(re.search(stdout, line) for line in out.splitlines()), out
    assert err.count("\n") == 1 and "invalid decomposition" in err


def test_a_short_pair_is_reported_like_json(tmp_path, capsys, monkeypatch):
    graph, _ = graph_from_document({"demand": 4, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    res = Decomposition(graph, 2, "test", np.zeros((1, 3), dtype=np.int8), np.array([3]))
    anondecomp.write_decomposition(res, tmp_path / "d.parquet")
    anondecomp.write_decomposition(res, tmp_path / "d.json")
    (tmp_path / "g.json").write_text(json.dumps({"demand": 4, "active_sets": {f"u{i}": ["p"] for i in range(3)}}))
    monkeypatch.chdir(tmp_path)
    outputs = []
    for name in ("d.json", "d.parquet"):
        assert main(["verify", "g.json", name, "--C", "2"]) == 1
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1]
    assert "user 'u0', arm 'p': 3 informative samples, needs 4" in outputs[0].out


def test_progress_is_reported_for_both_passes(tmp_path):
    graph, _ = graph_from_document({"demand": 5, "active_sets": {f"u{i}": ["p"] for i in range(4)}})
    res = anondecomp.decompose(graph, 1, "greedy")
    anondecomp.write_decomposition(res, tmp_path / "d.parquet")
    seen = []
    assert compact.verify_compact(graph, 1, tmp_path / "d.parquet", progress=lambda d, t: seen.append((d, t))).valid
    assert seen == [(4, 8), (8, 8)]


def test_interrupted_parquet_writes_leave_nothing(tmp_path, monkeypatch):
    graph, _ = graph_from_document({"demand": 3, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    res = anondecomp.decompose(graph, 1, "greedy")
    (tmp_path / "empty").mkdir()

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(compact, "schedule_rows", boom)
    for out in ("d.parquet", "parts/", "empty/"):
        with pytest.raises(KeyboardInterrupt):
            anondecomp.write_decomposition(res, f"{tmp_path}/{out}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"] and not any((tmp_path / "empty").iterdir())


def test_rows_of_a_user_must_be_consecutive(tmp_path):
    graph, _ = graph_from_document({"demand": 2, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    rows = [("u0", 0, 1), ("u1", 0, 2), ("u0", 1, 1), ("u2", 0, 2)]
    pq.write_table(
        pa.table(
            {
                "user": [r[0] for r in rows],
                "arm": ["p"] * 4,
                "first_round": [r[1] for r in rows],
                "rounds": [r[2] for r in rows],
            }
        ),
        tmp_path / "d.parquet",
    )
    with pytest.raises(InvalidInputError, match="rows of user 'u0' are not consecutive"):
        compact.verify_compact(graph, 2, tmp_path / "d.parquet")


def test_part_files_are_read_in_natural_order(tmp_path):
    """Dask numbers parts part.0, part.9, part.10: a user's rows may go on from part.9 into part.10 (in text
    order part.10 would come first and split them)."""
    graph, _ = graph_from_document({"demand": 2, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    (tmp_path / "d").mkdir()
    parts = {0: ("u0", 0, 2), 9: ("u1", 0, 1), 10: ("u1", 1, 1), 11: ("u2", 0, 2)}
    for k, (user, first, rounds) in parts.items():
        pq.write_table(
            pa.table({"user": [user], "arm": ["p"], "first_round": [first], "rounds": [rounds]}),
            tmp_path / "d" / f"part.{k}.parquet",
        )
    assert [p.name for p in anondecomp.columnar.parquet_files(tmp_path / "d")] == [f"part.{k}.parquet" for k in parts]
    assert compact.verify_compact(graph, 2, tmp_path / "d").valid


@pytest.mark.parametrize("batch", [1, 2, 1 << 20])
def test_users_in_any_order_and_batches_of_any_size(tmp_path, batch, monkeypatch):
    """Rows grouped by user in an order of their own (not the graph's) are read by name, batch after batch."""
    graph, _ = graph_from_document({"demand": 4, "active_sets": {f"u{i}": ["a", "b"] for i in range(6)}})
    order = ["u3", "u0", "u5", "u1", "u4", "u2"]
    table = pa.table(
        {
            "user": [u for u in order for _ in "ab"],
            "arm": ["a", "b"] * 6,
            "first_round": [0, 2] * 6,
            "rounds": [2, 2] * 6,
        }
    )
    pq.write_table(table, tmp_path / "d.parquet", row_group_size=5)
    monkeypatch.setattr(compact, "_BATCH", batch)
    report = compact.verify_compact(graph, 2, tmp_path / "d.parquet")
    assert report.valid and report.total_assignments == 4 and report.n_distinct == 2


def test_verify_shows_a_progress_bar_only_on_a_terminal(tmp_path, monkeypatch, capsys):
    import io

    from anonbandits.cli import progress as progress_module
    from anonbandits.cli import verify as verify_cli

    graph, _ = graph_from_document({"demand": 5, "active_sets": {f"u{i}": ["p"] for i in range(4)}})
    anondecomp.write_decomposition(anondecomp.decompose(graph, 1, "greedy"), tmp_path / "d.parquet")
    (tmp_path / "g.json").write_text(json.dumps({"demand": 5, "active_sets": {f"u{i}": ["p"] for i in range(4)}}))
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "g.json", "d.parquet", "--C", "1"]) == 0
    assert capsys.readouterr().err == ""  # not a terminal and quicker than 10 s: nothing on stderr

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    monkeypatch.setattr(progress_module, "TERMINAL_DELAY", 0.0)
    monkeypatch.setattr(progress_module, "TERMINAL_TICK", 0.01)
    with verify_cli.phase("verifying") as show:
        assert show.bar(now=show.start) == "verifying | 0 s"  # nothing counted yet: a spinner
        show(4, 8)
        assert show.bar(now=show.start + 3) == "verifying [" + "#" * 15 + "." * 15 + "] 4/8 rows 3 s"
        deadline = time.monotonic() + 10
        while "4/8 rows" not in sys.stderr.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    drawn = sys.stderr.getvalue()
    assert "\rverifying [" + "#" * 15 + "." * 15 + "] 4/8 rows" in drawn and "\n" not in drawn
    assert re.search(r"\r {40,}\r$", drawn), drawn  # the line is erased when the phase ends


def test_progress_off_a_terminal_is_a_line_every_interval(monkeypatch):
    import io

    from anonbandits.cli import progress as progress_module

    monkeypatch.setattr(progress_module, "INTERVAL", 0.2)
    log = io.StringIO()
    with progress_module.Progress("solving", command="anonbandits decompose", stream=log) as shown:
        time.sleep(0.5)
        shown.update(3, 10)
        time.sleep(0.2)
    *lines, last = log.getvalue().splitlines()
    assert len(lines) >= 3 and all(
        re.fullmatch(r"anonbandits decompose: solving: [01] s elapsed", line) for line in lines[:2]
    ), lines
    assert lines[-1].endswith(" s elapsed, 3/10 rows") and re.fullmatch(r".*: solving: done in [01] s", last), last
    log = io.StringIO()
    with pytest.raises(KeyboardInterrupt), progress_module.Progress("solving", stream=log):
        time.sleep(0.3)
        raise KeyboardInterrupt  # Ctrl-C: the display stops at once, with no "done" line
    interrupted = log.getvalue()
    assert interrupted.startswith("anonbandits: solving: 0 s elapsed\n") and "done" not in interrupted
    with progress_module.Progress("reading", stream=log):  # a phase shorter than the interval prints nothing
        pass
    assert log.getvalue() == interrupted
