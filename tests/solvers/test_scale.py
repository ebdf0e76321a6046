"""Sharded batched decompositions (anondecomp.scale): feasible shards, valid merges, Dask, the command line."""

from __future__ import annotations

import json
import os
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anondecomp
from anonbandits.cli.main import main
from anondecomp import DemandGraph, InfeasibleError, InvalidInputError, phases, scale
from anondecomp.compact import read_header, verify_compact
from tests.solvers.strategies import batched_graphs, random_support, weighted_graphs


def write_table(path, support: np.ndarray, D, C: int | None = None, user_offset: int = 0) -> None:
    u, a = np.nonzero(support)
    meta = {"demand": json.dumps(D)} | ({} if C is None else {"C": json.dumps(C)})
    pq.write_table(pa.table({"user": u + user_offset, "arm": a.astype(np.int16)}).replace_schema_metadata(meta), path)


def graph_of(data: scale.BatchedSupport) -> DemandGraph:
    return DemandGraph.from_batched(data.demand, data.support, [str(u) for u in data.users], data.arms)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=batched_graphs(max_users=30, max_arms=4, max_C=3), shards=st.integers(1, 5), seed=st.integers(0, 9))
def test_every_shard_is_feasible_and_the_merge_verifies_exactly(tmp_path_factory, case, shards, seed):
    graph, C = case
    data = scale.from_graph(graph)
    shard = phases.make_shards(data.support, C, shards, seed)
    counts = phases.shard_counts(data.support, shard, shards)
    assert not ((counts > 0) & (counts <= C)).any()  # every arm: 0 or >= C+1 users in every shard
    out = tmp_path_factory.mktemp("sharded") / "out"
    res = scale.decompose_sharded(data, C, f"{out}/", n_shards=shards, seed=seed)
    assert res.total_assignments == max(res.shard_rounds) >= graph.lower_bound
    assert sum(res.shard_users) == graph.n_users
    report = verify_compact(graph, C, out)
    assert report.valid, report.summary()
    assert report.total_assignments == res.total_assignments
    assert read_header(out)["total_assignments"] == res.total_assignments


def test_the_sink_keeps_the_users_of_a_thin_arm_together():
    C = 4
    support = random_support(400, 6, 0)
    support[:, 5] = False
    support[::80, 5] = True  # arm 5: 5 = C+1 users, spread over all shards
    shard = phases.make_shards(support, C, 4, seed=1)
    assert set(shard[support[:, 5]]) == {0}
    counts = phases.shard_counts(support, shard, 4)
    assert not ((counts > 0) & (counts <= C)).any()
    assert (np.bincount(shard, minlength=4)[1:] > 50).all()  # the other shards keep most users


def test_an_arm_with_too_few_users_is_refused_by_name():
    support = random_support(50, 3, 0)
    support[:, 2] = False
    support[:3, 2] = True
    data = scale.BatchedSupport(support, 10, np.arange(50), ("x", "y", "zeta"))
    with pytest.raises(InfeasibleError, match=r"^arm\(s\) 'zeta' are wanted by fewer than C\+1 = 6 users") as err:
        scale.decompose_sharded(data, 5, n_shards=2)
    assert err.value.arms == ("zeta",)


@pytest.mark.parametrize("D", [1000, 7, 2.5])
def test_the_phase_rows_meet_the_lower_bound_on_random_graphs(tmp_path, D):
    data = scale.BatchedSupport(random_support(20_000, 10, 3), D, np.arange(20_000), tuple("abcdefghij"))
    rows, ok = phases.phase_rows(data.support, D, data.lower_bound, 10)
    assert ok
    graph = graph_of(data)
    assert data.lower_bound == graph.lower_bound
    res = scale.decompose_sharded(data, 10, f"{tmp_path}/out/", n_shards=4)
    assert res.total_assignments == graph.lower_bound and set(res.shard_methods) == {"phase"}
    assert verify_compact(graph, 10, tmp_path / "out").valid


def test_a_sharded_part_directory_gets_the_permissions_of_any_written_directory(tmp_path):
    data = scale.BatchedSupport(random_support(2_000, 6, 3), 60, np.arange(2_000), tuple("abcdef"))
    scale.decompose_sharded(data, 3, f"{tmp_path}/sharded/", n_shards=2)
    anondecomp.write_decomposition(anondecomp.decompose(graph_of(data), 3), f"{tmp_path}/plain/")
    assert (tmp_path / "sharded").stat().st_mode & 0o777 == (tmp_path / "plain").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "sharded").stat().st_mode & 0o777 == 0o755 & ~umask  # not mkdtemp's 0700


def test_a_thin_phase_is_detected_and_the_shard_falls_back():
    support = np.zeros((12, 2), bool)
    support[:6, 0] = support[6:, 1] = True
    support[0, 1] = True  # user 0 leaves arm 0 for arm 1 half-way: arm 0 then holds 5 = C users
    rows, ok = phases.phase_rows(support, 10, 10, 5)
    assert not ok
    _, R, method = scale.solve_shard(support, 10, 10, 5)
    assert method != "phase" and R >= 10


@pytest.mark.parametrize(
    ("N", "K", "seed"),
    [(300, 20, 0), (300, 20, 1), (500, 30, 2), (700, 40, 3), (1000, 50, 0), (1000, 50, 1), (1000, 50, 4)],
)
def test_thin_phase_schedules_are_recruited_to_the_lower_bound(tmp_path, N, K, seed):
    """Few users per arm and round (N / K = 15..25 against C+1 = 11): the phase rule leaves thin arm-rounds
    (the case of 10^3 users x 50 arms), recruit_rows repairs them at R = LB; the exact verifier checks."""
    data = scale.BatchedSupport(random_support(N, K, seed), 1000, np.arange(N), tuple(map(str, range(K))))
    rows, ok = phases.phase_rows(data.support, 1000, data.lower_bound, 10)
    assert not ok
    res = scale.decompose_sharded(data, 10, f"{tmp_path}/out/", n_shards=1)
    assert res.shard_methods == ("phase+recruit",)
    graph = graph_of(data)
    assert res.total_assignments == graph.lower_bound
    report = verify_compact(graph, 10, tmp_path / "out")
    assert report.valid, report.summary()
    assert report.total_assignments == graph.lower_bound


def test_recruit_rows_refuses_what_it_cannot_repair():
    support = np.zeros((12, 2), bool)
    support[:6, 0] = support[6:, 1] = True
    support[0, 1] = True  # arm 0 holds 5 = C users for half the rounds and nobody can join it
    rows, _ = phases.phase_rows(support, 10, 10, 5)
    _, ok = phases.recruit_rows(support, 10, 5, rows)
    assert not ok


def test_merged_R_is_within_two_percent_of_the_single_machine_R():
    data = scale.BatchedSupport(random_support(30_000, 20, 5), 1000, np.arange(30_000), tuple(map(str, range(20))))
    single = anondecomp.decompose(graph_of(data), 10, method="auto").total_assignments
    merged = scale.decompose_sharded(data, 10, n_shards=8).total_assignments
    assert merged <= 1.02 * single


def test_the_table_reader_streams_the_support_of_integer_ids(tmp_path):
    support = random_support(500, 7, 2)
    write_table(tmp_path / "g.parquet", support, 30, C=3, user_offset=100)
    data, C = scale.read_batched(tmp_path / "g.parquet")
    graph, file_C = anondecomp.read_graph(tmp_path / "g.parquet")
    assert C == file_C == 3 and data.demand == 30
    assert [str(u) for u in data.users] == list(graph.users) and list(data.arms) == list(graph.arms)
    assert np.array_equal(data.support, graph.support)
    assert scale.streamed_rows(tmp_path / "g.parquet") == support.sum()
    u, a = np.nonzero(support)
    pq.write_table(pa.table({"user": np.r_[u, u[:1]], "arm": np.r_[a, a[:1]]}), tmp_path / "dup.parquet")
    with pytest.raises(InvalidInputError, match="more than once"):
        scale.read_batched(tmp_path / "dup.parquet", demand=5)
    with pytest.raises(InvalidInputError, match="demand"):
        scale.read_batched(tmp_path / "dup.parquet")
    write_table(tmp_path / "far.parquet", support, 30, user_offset=10**12)  # sparse ids: factorised
    far, _ = scale.read_batched(tmp_path / "far.parquet")
    order = [int(a) for a in far.arms]
    assert np.array_equal(far.support, support[:, order]) and far.users[0] == str(10**12)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=weighted_graphs(max_users=20, max_arms=3, max_C=2), shards=st.integers(1, 3))
def test_a_weighted_graph_is_sharded_as_batched_only_when_it_requires_the_same(tmp_path_factory, case, shards):
    graph, C = case
    data = scale.from_graph(graph)
    assert data.lower_bound == graph.lower_bound
    if data.demand is not None:  # batched demands: the same rounds for every pair, so the same valid schedules
        assert np.array_equal(DemandGraph.from_batched(data.demand, data.support).required, graph.required)
    out = tmp_path_factory.mktemp("weighted") / "out"
    res = scale.decompose_sharded(data, C, f"{out}/", n_shards=shards)
    assert data.demand is not None or "phase" not in res.shard_methods
    assert verify_compact(graph, C, out).valid


@settings(max_examples=200, deadline=None)
@given(users=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 40)), min_size=1, max_size=6))
def test_batched_demand_is_a_D_that_requires_every_users_rounds_or_none(users):
    k, r = (np.array(x) for x in zip(*users, strict=True))
    D = scale.batched_demand(k, r)
    fits = [d for d in range(1, 300) if (-(-d // k) == r).all()]
    assert (D is None) == (not fits)
    assert D is None or (-(-D // k) == r).all()


def weighted_table(path, support: np.ndarray, weights: np.ndarray, C: int) -> None:
    u, a = np.nonzero(support)
    pq.write_table(
        pa.table({"user": u, "arm": a.astype(np.int16), "weight": weights[u, a]}).replace_schema_metadata(
            {"C": json.dumps(C)}
        ),
        path,
    )


def test_an_edge_table_of_batched_weights_is_streamed_as_batched(tmp_path):
    support = random_support(400, 6, 3)
    weights = 100 / support.sum(axis=1, keepdims=True) * support  # D / |A_i| as floats: 100/3, 100/7, ...
    weighted_table(tmp_path / "w.parquet", support, weights, 4)
    data, C = scale.read_support(tmp_path / "w.parquet")
    graph, _ = anondecomp.read_graph(tmp_path / "w.parquet")
    assert isinstance(data, scale.BatchedSupport) and C == 4 and np.array_equal(data.support, graph.support)
    assert np.array_equal(DemandGraph.from_batched(data.demand, data.support).required, graph.required)
    res = scale.decompose_sharded(data, C, tmp_path / "out.parquet")
    assert res.shard_methods == ("phase",) and res.total_assignments == graph.lower_bound
    assert verify_compact(graph, C, tmp_path / "out.parquet").valid
    # one user's rows needing different rounds, or no common D: the general graph, read whole
    uneven = weights.copy()
    i, j = np.argwhere(support)[0]
    uneven[i, j] += 1
    weighted_table(tmp_path / "uneven.parquet", support, uneven, 4)
    general, _ = scale.read_support(tmp_path / "uneven.parquet")
    assert isinstance(general, DemandGraph) and general.demand is None
    assert np.array_equal(general.weights, anondecomp.read_graph(tmp_path / "uneven.parquet")[0].weights)
    weighted_table(tmp_path / "twoD.parquet", support, weights * np.where(np.arange(400) % 2, 1, 3)[:, None], 4)
    assert isinstance(scale.read_support(tmp_path / "twoD.parquet")[0], DemandGraph)
    bad = weights.copy()
    bad[i, j] = -1
    weighted_table(tmp_path / "bad.parquet", support, bad, 4)
    with pytest.raises(InvalidInputError, match="weights must be positive and finite"):
        scale.read_support(tmp_path / "bad.parquet")


def test_the_batched_test_reads_the_edges_and_a_sparse_batched_table_stays_sparse(tmp_path):
    """from_graph tells a batched graph by its edges; a batched table of 200,000 users x 100,000 arms in
    600,000 rows (its dense support: 20 GB) is read as the sparse graph, not streamed into a dense support."""
    w = np.array([[2.5, 3.0, 0.0], [0.0, 0.0, 5.5], [1.5, 2.0, 1.2]])  # ceil: 3 3 | 6 | 2 2 2, as D = 6
    graph = DemandGraph.from_weights(w)
    assert phases.batched_total(graph) == 6 and scale.from_graph(graph).demand == 6
    assert np.array_equal(scale.from_graph(graph).support, w > 0)
    assert np.array_equal(DemandGraph.from_batched(6, w > 0).required, graph.required)
    assert phases.batched_total(DemandGraph.from_weights(w + [[0, 1, 0], [0, 0, 0], [0, 0, 0]])) is None
    assert phases.batched_total(DemandGraph.from_weights(w, support=np.ones((3, 3), bool))) is None
    general = scale.from_graph(DemandGraph.from_weights(w + [[0, 1, 0], [0, 0, 0], [0, 0, 0]]))
    assert general.demand is None and np.array_equal(general.weights[0], [2.5, 4.0, 0.0])
    N, K = 200_000, 100_000
    u = np.repeat(np.arange(N), 3)
    a = (u % K + np.tile([0, 33_333, 66_666], N)) % K
    pq.write_table(
        pa.table({"user": u, "arm": a}).replace_schema_metadata({"demand": "10", "C": "2"}), tmp_path / "b.parquet"
    )
    tracemalloc.start()
    try:
        data, C = scale.read_support(tmp_path / "b.parquet")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(data, DemandGraph) and C == 2 and peak < 300 * 2**20
    assert data.nnz == 3 * N and data.demand == 10 and data.lower_bound == 12
    assert phases.batched_total(data) == 10 and scale.batched_support(data) is None  # batched, but too sparse


def test_a_file_output_holds_every_shard_and_parts_name_a_directory(tmp_path):
    data = scale.BatchedSupport(random_support(3000, 6, 2), 60, np.arange(3000), tuple(map(str, range(6))))
    res = scale.decompose_sharded(data, 4, tmp_path / "out.parquet", n_shards=3)
    assert (tmp_path / "out.parquet").is_file() and len(res.shard_users) == 3
    assert pq.read_table(tmp_path / "out.parquet").num_rows == res.rows
    assert verify_compact(graph_of(data), 4, tmp_path / "out.parquet").valid
    parts = scale.decompose_sharded(data, 4, tmp_path / "parts.parquet", n_shards=3, parts=True)
    assert sorted(p.name for p in (tmp_path / "parts.parquet").iterdir()) == [f"part-0000{k}.parquet" for k in range(3)]
    assert parts.rows == res.rows and verify_compact(graph_of(data), 4, tmp_path / "parts.parquet").valid


def test_shards_on_a_local_dask_cluster_write_the_same_parts(tmp_path):
    distributed = pytest.importorskip("distributed")
    data = scale.BatchedSupport(random_support(6000, 8, 4), 100, np.arange(6000), tuple(map(str, range(8))))
    local = scale.decompose_sharded(data, 5, f"{tmp_path}/local/", n_shards=3)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        # named like a file: a part directory of that name (as Dask names a dataset)
        remote = scale.decompose_sharded(
            data, 5, tmp_path / "dask.parquet", n_shards=3, scheduler=cluster.scheduler_address
        )
    assert remote.total_assignments == local.total_assignments == data.lower_bound
    for part in sorted((tmp_path / "local").iterdir()):
        assert pq.read_table(part).equals(pq.read_table(tmp_path / "dask.parquet" / part.name))
    assert verify_compact(graph_of(data), 5, tmp_path / "dask.parquet").valid


def test_the_command_line_shards_and_verify_checks_the_parts(tmp_path, capsys):
    write_table(tmp_path / "g.parquet", random_support(3000, 6, 1), 60, C=4)
    assert main(["decompose", str(tmp_path / "g.parquet"), "--shards", "3", "-o", f"{tmp_path}/out/"]) == 0
    out = capsys.readouterr().out
    assert "shards               3" in out and "R / lower bound      1.0000" in out
    assert main(["verify", str(tmp_path / "g.parquet"), str(tmp_path / "out")]) == 0
    assert "valid: R = 60" in capsys.readouterr().out


def test_a_sharded_output_named_like_a_file_is_a_part_directory_of_that_name(tmp_path, capsys):
    write_table(tmp_path / "g.parquet", random_support(400, 5, 1), 60, C=3)
    out = tmp_path / "OUT.parquet"
    assert main(["decompose", str(tmp_path / "g.parquet"), "--shards", "2", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["part-00000.parquet", "part-00001.parquet"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "g.parquet"), str(out)]) == 0
    assert "valid: R = 60" in capsys.readouterr().out
    # a second run refuses the now non-empty directory, and a regular file of that name, before solving
    assert main(["decompose", str(tmp_path / "g.parquet"), "--shards", "2", "-o", str(out)]) == 2
    assert "directory is not empty" in capsys.readouterr().err
    (tmp_path / "file.parquet").write_bytes(b"keep")
    assert main(["decompose", str(tmp_path / "g.parquet"), "--shards", "2", "-o", str(tmp_path / "file.parquet")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert (tmp_path / "file.parquet").read_bytes() == b"keep"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--method", "greedy"], "--method does not apply with --shards"),
        (["-o", "out.json"], "-o out.json: a sharded decomposition is written as a Parquet part directory"),
    ],
)
def test_sharding_options_are_checked_in_one_line(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    write_table(tmp_path / "g.parquet", random_support(100, 3, 1), 60, C=4)
    assert main(["decompose", "g.parquet", "--shards", "2", *extra]) != 0
    err = capsys.readouterr().err
    assert message in err and "\n" not in err.strip() and "Traceback" not in err


# -- general (sparse) graphs -------------------------------------------------------------------------------


def sparse_general_graph(N: int, K: int, C: int, seed: int, thin: int = 3, pad: float = 0.0) -> DemandGraph:
    """A random sparse log with integer weights 1-3: 2-5 arms per user among arms ``thin..K-1``, and arms
    ``0..thin-1`` thin-ish (C+1 to 2C+1 users each, spread over the users); with ``pad``, that share of the
    edges is support without demand (weight 0)."""
    from scipy.sparse import csr_array

    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(N), rng.integers(2, 6, N))
    a = rng.integers(thin, K, len(u))
    few = [rng.choice(N, rng.integers(C + 1, 2 * C + 2), replace=False) for _ in range(thin)]
    u = np.concatenate([u, *few])
    a = np.concatenate([a, *[np.full(len(f), j) for j, f in enumerate(few)]])
    key = np.unique(u * K + a)
    u, a = np.divmod(key, K)
    w = rng.integers(1, 4, len(u)) * (rng.random(len(u)) >= pad)
    for j, f in enumerate(few):  # every thin-ish arm keeps two users who want it
        w[np.isin(u, f[:2]) & (a == j)] = 2
    support = csr_array((np.ones(len(u), bool), (u, a)), shape=(N, K)) if pad else None
    graph = DemandGraph.from_weights(csr_array((w.astype(float), (u, a)), shape=(N, K)), support=support)
    assert phases.batched_total(graph) is None and not len(graph.thin_arms(C))
    return graph


def assert_feasible_shards(graph: DemandGraph, C: int, shard: np.ndarray, shards: int) -> None:
    """The rule's invariant: every arm wanted in a shard has at least C+1 users of its support there."""
    count, wanted = scale.graph_shard_counts(graph, shard, shards)
    assert not (wanted & (count <= C)).any()


@pytest.mark.parametrize(("shards", "pad"), [(1, 0.0), (2, 0.0), (4, 0.0), (2, 0.15), (4, 0.15)])
def test_a_sparse_general_graph_is_sharded_feasibly_and_the_merge_verifies(tmp_path, shards, pad):
    C = 4
    graph = sparse_general_graph(1500, 30, C, seed=shards, pad=pad)
    shard = scale.graph_shards(graph, C, shards, seed=3)
    assert_feasible_shards(graph, C, shard, shards)
    sizes = np.bincount(shard, minlength=shards)
    if shards > 1:
        assert (sizes[1:] > 150).all()  # the thin-ish arms do not drain the shards
    res = scale.decompose_sharded(graph, C, f"{tmp_path}/out/", n_shards=shards, seed=3)
    assert res.shard_users == tuple(int(n) for n in sizes if n) and sum(res.shard_users) == graph.n_users
    # each shard's R is that of auto on its users' sub-graph; the merge runs them side by side: R = their maximum
    pieces = [scale.GraphShard.of(graph, np.flatnonzero(shard == s)) for s in range(shards) if sizes[s]]
    assert [p.nnz for p in pieces] == [int(np.diff(graph.indptr)[shard == s].sum()) for s in range(shards) if sizes[s]]
    own = tuple(anondecomp.decompose(p.graph(), C, seed=3).total_assignments for p in pieces)
    assert res.shard_rounds == own and res.total_assignments == max(own) >= graph.lower_bound
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"part-{k:05d}.parquet" for k in range(len(own))]
    report = verify_compact(graph, C, tmp_path / "out")
    assert report.valid, report.summary()
    assert report.total_assignments == res.total_assignments == read_header(tmp_path / "out")["total_assignments"]
    # one file: the same shards' rows one after the other
    one = scale.decompose_sharded(graph, C, tmp_path / "one.parquet", n_shards=shards, seed=3)
    assert one.total_assignments == res.total_assignments and (tmp_path / "one.parquet").is_file()
    assert verify_compact(graph, C, tmp_path / "one.parquet").valid
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no spilled rows left


def test_the_sparse_rule_is_the_dense_rule_on_a_batched_graph():
    support = random_support(3000, 8, 1)
    support[:, 7] = False
    support[::500, 7] = support[1::500, 7] = True  # arm 7: 12 users, thin in every shard of 4
    support[~support.any(axis=1), 0] = True
    graph = DemandGraph.from_batched(60, support)
    for shards in (1, 3, 4):
        shard = scale.graph_shards(graph, 5, shards, seed=2)
        assert np.array_equal(shard, phases.make_shards(support, 5, shards, seed=2))
        assert np.array_equal(
            scale.graph_shard_counts(graph, shard, shards)[0], phases.shard_counts(support, shard, shards)
        )


def test_the_sink_pulls_the_support_users_of_an_arm_wanted_in_it():
    """Arm 'rare' is wanted by 2 users and padded by 3 others (C+1 = 5 support users in all): wherever it is
    wanted it needs all 5, so the rule brings them into the sink; padders elsewhere need no group."""
    from scipy.sparse import csr_array

    C, N = 4, 2000
    rng = np.random.default_rng(7)
    u = np.repeat(np.arange(N), 3)
    a = (u % 40 + np.tile([0, 13, 27], N)) % 40 + 1  # arms 1..40, 150 users each
    w = rng.integers(1, 4, len(u)).astype(float)
    wanters, padders = np.array([100, 1100]), np.array([300, 900, 1700])
    u, a = np.r_[u, wanters, padders], np.r_[a, [0] * 5]
    w = np.r_[w, [3.0, 1.0], [0.0] * 3]
    graph = DemandGraph.from_weights(
        csr_array((w, (u, a)), shape=(N, 41)),
        arms=["rare", *map(str, range(40))],
        support=csr_array((np.ones(len(u), bool), (u, a)), shape=(N, 41)),
    )
    assert graph.arm_degrees[0] == C + 1 and graph.wanted_arms[0]
    shard = scale.graph_shards(graph, C, 4, seed=0)
    assert set(shard[np.r_[wanters, padders]]) == {0}
    assert_feasible_shards(graph, C, shard, 4)
    assert (np.bincount(shard, minlength=4)[1:] > 300).all()  # the other shards keep most users
    # without the padders' zero-demand support the arm is infeasible: refused by name before sharding
    thin = DemandGraph.from_weights(
        csr_array((w[:-3], (u[:-3], a[:-3])), shape=(N, 41)), arms=["rare", *map(str, range(40))]
    )
    with pytest.raises(InfeasibleError, match=r"^arm\(s\) 'rare' are wanted by fewer than C\+1 = 5 users"):
        scale.decompose_sharded(thin, C, n_shards=4)


def three_arm_log(N: int, K: int) -> DemandGraph:
    from scipy.sparse import csr_array

    u = np.repeat(np.arange(N), 3)
    a = (u % K + np.tile([0, K // 3 + 1, 2 * K // 3 + 1], N)) % K
    return DemandGraph.from_weights(csr_array((np.tile([1.0, 2.0, 1.0], N), (u, a)), shape=(N, K)))


def test_a_sharded_general_graph_is_never_held_dense(tmp_path, monkeypatch):
    """The rule and the shards' sub-graphs cost memory in the edges: 100,000 users x 50,000 arms (a dense
    support alone: 5 GB) in 300,000 edges are sharded within a few tens of MB, each shard's sub-graph pickles
    to about 24 bytes an edge; a whole sharded run builds no dense view of the graph (each shard's ``auto``
    chooses for its own sub-graph)."""
    import pickle

    graph = three_arm_log(100_000, 50_000)
    tracemalloc.start()
    try:
        shard = scale.graph_shards(graph, 1, 4)
        pieces = [scale.GraphShard.of(graph, np.flatnonzero(shard == s)) for s in range(4)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48 * 2**20
    assert sum(p.nnz for p in pieces) == graph.nnz
    assert all(len(pickle.dumps(p)) < 32 * p.nnz + 2**16 for p in pieces if p.nnz)
    small = three_arm_log(4_000, 200)  # 60 users an arm
    assert scale.batched_support(small) is None  # a general graph
    monkeypatch.setattr(phases, "_dense", lambda *a: pytest.fail("a dense view of the graph was built"))
    res = scale.decompose_sharded(small, 3, f"{tmp_path}/out/", n_shards=2)
    assert len(res.shard_users) == 2 and res.total_assignments == max(res.shard_rounds) >= small.lower_bound
    assert not small._dense  # no weights, support, required
    assert verify_compact(small, 3, tmp_path / "out").valid


def test_a_general_graph_on_a_local_dask_cluster_equals_the_local_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    C = 4
    graph = sparse_general_graph(2000, 40, C, seed=11, pad=0.1)
    local = scale.decompose_sharded(graph, C, f"{tmp_path}/local/", n_shards=3)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        remote = scale.decompose_sharded(
            graph, C, tmp_path / "dask.parquet", n_shards=3, scheduler=cluster.scheduler_address
        )
    assert remote.total_assignments == local.total_assignments and remote.shard_rounds == local.shard_rounds
    assert len(local.shard_users) == 3
    for part in sorted((tmp_path / "local").iterdir()):
        assert pq.read_table(part).equals(pq.read_table(tmp_path / "dask.parquet" / part.name))
    for out in ("local", "dask.parquet"):
        report = verify_compact(graph, C, tmp_path / out)
        assert report.valid and report.total_assignments == local.total_assignments, report.summary()


def test_shard_rows_come_in_blocks_of_whole_users_and_a_shard_without_demand_parks_them(tmp_path):
    C = 4
    graph = sparse_general_graph(600, 20, C, seed=5)
    whole, R, _ = scale.solve_graph(graph, C)
    R_b, _, blocks = scale.graph_rows(graph, C, block=200)
    blocks = list(blocks)
    assert R_b == R and len(blocks) > 3
    joined = [np.concatenate(parts) for parts in zip(*blocks, strict=True)]
    assert all(np.array_equal(a, b) for a, b in zip(joined, whole, strict=True))
    # users with support and no demand: R = 0, every user parked on its first arm, stretched to the merged R
    w = np.zeros((6, 2))
    graph = DemandGraph.from_weights(w, support=np.ones((6, 2), bool))
    piece = scale.GraphShard.of(graph, np.arange(6))
    R0, _, n = scale.graph_shard_task(piece, 1, spill=str(tmp_path / "rows.parquet"))
    assert R0 == 0 and n == 6
    scale.finish_part(
        str(tmp_path / "rows.parquet"),
        7,
        np.array(list(graph.users), object),
        np.array(list(graph.arms), object),
        str(tmp_path / "part.parquet"),
        {"C": 1},
    )
    table = pq.read_table(tmp_path / "part.parquet").to_pydict()
    assert table["arm"] == ["a0"] * 6 and table["first_round"] == [0] * 6 and table["rounds"] == [7] * 6
    assert not (tmp_path / "rows.parquet").exists()
