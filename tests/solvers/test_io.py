"""JSON formats in and out (docs/formats.md), checked against the JSON Schemas and round-tripped."""

import json
import os
import stat
import tracemalloc

import jsonschema
import networkx as nx
import numpy as np
import pytest

import anondecomp
from anondecomp import InvalidInputError
from anondecomp.io import check_writable, graph_from_document, read_decomposition, write_decomposition
from anondecomp.schemas import load_schema


def node_link(weights, C=None):
    G = nx.Graph()
    for j in range(weights.shape[1]):
        G.add_node(f"arm{j}", bipartite=1)
    for i, row in enumerate(weights):
        G.add_node(f"user{i}", bipartite=0)
        for j, w in enumerate(row):
            if w > 0:
                G.add_edge(f"user{i}", f"arm{j}", weight=float(w))
    doc = nx.node_link_data(G, edges="links")
    if C is not None:
        doc["C"] = C
    return doc


def test_networkx_node_link_reads_back_the_weights():
    w = np.array([[2, 0, 1.5], [1, 1, 1], [0, 3, 0]], float)
    doc = node_link(w, C=2)
    jsonschema.validate(doc, load_schema("graph"))
    graph, C = graph_from_document(doc)
    assert C == 2
    assert graph.users == ("user0", "user1", "user2")
    np.testing.assert_array_equal(graph.weights, w)
    np.testing.assert_array_equal(graph.required, np.ceil(w))


def test_edges_key_and_reversed_links_are_accepted():
    doc = node_link(np.ones((2, 1)))
    doc["edges"] = [{"source": e["target"], "target": e["source"], "weight": e["weight"]} for e in doc.pop("links")]
    graph, _ = graph_from_document(doc)
    assert graph.weights.tolist() == [[1.0], [1.0]]


def test_batched_form_rounds_up_exactly():
    doc = {"demand": 10, "active_sets": {"a": ["x", "y", "z"], "b": ["y"]}, "C": 1}
    jsonschema.validate(doc, load_schema("graph"))
    graph, C = graph_from_document(doc)
    assert graph.arms == ("x", "y", "z") and C == 1
    assert graph.required.tolist() == [[4, 4, 4], [0, 10, 0]]
    assert graph.lower_bound == 12


def test_json_graphs_are_built_from_their_pairs_only():
    """10,000 users x 10,000 arms with two links each: dense weights would take 800 MB; the readers build the
    graph from the links (node-link) and the active sets (batched form) alone."""
    N = 10_000
    arms = [(i, (i + k * 7_919) % N) for i in range(N) for k in range(2)]
    nodes = [{"id": f"u{i}", "bipartite": 0} for i in range(N)] + [{"id": f"a{j}", "bipartite": 1} for j in range(N)]
    links = [
        {"source": f"u{i}", "target": f"a{j}", "weight": 0 if i == 5 and j != 5 else (i + j) % 5 + 0.5} for i, j in arms
    ]
    batched = {"demand": 9, "active_sets": {f"u{i}": [f"a{j}" for j in (i, (i + 7_919) % N)] for i in range(N)}}
    tracemalloc.start()
    try:
        graph, _ = graph_from_document({"nodes": nodes, "links": links})
        batch, _ = graph_from_document(batched)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20
    assert graph.shape == batch.shape == (N, N) and graph.nnz == batch.nnz == 2 * N
    assert graph.explicit_support and graph.user_demand[5] == 1  # u5 pads a7924 (a link of weight 0)
    e = slice(graph.indptr[7], graph.indptr[8])
    assert {graph.arms[j]: x for j, x in zip(graph.edge_arms[e], graph.edge_weights[e], strict=True)} == {
        "a7": 4.5,
        "a7926": 3.5,
    }
    ceil = {(i, j): np.ceil(link["weight"]) for (i, j), link in zip(arms, links, strict=True)}
    assert graph.lower_bound == max(ceil[i, i] + ceil[i, (i + 7_919) % N] for i in range(N))
    assert batch.lower_bound == 10 and (batch.edge_required == 5).all()


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "must be a JSON object"),
        ({"foo": 1}, "neither format"),
        ({"demand": 0, "active_sets": {"a": ["x"]}}, "'demand' must be positive"),
        ({"demand": -3, "active_sets": {"a": ["x"]}}, "'demand' must be positive"),
        ({"demand": "ten", "active_sets": {"a": ["x"]}}, "'demand' must be a finite number"),
        ({"demand": 5, "active_sets": {"a": []}}, "user 'a' has no demand"),
        ({"demand": 5, "active_sets": {"a": ["x"]}, "C": "3"}, "'C' must be an integer"),
        (
            {
                "nodes": [{"id": "u", "bipartite": 0}, {"id": "a", "bipartite": 1}],
                "links": [{"source": "u", "target": "a", "weight": -1}],
            },
            "weight of link 'u' - 'a' must be positive",
        ),
        (
            {
                "nodes": [{"id": "u", "bipartite": 0}, {"id": "a", "bipartite": 1}],
                "links": [{"source": "u", "target": "a", "weight": "x"}],
            },
            "weight of link 'u' - 'a' must be a finite",
        ),
        (
            {
                "nodes": [{"id": "u", "bipartite": 0}, {"id": "v", "bipartite": 0}, {"id": "a", "bipartite": 1}],
                "links": [{"source": "u", "target": "a", "weight": 1}],
            },
            "user 'v' has no demand",
        ),
        ({"nodes": [{"id": "u", "bipartite": 2}], "links": []}, 'needs "bipartite": 0'),
        (
            {
                "nodes": [{"id": "u", "bipartite": 0}, {"id": "w", "bipartite": 0}, {"id": "a", "bipartite": 1}],
                "links": [{"source": "u", "target": "w", "weight": 1}],
            },
            "must join a user node and an arm node",
        ),
    ],
)
def test_bad_documents_name_the_problem(doc, message):
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(")):
        graph_from_document(doc)


def test_output_validates_against_schema_and_round_trips(tmp_path):
    graph, _ = graph_from_document(
        {"demand": 7, "active_sets": {f"u{i}": ["p", "q"] if i % 2 else ["p"] for i in range(8)}}
    )
    res = anondecomp.decompose(graph, 2, "auto")
    out = tmp_path / "out.json"
    write_decomposition(res, out)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, load_schema("decomposition"))
    assert doc["total_assignments"] == res.total_assignments == sum(a["multiplicity"] for a in doc["assignments"])
    assert doc["distinct_assignments"] == len(doc["assignments"])
    assert all(set(a["arms"]) == set(graph.users) for a in doc["assignments"])
    a, m, C = read_decomposition(out, graph)
    assert C == 2
    assert anondecomp.verify(graph, 2, a, m).valid


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    graph, _ = graph_from_document({"demand": 3, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    res = anondecomp.decompose(graph, 1, "greedy")
    monkeypatch.setattr(anondecomp.io, "decomposition_header", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        write_decomposition(res, tmp_path / "out.json")
    assert list(tmp_path.iterdir()) == []


def test_the_input_examples_of_formats_md_are_feasible_and_verify():
    """docs/formats.md shows working inputs: each decomposes at its own C and the result verifies."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    inputs = [
        json.loads(block)
        for block in re.findall(r"```json\n(.*?)```", text, re.S)
        if '"nodes"' in block or '"demand"' in block
    ]
    assert len(inputs) == 2
    for doc in inputs:
        jsonschema.validate(doc, load_schema("graph"))
        graph, C = graph_from_document(doc)
        res = anondecomp.decompose(graph, C)
        assert anondecomp.verify(graph, C, res).valid


def test_duplicate_edges_and_null_ids_are_refused():
    nodes = [{"id": "u", "bipartite": 0}, {"id": "v", "bipartite": 0}, {"id": "a", "bipartite": 1}]
    links = [{"source": "u", "target": "a", "weight": 1}, {"source": "a", "target": "u", "weight": 2}]
    with pytest.raises(InvalidInputError, match=r"link 1 joins 'u' and 'a' again \(duplicate edge\)"):
        graph_from_document({"nodes": nodes, "links": links})
    with pytest.raises(InvalidInputError, match="node 0 has id None"):
        graph_from_document({"nodes": [{"id": None, "bipartite": 0}, *nodes[1:]], "links": []})


def test_huge_multiplicities_are_read_exactly(tmp_path):
    graph, _ = graph_from_document({"demand": 4, "active_sets": {"u0": ["a"], "u1": ["a"]}})
    path = tmp_path / "d.json"
    path.write_text(
        json.dumps(
            {
                "assignments": [
                    {"multiplicity": 10**30, "arms": {"u0": "a", "u1": "a"}},
                    {"multiplicity": 2, "arms": {"u0": "a", "u1": "a"}},
                ]
            }
        )
    )
    _, m, _ = read_decomposition(path, graph)
    assert m.dtype == object and m.tolist() == [10**30, 2]
    report = anondecomp.verify(graph, 1, *read_decomposition(path, graph)[:2])
    assert report.valid and report.total_assignments == 10**30 + 2


@pytest.mark.parametrize("name", ["out.json", "out.parquet", "parts/"])
def test_the_writers_never_replace_a_fifo(tmp_path, name):
    """The library writers refuse a FIFO by its type (never opened: that would block), every output form."""
    graph, _ = graph_from_document({"demand": 3, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    res = anondecomp.decompose(graph, 1, "greedy")
    fifo = tmp_path / name.rstrip("/")
    os.mkfifo(fifo)
    with pytest.raises(InvalidInputError, match="not a regular file \\(pipe or FIFO\\)"):
        write_decomposition(res, f"{fifo}/" if name.endswith("/") else fifo)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and sorted(tmp_path.iterdir()) == [fifo]


def test_a_symbolic_link_is_written_through_and_kept(tmp_path):
    graph, _ = graph_from_document({"demand": 3, "active_sets": {f"u{i}": ["p"] for i in range(3)}})
    res = anondecomp.decompose(graph, 1, "greedy")
    (tmp_path / "real").mkdir()
    for name in ("out.json", "out.parquet"):
        (tmp_path / name).symlink_to(tmp_path / "real" / name)  # dangling: the target is created
        write_decomposition(res, tmp_path / name)
        assert (tmp_path / name).is_symlink() and (tmp_path / "real" / name).is_file()
    assert read_decomposition(tmp_path / "out.json", graph)[1].tolist() == [3]
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["out.json", "out.parquet"]


def test_check_writable_refuses_the_standard_output(tmp_path):
    """/dev/stdout (here fd 1 pointed at a regular file) is not an output path: the run prints there."""
    out = tmp_path / "stdout.txt"
    saved = os.dup(1)
    try:
        with open(out, "w") as fh:
            os.dup2(fh.fileno(), 1)
        with pytest.raises(InvalidInputError, match="is the standard output of this command"):
            check_writable(out, "-o")
    finally:
        os.dup2(saved, 1)
        os.close(saved)


# -- the readers and writers share their private helpers through anondecomp._formats ---------------------------

PACKAGE = os.path.join(os.path.dirname(anondecomp.__file__))
READERS_AND_WRITERS = ("anondecomp.io", "anondecomp.columnar", "anondecomp.compact")


def _modules() -> dict[str, str]:
    """Every module of the solver layer: dotted name -> path."""
    out = {}
    for root, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                parts = ["anondecomp", *os.path.relpath(path, PACKAGE)[:-3].split(os.sep)]
                out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: str, modules) -> list[tuple[str, str, int]]:
    """(module imported from, name imported, line) of every import in the file, at module level or inside a
    function; relative imports resolved, ``from package import module`` giving the module with name ``""``,
    and ``alias._name`` on an imported module counted as an import of ``_name`` from it."""
    import ast

    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    out, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append((alias.name, "", node.lineno))
                if alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..io import y
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:  # a submodule, imported by name
                    out.append((f"{base}.{alias.name}", "", node.lineno))
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                else:
                    out.append((base, alias.name, node.lineno))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            out.append((aliases[node.value.id], node.attr, node.lineno))
    return out


def _shared(module: str) -> bool:
    """A private module of shared helpers (``anondecomp._formats``, ``anondecomp.methods._common``)."""
    return module.rpartition(".")[2].startswith("_") and not module.endswith("__init__")


def test_no_module_imports_another_modules_private_names():
    modules = _modules()
    assert "anondecomp._formats" in modules
    bad = [
        f"{os.path.relpath(path, PACKAGE)}:{line}: {name} from {source}"
        for module, path in modules.items()
        for source, name, line in _imports(module, path, modules)
        if source in modules
        and source != module
        and name.startswith("_")
        and not name.startswith("__")
        and not _shared(source)
    ]
    assert not bad, (
        "private names imported from another module (share them through anondecomp._formats):\n" + "\n".join(bad)
    )


def test_the_readers_and_writers_import_each_other_without_a_cycle():
    modules = _modules()
    edges = {
        m: {
            source for source, _, _ in _imports(m, modules[m], modules) if source in READERS_AND_WRITERS and source != m
        }
        for m in READERS_AND_WRITERS
    }
    assert not any(
        source in READERS_AND_WRITERS
        for source, _, _ in _imports("anondecomp._formats", modules["anondecomp._formats"], modules)
    )
    assert edges == {
        "anondecomp.io": {"anondecomp.columnar", "anondecomp.compact"},
        "anondecomp.columnar": set(),
        "anondecomp.compact": {"anondecomp.columnar"},
    }
    done: list[str] = []
    while len(done) < len(edges):  # a topological order exists: no cycle, at module level or in a function
        ready = [m for m in edges if m not in done and edges[m] <= set(done)]
        assert ready, f"import cycle among {sorted(set(edges) - set(done))}"
        done += ready
