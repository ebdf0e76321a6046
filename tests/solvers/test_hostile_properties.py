"""Generated misuse of every public callable of ``anondecomp`` (issue 31, item 8).

Each callable of ``anondecomp.__all__`` has a valid baseline call in :data:`BASELINES`; hypothesis replaces one
argument with a hostile value (wrong types, shapes, NaN, infinities, extremes, bools, strings, duplicates).
The call must either raise an :class:`anondecomp.AnonDecompError` (an :class:`anondecomp.InvalidInputError`
naming the argument), or return a result that passes the exact verifier and the documented invariants. No
other exception type may escape.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anondecomp
from anondecomp import AnonDecompError, Decomposition, DemandGraph, InvalidInputError


@pytest.fixture(autouse=True, scope="module")
def _in_a_scratch_directory(tmp_path_factory):
    """Hostile arguments include file names ('0', 'abc', 'auto'): whatever a call writes goes to a scratch
    directory, never into the work tree."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("hostile"))
    yield
    os.chdir(here)


GRAPH = DemandGraph.from_batched(6, np.array([[1, 1], [1, 0], [0, 1], [1, 1], [1, 1], [1, 1]], bool))
RESULT = anondecomp.decompose(GRAPH, 1)
POINT = np.full((4, 2), 0.5)

# name -> (positional args, keyword args) of a valid call; every public callable must have one
BASELINES: dict[str, tuple[tuple, dict]] = {
    "DemandGraph": ((np.array([[2.0, 1.0], [1.0, 0.0]]), np.array([[2, 1], [1, 0]]), ["u", "v"], ["a", "b"]), {}),
    "DemandGraph.from_weights": (([[2.0, 1.0], [1.0, 3.0]],), {"users": ["u", "v"], "arms": ["a", "b"]}),
    "DemandGraph.from_batched": ((10, np.ones((4, 2), bool)), {"users": None, "arms": None}),
    "Decomposition": ((GRAPH, 1, "polytope", RESULT.assignments, RESULT.multiplicities), {}),
    "decompose": ((GRAPH, 1), {"method": "auto", "best_effort": False, "absence": 0.3, "confidence": 0.9}),
    "verify": (
        (GRAPH, 1, RESULT.assignments, RESULT.multiplicities),
        {"required": None, "best_effort": False, "absence": None, "confidence": None},
    ),
    "replan": ((GRAPH, RESULT, np.zeros((6, 2), int)), {"absence": 0.3, "confidence": 0.9, "method": "auto"}),
    "robust_group_size": ((2, 0.2), {"confidence": 0.9}),
    "coverage": ((RESULT.assignments, RESULT.multiplicities, 1, 2), {}),
    "lp_lower_bound": ((GRAPH, 1), {"seed": None, "best_effort": False, "time_limit": 5.0}),
    "membership": ((POINT, 1), {"S": None}),
    "check_membership": ((POINT, 1), {"S": None, "tol": 1e-9}),
    "caratheodory": ((POINT, 1), {"S": None}),
    "check_u_batched": ((np.ones((4, 2), bool), 2), {}),
    "method_info": (("greedy",), {}),
    "beta": ((GRAPH, 1), {"method": "auto", "sense": "dominate", "time_limit": 5.0}),
    "read_graph": (("PATH_GRAPH",), {"demand": None}),
    "read_decomposition": (("PATH_DECOMPOSITION", GRAPH), {}),
    "write_decomposition": ((RESULT, "PATH_OUT"), {"extra": None}),
    # a log of 12 interactions in two hours: 6 users on items a and b (anondecomp.read_log's result)
    "stream_windows": (
        (
            anondecomp.InteractionLog(
                "log.csv",
                np.arange(12) * 600.0,
                np.arange(12) % 6,
                np.arange(12) % 2,
                np.ones(12),
                np.array([f"u{i}" for i in range(6)], object),
                np.array(["a", "b"], object),
                False,
            ),
            1,
            "1h",
        ),
        {"step": "30min", "tolerance": 0.02, "fallback": True, "cold": False},
    ),
    "read_log": (("PATH_LOG",), {}),
    "write_stream": (("PATH_LOG", "PATH_OUT", 1, "1h"), {"step": None, "tolerance": 0.02, "progress": None}),
    # the public functions of anondecomp.exposure (a submodule, reached as anondecomp.exposure)
    "exposure.exposures": ((RESULT,), {}),
    "exposure.exposure_bounds": ((GRAPH, 1), {}),
}
CARATHEODORY = anondecomp.caratheodory(POINT, 1)
BETA = anondecomp.beta(GRAPH, 1)
REPORT = anondecomp.verify(GRAPH, 1, RESULT)
# public methods of the results and of the graph: name -> the bound method (its baseline is in BASELINES)
BOUND = {
    "CaratheodoryResult.vertex_matrix": CARATHEODORY.vertex_matrix,
    "CaratheodoryResult.reconstruct": CARATHEODORY.reconstruct,
    "BetaResult.lemma3_bound": BETA.lemma3_bound,
    "VerificationReport.summary": REPORT.summary,
    "DemandGraph.thin_arms": GRAPH.thin_arms,
    "DemandGraph.tocsr": GRAPH.tocsr,
    "DemandGraph.arm_names": GRAPH.arm_names,
    "DemandGraph.normalized": GRAPH.normalized,
    "DemandGraph.toarray": GRAPH.toarray,
    "Decomposition.summary": RESULT.summary,
}
BASELINES.update(
    {
        "CaratheodoryResult.vertex_matrix": ((0, 2), {}),
        "CaratheodoryResult.reconstruct": ((2,), {}),
        "BetaResult.lemma3_bound": ((GRAPH,), {}),
        "VerificationReport.summary": ((), {"limit": 5}),
        "DemandGraph.thin_arms": ((1,), {}),
        "DemandGraph.tocsr": (("required",), {}),
        "DemandGraph.arm_names": (([1, 0],), {}),
        "DemandGraph.normalized": ((), {}),
        "DemandGraph.toarray": ((), {}),
        "Decomposition.summary": ((), {}),
    }
)
NOT_CALLED = {
    "AnonDecompError",
    "AnonDecompWarning",
    "InfeasibleError",
    "InvalidInputError",
    "InvalidTypeError",
    "MethodNotApplicableError",
    "SolverError",  # the error family itself
    "METHODS",
    "METHOD_TABLE",  # data, not callables
    "BetaResult",
    "CaratheodoryResult",
    "LPBound",
    "Membership",
    "Method",
    "VerificationReport",
    "InteractionLog",
    "StreamWindow",
}
# results, built by the functions above (their constructors hold what a function computed)

HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.just(np.bool_(True)),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([0, -1, 2**53 + 1, 2**64, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 2.5, -0.5]),
    st.just(np.float16(10)),
    st.complex_numbers(max_magnitude=10),
    st.text(max_size=4),
    st.sampled_from(["2", "abc", "no", "", "auto"]),
    st.just(["auto"]),
    st.just({"a": 1}),
    st.just(object()),
    st.just(np.array([[np.nan, 1.0], [1.0, 0.5]])),
    st.just(np.array([[-1, 1], [1, 1]])),
    st.just(np.array([["1", "0"]])),
    st.just(np.zeros((0, 2))),
    st.just(np.ones((2, 2, 2))),
    st.just(np.array([1.7, 2.0])),
    st.just(np.full((1, 6), 7)),
    st.just(["u", "u"]),
    st.just([None, "v"]),
    st.just([[1, 2], [3]]),
    st.just(np.array([[True, False]])),
    st.just(np.array([1j, 2j])),
)

ALIASES = {
    "demand": ("demand",),
    "users": ("user",),
    "arms": ("arm",),
    "x": ("x", "point"),
    "assignments": ("assignment",),
    "multiplicities": ("multiplicit",),
    "weights": ("weight",),
    "active": ("active",),
    "graph": ("graph",),
    "result": ("result",),
    "path": ("path",),
    "received": ("received",),
    "plan": ("plan",),
    "absence": ("absence",),
    "confidence": ("confidence",),
    "outdir": ("outdir", "-o"),
    "log": ("log",),
}


def _resolve(name: str):
    if name in BOUND:
        return BOUND[name]
    obj = anondecomp
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def public_methods() -> set[str]:
    """``Class.method`` for every method without a leading underscore (classmethods and staticmethods included)
    that a class of ``anondecomp.__all__`` defines or inherits from the package (not from ``object`` or
    ``Exception``)."""
    found = set()
    for name in anondecomp.__all__:
        cls = getattr(anondecomp, name)
        if not inspect.isclass(cls):
            continue
        for attr, member in inspect.getmembers(cls):
            fn = getattr(member, "__func__", member)
            if not attr.startswith("_") and inspect.isfunction(fn) and fn.__module__.startswith("anondecomp"):
                found.add(f"{name}.{attr}")
    return found


def test_every_public_callable_has_a_strategy():
    public = {name for name in anondecomp.__all__ if callable(getattr(anondecomp, name))}
    covered = {name.split(".")[0] for name in BASELINES} | NOT_CALLED
    missing = sorted(public - covered)
    assert not missing, f"public callables without a hostile-argument strategy: {missing}"
    for name in BASELINES:
        assert callable(_resolve(name)), name


def test_every_public_method_has_a_strategy():
    methods = public_methods()
    assert {"Decomposition.summary", "DemandGraph.arm_names", "DemandGraph.from_batched"} <= methods
    missing = sorted(methods - set(BASELINES))
    assert not missing, f"public methods without a hostile-argument strategy: {missing}"


def _paths(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("hostile")
    graph = root / "g.json"
    graph.write_text(
        '{"demand": 6, "active_sets": {"u0": ["a", "b"], "u1": ["a"], "u2": ["b"], '
        '"u3": ["a", "b"], "u4": ["a", "b"], "u5": ["a", "b"]}}'
    )
    decomposition = root / "d.json"
    g, _ = anondecomp.read_graph(graph)
    anondecomp.write_decomposition(anondecomp.decompose(g, 1), decomposition)
    log = root / "log.csv"
    log.write_text("user,item,timestamp\n" + "".join(f"u{k % 6},{'ab'[k % 2]},{600 * k}\n" for k in range(12)))
    return {
        "PATH_GRAPH": str(graph),
        "PATH_DECOMPOSITION": str(decomposition),
        "PATH_OUT": str(root / "out.json"),
        "PATH_LOG": str(log),
    }


def _check_result(name: str, out, bound: dict) -> None:
    """The documented invariants of a result returned for hostile arguments."""
    if isinstance(out, Decomposition):  # built by hand: its structure only (coverage is verify's)
        assert out.assignments.shape == (len(out.multiplicities), out.graph.n_users)
        assert (
            name == "Decomposition"
            or anondecomp.verify(out.graph, out.C, out, best_effort=bool(len(out.uncovered))).valid
        )
        assert not out.assignments.flags.writeable and not out.multiplicities.flags.writeable
    elif isinstance(out, DemandGraph):
        assert (out.edge_weights >= 0).all() and np.isfinite(out.edge_weights).all()
        assert (out.edge_required >= np.floor(out.edge_weights)).all()
        assert (out.edge_required <= np.ceil(out.edge_weights)).all()
        assert len(set(out.users)) == out.n_users and len(set(out.arms)) == out.n_arms
    elif isinstance(out, anondecomp.VerificationReport):
        assert isinstance(out.valid, bool)
    elif isinstance(out, anondecomp.LPBound):
        assert out.value >= 0
    elif isinstance(out, anondecomp.Membership):
        assert isinstance(out.member, bool)
    elif name == "DemandGraph.arm_names":  # never a wrapped or truncated index: names of the graph's arms
        assert isinstance(out, list) and set(out) <= set(GRAPH.arms)


@pytest.mark.parametrize("name", sorted(BASELINES))
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_hostile_argument_is_refused_or_gives_a_valid_result(name, data, tmp_path_factory):
    fn = _resolve(name)
    args, kwargs = BASELINES[name]
    paths = _paths(tmp_path_factory) if name.startswith(("read_", "write_")) else {}
    args = [paths.get(a, a) if isinstance(a, str) else a for a in args]
    slots = [("arg", k) for k in range(len(args))] + [("kw", k) for k in kwargs]
    # a callable without arguments gets one it does not take: refused naming the callable
    where, key = data.draw(st.sampled_from(slots or [("extra", 0)]), label="slot")
    value = data.draw(HOSTILE, label="value")
    kwargs = dict(kwargs)
    if where == "extra":
        args.append(value)
        param = name.rsplit(".", 1)[-1]
    elif where == "arg":
        args[key] = value
        params = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
        param = params[key]
    else:
        kwargs[key] = value
        param = key
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args, **kwargs)
    except AnonDecompError as exc:
        message = str(exc)
        assert "\n" not in message.strip(), message
        if isinstance(exc, InvalidInputError):
            others = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
            names = (param, *ALIASES.get(param, ()), *(a for p in others for a in (p, *ALIASES.get(p, ()))))
            assert any(re.search(re.escape(n), message, re.IGNORECASE) for n in names) or name.startswith("read_"), (
                f"{name}: {param}={value!r}: {message}"
            )
        return
    _check_result(name, out, kwargs)
