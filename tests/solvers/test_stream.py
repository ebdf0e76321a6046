"""Logs that stream (:mod:`anondecomp.stream`, :mod:`anondecomp.warm`): windows, thin items, summed weights, the
warm start (every window through the exact verifier), the fallback's bound on R, and OUTDIR."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import anondecomp
from anondecomp import InvalidInputError
from anondecomp.stream import (
    SUMMARY_COLUMNS,
    decompose_window,
    parse_duration,
    read_log,
    stream_windows,
    window_bounds,
    window_graph,
    write_stream,
)
from anondecomp.warm import Seats, _trim, merge_rounds, plan_seats, warm_decomposition


def write_csv(path: Path, rows: list[tuple], header: str = "user,item,timestamp") -> Path:
    path.write_text(header + "\n" + "".join(",".join(str(x) for x in row) + "\n" for row in rows))
    return path


def churn_log(path: Path, n_users: int, n_items: int, windows: int, seed: int, churn: float = 0.1) -> Path:
    """A log of ``windows`` hours: each hour, the active users (``churn`` of them replaced by new ones every hour)
    interact once with each of their items (2 to 5 of ``n_items``, popular ones likelier)."""
    rng = np.random.default_rng(seed)
    pool = n_users + int(churn * n_users) * windows
    p = 1.0 / np.arange(1, n_items + 1) ** 0.6
    items = [rng.choice(n_items, size=rng.integers(2, 6), replace=False, p=p / p.sum()) for _ in range(pool)]
    active, fresh, rows = np.arange(n_users), n_users, []
    for w in range(windows):
        if w:
            out = rng.choice(n_users, int(churn * n_users), replace=False)
            active = active.copy()
            active[out] = np.arange(fresh, fresh + len(out))
            fresh += len(out)
        for u in active:
            rows += [(f"u{u}", f"i{j}", w * 3600 + float(rng.uniform(0, 3600))) for j in items[u]]
    return write_csv(path, rows)


def verified(window, C: int) -> bool:
    d = window.decomposition
    return anondecomp.verify(d.graph, C, d).valid


# -- durations and windows ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, seconds",
    [("90s", 90), ("30min", 1800), ("30m", 1800), ("1h", 3600), ("1d", 86400), ("1.5h", 5400), ("3600", 3600)],
)
def test_durations_are_read_in_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1y", "h", "-1h", "0", "0s", "1h30m", "inf", "nan", "1e400"])
def test_a_bad_duration_is_one_line_naming_it(text):
    with pytest.raises(InvalidInputError, match="^window must be") as err:
        parse_duration(text)
    assert "\n" not in str(err.value)


def test_sliding_windows_are_cut_by_hand(tmp_path):
    """Times 0, 10, ..., 90; window 30 s, step 10 s: window k holds the rows of [10k, 10k + 30), and the last
    window is the first to reach past 90."""
    rows = [(f"u{t // 10}", "a", t) for t in range(0, 100, 10)]
    log = read_log(write_csv(tmp_path / "log.csv", rows))
    starts, ends = window_bounds(log.times, 30.0, 10.0)
    assert starts.tolist() == [0, 10, 20, 30, 40, 50, 60, 70] and (ends - starts == 30).all()
    windows = list(stream_windows(log, C=1, window=30, step=10))
    assert [w.interactions for w in windows] == [3] * 8
    assert [w.decomposition.graph.users for w in windows[:2]] == [("u0", "u1", "u2"), ("u1", "u2", "u3")]
    assert windows[-1].decomposition.graph.users == ("u7", "u8", "u9")
    assert list(window_bounds(log.times, 30.0, 30.0)[0]) == [0, 30, 60, 90]  # 90 is in [90, 120)
    assert all(verified(w, 1) for w in windows)


def test_tumbling_windows_cover_every_row_once(tmp_path):
    rows = [(f"u{k % 7}", f"i{k % 3}", 5 * k) for k in range(60)]  # times 0 .. 295
    windows = list(stream_windows(write_csv(tmp_path / "log.csv", rows), C=1, window="1min"))
    assert [(w.start, w.end) for w in windows] == [(60.0 * k, 60.0 * k + 60) for k in range(5)]
    assert sum(w.interactions for w in windows) == 60


def test_the_log_is_sorted_once_whatever_the_order_of_its_rows(tmp_path):
    rows = [(f"u{k % 5}", f"i{k % 2}", float(k)) for k in range(40)]
    ordered = list(stream_windows(write_csv(tmp_path / "a.csv", rows), C=1, window=10))
    shuffled = [rows[k] for k in np.random.default_rng(0).permutation(len(rows))]
    unsorted = list(stream_windows(write_csv(tmp_path / "b.csv", shuffled), C=1, window=10))
    assert [(w.interactions, w.R, w.users) for w in ordered] == [(w.interactions, w.R, w.users) for w in unsorted]


def test_thin_items_are_dropped_and_counted(tmp_path):
    """C = 2: item a has 3 users (kept), b has 2 (dropped), c has 1 (dropped); u4 wants only c and goes too."""
    rows = [("u1", "a", 0), ("u2", "a", 1), ("u3", "a", 2), ("u1", "b", 3), ("u2", "b", 4), ("u4", "c", 5)]
    (w,) = stream_windows(write_csv(tmp_path / "log.csv", rows), C=2, window=60)
    assert (w.items, w.dropped, w.users) == (1, 2, 3)
    assert w.decomposition.graph.arms == ("a",) and w.decomposition.graph.users == ("u1", "u2", "u3")


def test_weights_are_summed_per_user_and_item(tmp_path):
    rows = [("u1", "a", 0, 2), ("u1", "a", 1, 0.5), ("u2", "a", 2, 1), ("u2", "a", 3, 1), ("u3", "a", 4, 3)]
    log = read_log(write_csv(tmp_path / "log.csv", rows, "user,item,timestamp,weight"))
    graph, users, items, dropped = window_graph(log, 0, log.n_rows, C=1)
    assert graph.edge_weights.tolist() == [2.5, 2.0, 3.0] and graph.edge_required.tolist() == [3, 2, 3]
    assert dropped == 0 and log.user_names[users].tolist() == ["u1", "u2", "u3"]


def test_a_pair_of_weight_zero_pads_without_demand(tmp_path):
    rows = [("u1", "a", 0, 1), ("u2", "a", 1, 1), ("u3", "a", 2, 0)]
    log = read_log(write_csv(tmp_path / "log.csv", rows, "user,item,timestamp,weight"))
    graph, _, _, dropped = window_graph(log, 0, 3, C=1)
    assert graph.n_users == 3 and graph.edge_required.tolist() == [1, 1, 0] and dropped == 0
    rows[1] = ("u2", "a", 1, 0)  # now a is wanted by one user: C = 1 drops it whatever the zero-weight support
    log = read_log(write_csv(tmp_path / "log2.csv", rows, "user,item,timestamp,weight"))
    assert window_graph(log, 0, 3, C=1)[0] is None


def test_an_empty_window_has_r_0_and_the_next_one_is_warm_from_the_last_plan(tmp_path):
    rows = [(f"u{k}", item, t) for t in (0, 7200) for k in range(4) for item in "ab"]
    windows = list(stream_windows(write_csv(tmp_path / "log.csv", rows), C=1, window="1h"))
    assert [(w.plan, w.R, w.interactions) for w in windows] == [("cold", 2, 8), ("empty", 0, 0), ("warm", 2, 8)]
    assert windows[1].decomposition is None and windows[1].bound == 0


def test_timestamps_and_epoch_seconds_give_the_same_windows(tmp_path):
    seconds = np.array([0, 1800, 3599, 3600, 5000, 7300], dtype=np.int64) + 1_700_000_000
    users = ["u0", "u1", "u2", "u0", "u1", "u2"]
    table = {"user": users, "arm": ["a"] * 6}
    pq.write_table(
        pa.table({**table, "timestamp": pa.array(seconds * 1000, pa.timestamp("ms", tz="UTC"))}), tmp_path / "t.parquet"
    )
    pq.write_table(pa.table({**table, "timestamp": seconds.astype(np.float64)}), tmp_path / "s.parquet")
    stamped, plain = read_log(tmp_path / "t.parquet"), read_log(tmp_path / "s.parquet")
    assert stamped.timestamps and not plain.timestamps
    assert np.array_equal(stamped.times, plain.times)
    a = [(w.start, w.interactions, w.R) for w in stream_windows(stamped, C=1, window="1h")]
    assert a == [(w.start, w.interactions, w.R) for w in stream_windows(plain, C=1, window=3600)]
    assert [n for _, n, _ in a] == [3, 2, 1]


# -- the warm start ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_warm_window_is_valid_and_the_fallback_bounds_r(seed, tmp_path):
    """A log with 10 % of its users replaced every window: every window's result passes the exact verifier; with
    the fallback, R is at most the cold decomposition's or (1 + tolerance) times the lower bound."""
    C = 2
    log = read_log(churn_log(tmp_path / "log.csv", 120, 12, windows=5, seed=seed))
    windows = list(stream_windows(log, C, "1h"))
    assert [w.plan for w in windows][0] == "cold" and "warm" in [w.plan for w in windows]
    for w in windows:
        assert verified(w, C)
        cold = anondecomp.decompose(w.decomposition.graph, C).total_assignments
        assert w.R <= max(cold, math.floor(1.02 * w.bound + 1e-9)), (w.index, w.R, cold, w.bound)
    for w in stream_windows(log, C, "1h", fallback=False):  # the warm results themselves, whatever their R
        assert verified(w, C) and w.plan in ("cold", "warm")


def test_a_window_identical_to_the_last_keeps_its_plan_whole(tmp_path):
    """The same interactions twice: the second window finds every group of the first and adds nothing."""
    rng = np.random.default_rng(3)
    pairs = [(f"u{u}", f"i{j}") for u in range(40) for j in rng.choice(6, 3, replace=False)]
    rows = [(u, j, t + k) for t in (0, 3600) for k, (u, j) in enumerate(pairs)]
    first, second = stream_windows(write_csv(tmp_path / "log.csv", rows), C=3, window="1h", fallback=False)
    assert second.plan == "warm" and verified(second, 3)
    info = second.decomposition.info
    assert info["added_rounds"] == 0 and info["joined"] == 0 and info["repaired"] == 0
    assert second.R == first.R


def test_the_warm_start_repairs_a_group_a_user_left():
    """Four users on arm a (C = 2: groups of 3) in one round; u0 leaves and u4 arrives: the group is repaired by
    the newcomer, which gets its sample in the kept round; nothing is added."""
    prev = anondecomp.DemandGraph.from_weights(np.ones((4, 1)), users=["u0", "u1", "u2", "u3"], arms=["a"])
    plan = anondecomp.decompose(prev, 2)
    seats = plan_seats(plan, np.arange(4), np.array([0]))
    new = anondecomp.DemandGraph.from_weights(np.ones((4, 1)), users=["u1", "u2", "u3", "u4"], arms=["a"])
    rounds, _, info = warm_decomposition(new, 2, seats, np.array([1, 2, 3, 4]), np.array([0]))
    assert rounds.tolist() == [[0, 0, 0, 0]] and info["kept_places"] == 3 and info["joined"] == 1


def test_trim_keeps_what_demand_needs_and_pads_groups_to_c_plus_1():
    """Two rounds on arm 0, C = 1 (groups of 2); edges 0, 1, 2 need 1, 2 and 0 samples and sit in both rounds.
    Edge 0 needs only its first round and edge 1 both. Round 0 holds two needed places already, so edge 2's
    padding place there goes; round 1 holds one (edge 1's), so one of edges 0 and 2 stays there to pad it."""
    from anondecomp.warm import _Places

    pairs = np.array([0, 0, 1, 1, 2, 2])
    places = _Places(t=np.array([0, 1, 0, 1, 0, 1]), i=pairs, a=np.zeros(6, int), e=pairs)
    keep = _trim(places, need=np.array([1, 2, 0]), K=1, C=1)
    assert keep[[0, 2, 3]].all() and not keep[4] and keep[[1, 5]].sum() == 1


def test_merge_rounds_merges_identical_rounds_in_order_of_first_appearance():
    rounds = np.array([[1, 0], [0, 1], [1, 0], [1, 0], [0, 0]])
    rows, mult = merge_rounds(rounds)
    assert rows.tolist() == [[1, 0], [0, 1], [0, 0]] and mult.tolist() == [3, 1, 1]


def test_decompose_window_without_a_plan_is_the_default_decompose(tmp_path):
    log = read_log(churn_log(tmp_path / "log.csv", 60, 8, windows=1, seed=4))
    graph, users, items, _ = window_graph(log, 0, log.n_rows, 2)
    result, seats = decompose_window(graph, 2, None, users, items)
    cold = anondecomp.decompose(graph, 2)
    assert result.info["stream"] == "cold" and result.total_assignments == cold.total_assignments
    assert np.array_equal(result.assignments, cold.assignments) and seats is not None


def test_cold_decomposes_every_window_by_the_default_decompose(tmp_path):
    log = read_log(churn_log(tmp_path / "log.csv", 60, 8, windows=3, seed=5))
    for w in stream_windows(log, 2, "1h", cold=True):
        assert w.plan == "cold" and w.R == anondecomp.decompose(w.decomposition.graph, 2).total_assignments


# -- OUTDIR --------------------------------------------------------------------------------------------------------


def test_outdir_holds_a_schedule_and_a_graph_per_window_and_the_summary(tmp_path):
    path = churn_log(tmp_path / "log.csv", 60, 8, windows=3, seed=6)
    rows = write_stream(path, tmp_path / "out", 2, "1h")
    out = tmp_path / "out"
    with open(out / "summary.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert tuple(table[0]) == SUMMARY_COLUMNS and len(table) == len(rows) == 3
    assert [r["plan"] for r in table][0] == "cold"
    for r in table:
        graph, C = anondecomp.read_graph(out / "graphs" / r["schedule"])
        assert C == 2 and graph.n_users == int(r["users"]) and graph.n_arms == int(r["items"])
        assert graph.lower_bound == int(r["bound"])
        report = anondecomp.compact.verify_compact(graph, C, out / r["schedule"])
        assert report.valid and report.total_assignments == int(r["R"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_an_empty_window_has_no_schedule_file(tmp_path):
    rows = [(f"u{k}", "a", t) for t in (0, 7200) for k in range(3)]
    summary = write_stream(write_csv(tmp_path / "log.csv", rows), tmp_path / "out", 1, "1h")
    assert [(r["window"], r["R"], r["plan"], r["schedule"]) for r in summary] == [
        (0, 1, "cold", "window-00000.parquet"),
        (1, 0, "empty", ""),
        (2, 1, "warm", "window-00002.parquet"),
    ]
    assert sorted(p.name for p in (tmp_path / "out").glob("*.parquet")) == [
        "window-00000.parquet",
        "window-00002.parquet",
    ]


def test_a_failure_midway_leaves_no_outdir_and_no_temporary_files(tmp_path, monkeypatch):
    path = churn_log(tmp_path / "log.csv", 60, 8, windows=3, seed=7)
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    import anondecomp.stream as stream

    real = stream.write_graph_table
    monkeypatch.setattr(stream, "write_graph_table", failing)
    with pytest.raises(OSError, match="No space"):
        write_stream(path, tmp_path / "out", 2, "1h")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.csv"]


def test_a_non_empty_outdir_is_refused_before_any_work(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    path = write_csv(tmp_path / "log.csv", [("u0", "a", 0), ("u1", "a", 1)])
    with pytest.raises(InvalidInputError, match="outdir .*not empty"):
        write_stream(path, tmp_path / "out", 1, "1h")
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


# -- refusals ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("user,timestamp\nu0,0\n", r"no column 'item' \(or 'arm'\)"),
        ("user,item\nu0,a\n", "no column 'timestamp'"),
        ("item,timestamp\na,0\n", "no column 'user'"),
        ("user,item,arm,timestamp\nu0,a,a,0\n", "columns 'item' and 'arm' both given"),
        ("user,item,timestamp\n", "the log has no rows"),
        ("user,item,timestamp\nu0,a,0\nu1,a,-5\n", "timestamp of row 2 is -5.0 .before 1970"),
        ("user,item,timestamp\nu0,a,0\nu1,a,\n", "column 'timestamp' is empty in row 2"),
        ("user,item,timestamp\nu0,a,0\nu1,a,NaN\n", "column 'timestamp' is empty in row 2"),
        ("user,item,timestamp\nu0,a,0\nu1,a,1e999\n", "timestamp of row 2 is inf .not finite"),
        ("user,item,timestamp\nu0,a,yesterday\n", "column 'timestamp' must hold timestamps or numbers"),
        ("user,item,timestamp,weight\nu0,a,0,-1\n", "weight of row 1 is -1"),
        ("user,item,timestamp,weight\nu0,a,0,x\n", "column 'weight' must hold numbers"),
        ("user,item,timestamp,weight\nu0,a,0,1e300\n", "weight of row 1 is .*the limit is 2\\^53"),
        ("user,item,timestamp\n,a,0\n", "column 'user' is empty in row 1"),
    ],
)
def test_a_bad_log_is_one_line_naming_the_column_and_row(text, message, tmp_path):
    (tmp_path / "log.csv").write_text(text)
    with pytest.raises(InvalidInputError, match=message) as err:
        read_log(tmp_path / "log.csv")
    assert "\n" not in str(err.value) and "log.csv" in str(err.value)


def test_a_json_file_is_not_a_log(tmp_path):
    (tmp_path / "g.json").write_text('{"demand": 2, "active_sets": {}}')
    with pytest.raises(InvalidInputError, match="a log is a Parquet or CSV table"):
        read_log(tmp_path / "g.json")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"window": 0}, "window must be a positive duration"),
        ({"window": -3}, "window must be a positive duration"),
        ({"window": "1y"}, "window must be a duration"),
        ({"window": True}, "window must be a number"),
        ({"window": "1h", "step": "2h"}, r"step \(7200 s\) must be at most the window \(3600 s\)"),
        ({"window": "1h", "step": 0}, "step must be a positive duration"),
        ({"window": 0.001}, "cut the log's .* into .* windows, above the limit"),
        ({"window": "1h", "tolerance": -0.1}, "tolerance must be at least 0"),
        ({"window": "1h", "tolerance": float("nan")}, "tolerance must be a finite number"),
        ({"window": "1h", "cold": "yes"}, "cold must be True or False"),
        ({"window": "1h", "C": 0}, "C must be an integer >= 1"),
    ],
)
def test_bad_arguments_are_one_line_naming_the_argument(kwargs, message, tmp_path):
    path = write_csv(tmp_path / "log.csv", [("u0", "a", 0), ("u1", "a", 1000)])
    kwargs = {"C": 1, **kwargs}
    with pytest.raises(InvalidInputError, match=message) as err:
        stream_windows(path, **kwargs)
    assert "\n" not in str(err.value)


def test_a_window_graph_is_built_sparse_from_a_log_too_large_for_dense(tmp_path):
    """50,000 users x 50,000 items in 100,000 rows (dense: 2.5 x 10^9 cells): read, windowed and decomposed."""
    n = 50_000
    users = np.repeat(np.arange(n), 2)
    items = (users + np.tile([0, 1], n)) % n
    table = pa.table({"user": users, "item": items, "timestamp": np.zeros(2 * n)})
    pq.write_table(table, tmp_path / "ring.parquet")
    (w,) = stream_windows(tmp_path / "ring.parquet", C=1, window="1d")
    assert (w.users, w.items, w.R) == (n, n, 2)


def _calendar(seed: int, R: int, C: int) -> tuple[anondecomp.DemandGraph, np.ndarray]:
    """A random graph of 60 users x 40 items and a calendar of groups: in each round a few items hold a group of
    C+1 of their users; everyone else is free (-1)."""
    from tests.solvers.strategies import supported_graph

    graph = supported_graph(seed, N=60, K=40, C=C)
    rng = np.random.default_rng(seed)
    arm = np.full((R, graph.n_users), -1, dtype=np.int32)
    for t in range(R):
        for j in rng.choice(graph.n_arms, 3, replace=False):
            users = graph.edge_users[graph.edge_arms == j]
            users = users[arm[t, users] < 0]
            if len(users) > C:
                arm[t, rng.choice(users, C + 1, replace=False)] = j
    return graph, arm


@pytest.mark.parametrize("seed", range(8))
def test_free_users_are_hidden_on_their_support_at_most_c_to_an_arm(seed):
    from anondecomp.methods._common import park
    from anondecomp.warm import _hide_free

    C, R = 3, 10
    graph, arm = _calendar(seed, R, C)
    t, i = np.nonzero(arm >= 0)
    members = Seats(t, i, arm[t, i].astype(np.int64), np.arange(graph.n_users), np.arange(graph.n_arms), R)
    out = _hide_free(graph, arm.copy(), members, C)
    free = arm < 0
    assert (out[~free] == arm[~free]).all()  # group members stay
    support = np.zeros((graph.n_users, graph.n_arms), dtype=bool)
    support[graph.edge_users, graph.edge_arms] = True
    assert support[np.arange(graph.n_users)[None, :], out].all()
    rows = np.arange(R)[:, None]
    members = np.zeros((R, graph.n_arms), dtype=np.int64)
    np.add.at(members, (np.broadcast_to(rows, arm.shape)[~free], arm[~free]), 1)
    parked = np.broadcast_to(park(graph)[None, :], out.shape)
    exposed = free & (members[rows, out] > 0)  # a free user in a group: only one that could not hide
    assert (out[exposed] == parked[exposed]).all()
    assert exposed.sum() <= 0.05 * free.sum()
    hidden = free & (members[rows, out] == 0) & (out != parked)  # hidden deliberately: at most C to an arm
    placed = np.zeros((R, graph.n_arms), dtype=np.int64)
    np.add.at(placed, (np.broadcast_to(rows, out.shape)[hidden], out[hidden]), 1)
    assert placed.max() <= C


def test_hiding_free_users_leaves_the_warm_plan_valid_and_barely_exposed():
    from anondecomp.exposure import exposure_info

    rng = np.random.default_rng(3)
    graphs = []
    for _ in range(2):
        w = (rng.random((400, 120)) < 0.08) * rng.integers(1, 4, (400, 120))
        graphs.append(anondecomp.DemandGraph.from_weights(w.astype(float)))
    codes = np.arange(400), np.arange(120)
    first = anondecomp.decompose(graphs[0], 5)
    rounds, _, _ = warm_decomposition(graphs[1], 5, plan_seats(first, *codes), *codes)
    rows, mult = merge_rounds(rounds)
    warm = anondecomp.Decomposition(graphs[1], 5, "warm", rows, mult)
    assert anondecomp.verify(graphs[1], 5, warm).valid
    cold = anondecomp.decompose(graphs[1], 5)  # re-seated by default
    # parked on their first support item, the free users would take it to 13,239 user-blocks against 7,958
    assert exposure_info(warm)["exposure_total"] <= 1.05 * exposure_info(cold)["exposure_total"]
