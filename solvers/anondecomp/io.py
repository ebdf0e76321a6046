"""JSON in and out (formats documented in docs/formats.md, JSON Schemas in anondecomp/schemas/).

Input, detected automatically:

* networkx node-link JSON of a bipartite graph: nodes carry ``"bipartite": 0`` (user) or ``1`` (arm); each
  link (key ``"links"`` or ``"edges"``) joins a user and an arm with ``"weight"``, the samples wanted; a link
  of weight 0 puts the arm in the user's support without demand (the user may pad its groups).
* compact batched form: ``{"demand": D, "active_sets": {"user": ["arm", ...], ...}}``, w_ij = D / |A_i|.

Either may carry ``"C"``. Output: the decomposition with every assignment listing every user by name.
:func:`read_graph` also reads Parquet and CSV tables (:mod:`anondecomp.columnar`), and
:func:`write_decomposition` writes compact Parquet schedules (:mod:`anondecomp.compact`) for ``.parquet``
paths and part directories.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np

from anondecomp import columnar, compact
from anondecomp._formats import (
    ZERO_WEIGHT,
    DuplicateKeyError,
    c_field,
    discard_pending_outputs,
    finite_number,
    output_target,
    pending_output,
    refuse_special,
    umask,
    unique_keys,
)
from anondecomp.errors import InvalidInputError
from anondecomp.graph import DemandGraph
from anondecomp.result import Decomposition, arm_dtype
from anondecomp.validation import checked

__all__ = [
    "ZERO_WEIGHT",
    "absence_from_header",
    "limits_from_header",
    "absence_header",
    "atomic_open",
    "check_writable",
    "decomposition_header",
    "discard_pending_outputs",
    "graph_from_document",
    "load_json",
    "output_target",
    "read_decomposition",
    "read_decomposition_document",
    "read_graph",
    "refuse_special",
    "write_decomposition",
    "write_graph_table",
]


def load_json(path: str | os.PathLike) -> Any:
    """Parse a JSON file; a missing, unreadable or malformed file raises :class:`InvalidInputError`.

    The parser calls back into Python after every JSON object (:func:`unique_keys`), so Ctrl-C stops the read
    of a large file within a fraction of a second, not at its end (json's C parser checks no signal itself)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, object_pairs_hook=unique_keys)
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{path}: cannot read file ({getattr(exc, 'strerror', None) or exc})") from None
    except DuplicateKeyError as exc:
        raise InvalidInputError(f"{path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InvalidInputError(f"{path}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (Python's int conversion limit)
        raise InvalidInputError(f"{path}: unreadable JSON value ({exc})") from None


def graph_from_document(doc: Any) -> tuple[DemandGraph, int | None]:
    """A graph (and the document's ``C``, if any) from a parsed JSON document of either input format."""
    if not isinstance(doc, dict):
        raise InvalidInputError("the document must be a JSON object (node-link graph or batched form)")
    C = c_field(doc)
    if "active_sets" in doc or "demand" in doc:
        return _batched(doc), C
    if "nodes" in doc:
        return _node_link(doc), C
    raise InvalidInputError(
        "document is in neither format: expected 'nodes' and 'links' (node-link graph) "
        "or 'demand' and 'active_sets' (batched form)"
    )


@checked()
def read_graph(path: str | os.PathLike, demand: int | float | None = None) -> tuple[DemandGraph, int | None]:
    """Read a graph file: JSON (either form), or a Parquet or CSV table (:mod:`anondecomp.columnar`).

    The format is told by the extension, else by the content.

    Parameters
    ----------
    path : str or os.PathLike
        The file (or a directory of Parquet part files).
    demand : int or float, optional
        The total demand D of a batched table (see :func:`~anondecomp.columnar.read_table_graph`); JSON
        files carry their own.

    Returns
    -------
    graph : DemandGraph
        The graph.
    C : int or None
        The file's ``C``, ``None`` when absent.

    Raises
    ------
    InvalidInputError
        For a missing or unreadable file, a malformed document or table (one line naming the field, user,
        arm or row), or ``demand`` given with a JSON graph.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "g.json"
    >>> _ = path.write_text(json.dumps({"C": 1, "demand": 10, "active_sets": {"a": ["x", "y"], "b": ["x", "y"]}}))
    >>> graph, C = read_graph(path)
    >>> graph.users, graph.arms, C
    (('a', 'b'), ('x', 'y'), 1)
    """
    kind = columnar.file_kind(path)
    if kind != "json":
        return columnar.read_table_graph(path, kind, demand)
    if demand is not None:
        raise InvalidInputError(
            f"{path} is a JSON graph, which carries its own demand; demand=D is only for "
            "a batched table (Parquet or CSV)"
        )
    return graph_from_document(load_json(path))


def _batched(doc: dict) -> DemandGraph:
    for key in ("demand", "active_sets"):
        if key not in doc:
            raise InvalidInputError(f"batched form needs field {key!r}")
    demand = finite_number(doc["demand"], "field 'demand'")
    if demand <= 0:
        raise InvalidInputError(f"field 'demand' must be positive, got {doc['demand']!r}")
    sets = doc["active_sets"]
    if not isinstance(sets, dict) or not sets:
        raise InvalidInputError("field 'active_sets' must be a non-empty object {user: [arm, ...]}")
    for user, arms in sets.items():
        if not isinstance(arms, list) or not all(_is_name(a) for a in arms):
            raise InvalidInputError(f"active set of user {user!r} must be a list of arm names (strings or integers)")
        if not arms:
            raise InvalidInputError(f"user {user!r} has no demand (empty active set)")
        if len(set(map(str, arms))) < len(arms):
            raise InvalidInputError(f"active set of user {user!r} lists an arm twice")
    arms = doc.get("arms")
    if arms is not None and (not isinstance(arms, list) or not all(_is_name(a) for a in arms)):
        raise InvalidInputError("field 'arms' must be a list of arm names (strings or integers)")
    users = list(sets)
    arm_list = (
        [str(a) for a in arms] if arms is not None else list(dict.fromkeys(str(a) for s in sets.values() for a in s))
    )
    index = {a: k for k, a in enumerate(arm_list)}
    rows: list[int] = []
    cols: list[int] = []
    for i, (user, chosen) in enumerate(sets.items()):  # (user, arm) pairs, never a users x arms matrix
        for arm in map(str, chosen):
            if arm not in index:
                raise InvalidInputError(f"user {user!r} lists unknown arm {arm!r}")
            rows.append(i)
            cols.append(index[arm])
    active = _sparse(np.ones(len(rows), dtype=bool), rows, cols, (len(users), len(arm_list)))
    return DemandGraph.from_batched(demand, active, users, arm_list)


def _sparse(values: np.ndarray, rows: list[int], cols: list[int], shape: tuple[int, int]):
    """A scipy.sparse COO array of ``values`` at the (distinct) pairs ``(rows, cols)``: the JSON readers build
    graphs from their pairs, so memory grows with the links, not with users x arms."""
    from scipy.sparse import coo_array

    return coo_array((values, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))), shape=shape)


def _is_name(x: Any) -> bool:
    """Names of users and arms are JSON strings or integers (not null, booleans, numbers with a fraction)."""
    return isinstance(x, str | int) and not isinstance(x, bool)


def _node_link(doc: dict) -> DemandGraph:
    """The graph of a networkx node-link document (module docstring): its links' weights on its user and arm
    nodes, a link of weight 0 putting the arm in the user's support."""
    nodes = doc["nodes"]
    links = doc.get("links", doc.get("edges"))
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise InvalidInputError("node-link graph needs a list 'nodes' and a list 'links' (or 'edges')")
    users, arms = _node_sides(nodes)
    rows, cols, weights = _link_pairs(links, users, arms)
    shape = (len(users), len(arms))
    w = np.array(weights, dtype=np.float64)
    # a link of weight 0 is support without demand; without one, the support is the demand (as before)
    support = _sparse(np.ones(len(w), dtype=bool), rows, cols, shape) if (w == 0).any() else None
    return DemandGraph.from_weights(_sparse(w, rows, cols, shape), list(users), list(arms), support=support)


def _node_sides(nodes: list) -> tuple[dict[str, int], dict[str, int]]:
    """The user nodes and the arm nodes of a node-link graph, each name with its index on its side (in the
    order of the nodes)."""
    users: dict[str, int] = {}
    arms: dict[str, int] = {}
    for k, node in enumerate(nodes):
        if not isinstance(node, dict) or "id" not in node:
            raise InvalidInputError(f"node {k} must be an object with an 'id'")
        side = node.get("bipartite")
        if not _is_name(node["id"]):
            raise InvalidInputError(f"node {k} has id {node['id']!r:.40}; ids must be strings or integers")
        name = str(node["id"])
        if name in users or name in arms:
            raise InvalidInputError(f"node id {name!r} appears twice")
        if side == 0:
            users[name] = len(users)
        elif side == 1:
            arms[name] = len(arms)
        else:
            raise InvalidInputError(f'node {name!r} needs "bipartite": 0 (user) or 1 (arm), got {side!r}')
    if not users or not arms:
        raise InvalidInputError("the graph needs at least one user node and one arm node")
    return users, arms


def _link_pairs(
    links: list, users: dict[str, int], arms: dict[str, int]
) -> tuple[list[int], list[int], list[int | float]]:
    """(user index, arm index, weight) of every link of a node-link graph, each checked (one link per pair)."""
    rows: list[int] = []
    cols: list[int] = []
    weights: list[int | float] = []
    seen: set[tuple[str, str]] = set()
    for k, link in enumerate(links):
        a, b = _link_ends(k, link, users, arms)
        if (a, b) in seen:  # summing would hide a mistake; a multigraph's parallel edges are not a demand
            raise InvalidInputError(
                f"link {k} joins {a!r} and {b!r} again (duplicate edge); give one link per pair with the total weight"
            )
        seen.add((a, b))
        weight = finite_number(link["weight"], f"weight of link {a!r} - {b!r}")
        if weight < 0:
            raise InvalidInputError(
                f"weight of link {a!r} - {b!r} must be positive, got {link['weight']!r} " + ZERO_WEIGHT
            )
        rows.append(users[a])
        cols.append(arms[b])
        weights.append(weight)
    return rows, cols, weights


def _link_ends(k: int, link: Any, users: dict[str, int], arms: dict[str, int]) -> tuple[str, str]:
    """The (user, arm) names link ``k`` joins, in either direction; the link must carry a ``weight``."""
    if not isinstance(link, dict) or not _is_name(link.get("source")) or not _is_name(link.get("target")):
        raise InvalidInputError(f"link {k} must be an object with node ids 'source' and 'target'")
    a, b = str(link["source"]), str(link["target"])
    if a in arms and b in users:
        a, b = b, a
    if a not in users or b not in arms:
        raise InvalidInputError(f"link {k} ({a!r} - {b!r}) must join a user node and an arm node")
    if "weight" not in link:
        raise InvalidInputError(f"link {a!r} - {b!r} has no 'weight'")
    return a, b


def decomposition_header(result: Decomposition, extra: dict | None = None) -> dict:
    """The output document without its assignments: C, method, R, lower bound, distinct count, extras."""
    head = {
        "C": result.C,
        "method": result.method,
        "total_assignments": result.total_assignments,
        "lower_bound": result.lower_bound,
        "distinct_assignments": result.n_distinct,
    }
    if len(result.uncovered):
        g = result.graph
        head["uncovered"] = [{"user": g.users[i], "arm": g.arms[j]} for i, j in result.uncovered]
    if "absence" in result.info:
        head.update(absence_header(result.graph, result.info))
    if result.info.get("capacity") is not None:
        cap = np.asarray(result.info["capacity"])
        uniform = cap.size and cap.min() == cap.max()
        head["capacity"] = int(cap[0]) if uniform else dict(zip(result.graph.arms, map(int, cap), strict=True))
    if "max_surplus_exposure" in result.info:
        head["max_surplus_exposure"] = int(result.info["max_surplus_exposure"])
    if "exposure" in result.info:
        head["exposure"] = dict(result.info["exposure"])
    return {**head, **(extra or {})}


def limits_from_header(header: dict, graph: DemandGraph, where: str) -> dict:
    """``{"capacity": ..., "max_surplus_exposure": ...}`` read from a decomposition file's header (the fields
    :func:`decomposition_header` writes), checked by the rules of :data:`~anondecomp.validation.RULES`; only
    those present. A per-arm capacity (``{arm: M}``) must name every arm of ``graph`` once; messages start with
    ``where``."""
    from anondecomp.validation import RULES

    out = {}
    try:
        if "capacity" in header:
            value = _one_per_name(header["capacity"], graph.arms, "capacity", "arm", "one capacity per arm")
            out["capacity"] = RULES["capacity"]("capacity", value, {"graph": graph})
        if "max_surplus_exposure" in header:
            value = header["max_surplus_exposure"]
            out["max_surplus_exposure"] = RULES["max_surplus_exposure"]("max_surplus_exposure", value, {})
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None
    return out


def _one_per_name(value: Any, names: tuple, field: str, kind: str, rule: str) -> Any:
    """``value`` as a list in the order of ``names`` when it is a ``{name: value}`` mapping that gives every name
    once and no other; any other ``value`` as it is (its rule checks it)."""
    if not isinstance(value, dict):
        return value
    unknown = sorted(set(value) - set(names))
    missing = [n for n in names if n not in value]
    if unknown or missing:
        what = f"names unknown {kind} {unknown[0]!r}" if unknown else f"does not give {kind} {missing[0]!r}"
        raise InvalidInputError(f"{field} {what} ({rule} of the graph)")
    return [value[n] for n in names]


def absence_header(graph: DemandGraph, info: dict) -> dict:
    """The header fields of a decomposition made for absent users (docs/formats.md): ``absence`` (a number, or
    ``{user: probability}`` with one per user), ``confidence``, ``robust_size`` (one absence for all) and
    ``at_risk_arms``."""
    given = info["absence"]
    absence = float(given) if np.ndim(given) == 0 else dict(zip(graph.users, map(float, given), strict=True))
    head: dict[str, Any] = {"absence": absence, "confidence": float(info["confidence"])}
    if info.get("robust_size") is not None:
        head["robust_size"] = int(info["robust_size"])
    head["at_risk_arms"] = list(info.get("at_risk_arms", ()))
    return head


def absence_from_header(header: dict, graph: DemandGraph, where: str) -> dict:
    """``{"absence": ..., "confidence": ...}`` read from a decomposition file's header (JSON fields or Parquet
    metadata), checked by the rules of :data:`~anondecomp.validation.RULES`; empty when the file has no
    ``absence``. A per-user absence must name every user of ``graph`` once; messages start with ``where``."""
    from anondecomp.validation import check_absence, check_confidence

    if "absence" not in header:
        return {}
    value, conf = header["absence"], header.get("confidence")
    try:
        value = _one_per_name(value, graph.users, "absence", "user", "one probability per user")
        absence = check_absence("absence", value, {"graph": graph})
        confidence = check_confidence("confidence", conf)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None
    return {"absence": absence, "confidence": confidence}


@checked()
def write_decomposition(result: Decomposition, path: str | os.PathLike, extra: dict | None = None) -> None:
    """Write a decomposition: compact Parquet for ``*.parquet`` paths and part directories, else JSON.

    Compact Parquet for ``*.parquet`` paths and part directories (``OUT/``; see :mod:`anondecomp.compact`),
    else JSON, streaming one assignment at a time. Written under a temporary name (:func:`atomic_open` for
    JSON): an interrupted or failed write leaves no partial output behind.

    Parameters
    ----------
    result : Decomposition
        The decomposition.
    path : str or os.PathLike
        The output file or directory.
    extra : dict, optional
        More header fields for the JSON document.

    Raises
    ------
    InvalidInputError
        If the path cannot be written (a directory where a file is wanted, a missing parent, ...).

    Examples
    --------
    >>> import json, tempfile, pathlib, numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.ones((4, 2), bool))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.json"
    >>> write_decomposition(anondecomp.decompose(g, C=1), path)
    >>> json.loads(path.read_text())["total_assignments"]
    10
    """
    try:
        _write(result, path, extra)
    except (FileNotFoundError, NotADirectoryError, PermissionError, IsADirectoryError) as exc:
        raise InvalidInputError(
            f"{path}: cannot write ({exc.strerror}"
            + (
                f": {Path(path).parent} does not exist"
                if isinstance(exc, FileNotFoundError) and not Path(path).parent.exists()
                else ""
            )
            + ")"
        ) from None


def _write(result: Decomposition, path: str | os.PathLike, extra: dict | None) -> None:
    if compact.is_compact_output(path):
        compact.write_compact(result, path, decomposition_header(result, extra))
        return
    g = result.graph
    # "user": "arm" text of every (user, arm) pair, so one assignment is a gather plus a join
    user_keys = np.array([json.dumps(u) + ": " for u in g.users], dtype=object)
    arm_vals = np.array([json.dumps(a) for a in g.arms], dtype=object)
    with atomic_open(path) as fh:
        head = json.dumps(decomposition_header(result, extra))
        fh.write(head[:-1] + ', "assignments": [')
        for r, (row, m) in enumerate(zip(result.assignments, result.multiplicities, strict=True)):
            pieces = user_keys + arm_vals[row]
            fh.write(
                ("," if r else "") + '\n  {"multiplicity": ' + str(int(m)) + ', "arms": {' + ", ".join(pieces) + "}}"
            )
        fh.write("\n]}\n")


def write_graph_table(graph: DemandGraph, path: str | os.PathLike, C: int | None = None) -> None:
    """Write ``graph`` as an edge table (docs/formats.md): Parquet for ``*.parquet`` / ``*.pq`` (``C`` in its
    metadata), else CSV; one row ``user, arm, weight`` per edge (weight 0: support without demand), never a users
    x arms array. Written under a temporary name and renamed when complete."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    users, arms = pa.array(graph.users, pa.string()), pa.array(graph.arms, pa.string())
    table = pa.table(
        {
            "user": users.take(np.asarray(graph.edge_users)),
            "arm": arms.take(np.asarray(graph.edge_arms)),
            "weight": np.asarray(graph.edge_weights),
        }
    )
    with atomic_open(path, binary=True) as fh:
        if Path(path).suffix.lower() in columnar.PARQUET_SUFFIXES:
            if C is not None:
                table = table.replace_schema_metadata({"C": json.dumps(int(C))})
            pq.write_table(table, fh)
        else:
            pacsv.write_csv(table, fh)


def check_writable(
    path: str | os.PathLike,
    what: str = "output",
    *,
    inputs=(),
    make_parents: bool = False,
    parts: bool = False,
    directory: bool = False,
) -> None:
    """Refuse, before any work, an output path that cannot be written or would replace an input file.

    Parameters
    ----------
    path : the output file.
    what : how the caller names it in messages (a command-line flag such as ``-o``).
    inputs : files the run reads; writing over one of them (same file after resolving ``.``, ``..`` and
        symbolic links, or a hard link to it) is refused.
    make_parents : the writer creates missing directories; check the nearest existing one instead.
    parts : the writer accepts a directory of Parquet part files (``OUT/``, see
        :func:`anondecomp.compact.is_directory_output`): it must be new or empty, in a writable directory.
    directory : the writer always writes a directory of part files here, whatever the name (a sharded
        decomposition, ``-o OUT.parquet --shards N``): checked as for ``parts``.

    Raises
    ------
    InvalidInputError naming ``what`` and the problem (see :func:`refuse_special` for paths that are not
    regular files). Writability is probed by creating (and removing) a
    hidden temporary file, since permission bits do not tell (root ignores them; /proc refuses anyway).
    """
    p = Path(path)
    refuse_special(path, what, directory_ok=parts or directory)
    if directory or (parts and compact.is_directory_output(path)):
        if p.exists() and (not p.is_dir() or any(p.iterdir())):
            raise InvalidInputError(
                f"{what} {path}: "
                + ("is not a directory" if not p.is_dir() else "directory is not empty")
                + "; Parquet part files go to a new or empty directory"
            )
    elif p.is_dir():
        raise InvalidInputError(
            f"{what} {path}: is a directory; give a file name"
            + (" (or end it with / for Parquet part files)" if parts else "")
        )
    output_target(path)  # a loop of symbolic links is refused here, in one line
    for src in inputs:
        if p.resolve() == Path(src).resolve() or (p.exists() and Path(src).exists() and p.samefile(src)):
            raise InvalidInputError(f"{what} {path} is the input file {src}; write the output elsewhere")
    parent = output_target(path).parent
    while make_parents and not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.exists():
        raise InvalidInputError(f"{what} {path}: directory {parent} does not exist")
    if not parent.is_dir():
        raise InvalidInputError(f"{what} {path}: {parent} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as exc:
        raise InvalidInputError(f"{what} {path}: cannot write there ({exc.strerror})") from None
    os.close(fd)
    os.unlink(probe)


@contextmanager
def atomic_open(path: str | os.PathLike, newline: str | None = None, *, binary: bool = False) -> Iterator[IO[Any]]:
    """Open ``path`` for writing under a temporary name, renamed into place on success.

    Text (UTF-8) unless ``binary``. An interrupted or failed write never leaves a partial file behind (the
    temporary file is removed). A path that is not a regular file is refused first
    (:func:`refuse_special`); a symbolic link is written through (:func:`output_target`).
    """
    refuse_special(path)
    path = output_target(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with (
            pending_output(tmp),
            os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh,
        ):
            yield fh
        os.chmod(tmp, 0o644 & ~umask())  # mkstemp makes 0600; give the usual permissions of a new file
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@checked()
def read_decomposition(path: str | os.PathLike, graph: DemandGraph) -> tuple[np.ndarray, np.ndarray, Any]:
    """Read a decomposition file (JSON or a compact Parquet schedule) against ``graph``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    graph : DemandGraph
        The graph it decomposes (user and arm names are resolved against it).

    Returns
    -------
    assignments : numpy.ndarray
        (n, N) arm indices.
    multiplicities : numpy.ndarray
        (n,) int64, or an object array of Python ints when one does not fit int64 (:func:`~anondecomp.verify`
        counts exactly either way).
    C : int or None
        The file's C, ``None`` when absent.

    Raises
    ------
    InvalidInputError
        For a missing or malformed file, or names that are not the graph's.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, anondecomp
    >>> g = anondecomp.DemandGraph.from_batched(10, np.ones((4, 2), bool))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.json"
    >>> write_decomposition(anondecomp.decompose(g, C=1), path)
    >>> assignments, multiplicities, C = read_decomposition(path, g)
    >>> assignments.shape, multiplicities.tolist(), C
    ((2, 4), [5, 5], 1)
    """
    a, m, C, _ = read_decomposition_document(path, graph)
    return a, m, C


def read_decomposition_document(
    path: str | os.PathLike, graph: DemandGraph
) -> tuple[np.ndarray, np.ndarray, Any, dict]:
    """:func:`read_decomposition` and the document's other fields (its header: method, absence, ...)."""
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("assignments"), list):
        raise InvalidInputError(f"{path}: a decomposition needs a list 'assignments'")
    C = c_field(doc, f"{path}: field 'C'")
    user_index = {u: i for i, u in enumerate(graph.users)}
    arm_index = {a: j for j, a in enumerate(graph.arms)}
    n = len(doc["assignments"])
    a = np.empty((n, graph.n_users), dtype=arm_dtype(graph.n_arms))
    mults: list[int] = []
    for r, item in enumerate(doc["assignments"]):
        if not isinstance(item, dict) or not isinstance(item.get("arms"), dict):
            raise InvalidInputError(f"{path}: assignment {r} needs an object 'arms' {{user: arm}}")
        mult = item.get("multiplicity", 1)
        if isinstance(mult, bool) or not isinstance(mult, int) or mult < 1:
            raise InvalidInputError(f"{path}: assignment {r} has multiplicity {mult!r:.40}; need a positive integer")
        mults.append(mult)
        arms = item["arms"]
        for user, arm in arms.items():
            if user not in user_index:
                raise InvalidInputError(f"{path}: assignment {r} names unknown user {user!r}")
            if not isinstance(arm, str) or arm not in arm_index:
                raise InvalidInputError(f"{path}: assignment {r} puts user {user!r} on unknown arm {arm!r:.40}")
        if len(arms) < graph.n_users:
            missing = next(u for u in graph.users if u not in arms)
            raise InvalidInputError(
                f"{path}: assignment {r} does not place user {missing!r} (assignments must list every user)"
            )
        a[r] = [arm_index[arms[u]] for u in graph.users]
    fits = all(m < 2**63 for m in mults)
    header = {k: v for k, v in doc.items() if k != "assignments"}
    return a, np.array(mults, dtype=np.int64 if fits else object), C, header
