"""The bandit layer's modules import in one direction: no import cycle anywhere in ``src/anonbandits`` (counting
imports inside functions, under ``if TYPE_CHECKING:`` and ``importlib.import_module("...")``), the families
below the registry, and the old import paths of moved names still working, with a warning naming the new one.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import anonbandits

PACKAGE = Path(anonbandits.__file__).resolve().parent

#: The packages and modules of the families and of what they build on: none may import the registry.
BELOW_THE_REGISTRY = (
    "anonbandits.anonymous",
    "anonbandits.dp",
    "anonbandits.multiagent",
    "anonbandits.channels",
    "anonbandits.core",
    "anonbandits.envs",
    "anonbandits.privacy",
    "anonbandits.channel_params",
    "anonbandits.channel_flags",
    "anonbandits.spec",
    "anonbandits.results",
    "anonbandits.validation",
    "anonbandits.errors",
    "anonbandits._docstrings",
    "anonbandits._deprecated",
    "anonbandits.reference",
)


def _modules() -> dict[str, Path]:
    """Every module of the bandit layer: dotted name -> path."""
    out = {}
    for root, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = Path(root, name)
                parts = ["anonbandits", *path.relative_to(PACKAGE).with_suffix("").parts]
                out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _ancestors(module: str) -> list[str]:
    """``a`` and ``a.b`` for ``a.b.c``: the packages Python imports before the module itself."""
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def _targets(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(module of the bandit layer, line) of every import in the file: ``import``/``from ... import`` at module
    level, inside a function or under ``if TYPE_CHECKING:``, and ``importlib.import_module`` of a literal
    string. Relative imports are resolved; ``from package import module`` imports the module, ``from module
    import name`` the module itself (its namespace)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from . import x, from ..core import y
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((sub if sub in modules else base, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "import_module")
            )
        ):
            out.append((node.args[0].value, node.lineno))
    return [(target, line) for target, line in out if target.split(".")[0] == "anonbandits"]


def _graph() -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line}. Importing ``a.b.c`` imports ``a`` and ``a.b`` first, except
    the importer's own packages: Python has imported those before the importer runs (a package's
    ``__init__`` importing a submodule is no cycle), unless it imports from one of them by name. The registry
    also imports every family of its ``_FAMILIES`` by name (line 0: not a literal in an import)."""
    from anonbandits import registry

    modules = _modules()
    graph: dict[str, dict[str, int]] = {m: {} for m in modules}
    for module, path in modules.items():
        own = set(_ancestors(module))
        by_name = [(family, 0) for family in registry._FAMILIES] if module == "anonbandits.registry" else []
        for target, line in [*_targets(module, path, modules), *by_name]:
            for imported in [*(a for a in _ancestors(target) if a not in own), target]:
                if imported in modules and imported != module:
                    graph[module].setdefault(imported, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def _path(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    """One cycle through the component, written ``a (line) -> b (line) -> ... -> a``."""
    inside = set(component)
    start = component[0]
    trail, seen, v = [start], {start}, start
    while True:
        v = next(
            w
            for w in sorted(graph[v])
            if w in inside and (w == start or w not in seen) and (w == start or _reaches(graph, w, start, inside))
        )
        trail.append(v)
        if v == start:
            break
        seen.add(v)
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(trail, trail[1:], strict=False)) + f" -> {start}"


def _reaches(graph: dict[str, dict[str, int]], source: str, target: str, inside: set[str]) -> bool:
    todo, seen = [source], {source}
    while todo:
        v = todo.pop()
        if target in graph[v]:
            return True
        for w in graph[v]:
            if w in inside and w not in seen:
                seen.add(w)
                todo.append(w)
    return False


def test_the_graph_sees_every_kind_of_import():
    """The walker finds what the test relies on: deferred, TYPE_CHECKING and relative imports, and the parent
    packages of an import."""
    graph = _graph()
    assert "anonbandits.envs.instances" in graph["anonbandits.channels.direct"]  # under if TYPE_CHECKING:
    assert "anonbandits.dp.hybrid_loop" in graph["anonbandits.dp.hybrid_kernel"]  # inside a function
    assert "anonbandits.anonymous.entries" in graph["anonbandits.dp"]  # inside a function
    assert "anonbandits.anonymous" in graph["anonbandits.dp"]  # the parent package of a module it imports
    assert "anonbandits" not in graph["anonbandits.dp"]  # its own package, imported before it
    assert "anonbandits.registry" in graph["anonbandits"]
    assert "anonbandits.multiagent.mase" in graph["anonbandits.registry"]  # by name, from _FAMILIES


def test_the_walker_resolves_relative_imports_and_import_module(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nimport importlib\nfrom .. import envs\n"
        "from ..core import schedules, GRIDS\nfrom . import protocols\nfrom .mechanisms import x\n"
        "if TYPE_CHECKING:\n    import anonbandits.dp.common as c\n"
        "def f():\n    importlib.import_module('anonbandits.privacy')\n    import numpy\n"
    )
    modules = _modules()
    found = _targets("anonbandits.channels.probe", source, modules)
    assert found == [
        ("anonbandits.envs", 3),
        ("anonbandits.core.schedules", 4),
        ("anonbandits.core", 4),
        ("anonbandits.channels.protocols", 5),
        ("anonbandits.channels.mechanisms", 6),
        ("anonbandits.dp.common", 8),
        ("anonbandits.privacy", 10),
    ]


def test_no_import_cycle_anywhere_in_the_bandit_layer():
    graph = _graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_path(graph, c) for c in cycles)


def test_the_families_never_import_the_registry():
    graph = _graph()
    below = [m for m in graph if any(m == p or m.startswith(p + ".") for p in BELOW_THE_REGISTRY)]
    assert "anonbandits.dp.distributed.elimination" in below and "anonbandits.spec" in below
    bad = [
        f"{m} (line {graph[m][t]}) imports {t}"
        for m in below
        for t in graph[m]
        if t in ("anonbandits.registry", "anonbandits")
    ]
    assert not bad, "\n".join(bad)


#: (old module, name, new module) of every name that moved; the old path works for one release, with a warning
MOVED = [
    *[
        ("anonbandits.registry", name, "anonbandits.spec")
        for name in ("Param", "AlgorithmSpec", "parse_bool", "DeprecatedParameterWarning")
    ],
    ("anonbandits.registry", "Result", "anonbandits.results"),
    ("anonbandits.dp.elimination", "parse_confidence", "anonbandits.core.schedules"),
    *[
        (old, name, "anonbandits.privacy.protocols")
        for old in ("anonbandits.dp.distributed.protocols", "anonbandits.channels.protocols")
        for name in (
            "PROTOCOLS",
            "BatchParams",
            "Release",
            "Protocol",
            "ShuffleProtocol",
            "CentralProtocol",
            "LocalProtocol",
            "SkellamProtocol",
            "DiscreteGaussianProtocol",
            "COMPLETE_MASKING_MAX_USERS",
            "RING_DEGREE",
            "SPLIT_SHARES",
        )
    ],
    *[
        ("anonbandits.channels.mechanisms", name, "anonbandits.privacy.mechanisms")
        for name in (
            "REAL_ORDERS",
            "NoisyRelease",
            "laplace_noise",
            "CentralLaplace",
            "Distributed",
            "Mechanism",
            "guarantee",
        )
    ],
    *[
        ("anonbandits.channel_flags", name, "anonbandits.channel_params")
        for name in (
            "ANONYMOUS_ONLY",
            "DIRECT_ONLY",
            "EPOCH_CHANNEL",
            "INSTANCE_PARAMS",
            "PRIVACY_PARAMS",
            "SHARES",
            "epoch_params",
            "parse_epsilon",
        )
    ],
    *[
        ("anonbandits.anonymous.specs", name, "anonbandits.anonymous.entries")
        for name in (
            "ALGORITHMS",
            "BAI_INSTANCE",
            "BAI_PARAMS",
            "BATCHED_PARAMS",
            "ETC_PARAMS",
            "run_bai",
            "run_batched",
            "run_epochs",
            "run_etc",
        )
    ],
    *[
        ("anonbandits.anonymous.specs", name, "anonbandits.channel_params")
        for name in ("DIRECT_ONLY", "INSTANCE_PARAMS", "PRIVACY_PARAMS", "SHARES")
    ],
    ("anonbandits.dp.common", "Ledger", "anonbandits.dp.ledger"),
    ("anonbandits.dp.common", "RegretTrace", "anonbandits.core.regret"),
    ("anonbandits.dp.common", "RewardSum", "anonbandits.channels.direct"),
    *[
        ("anonbandits.dp.common", name, "anonbandits.dp.runs")
        for name in ("Means", "check_epsilon", "check_setup", "finish", "instance_of", "start")
    ],
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_an_old_path_still_gives_the_same_object_with_a_warning_naming_the_new_one(old, name, new):
    moved = getattr(importlib.import_module(new), name)
    with pytest.warns(DeprecationWarning, match=rf"^{old}\.{name} is deprecated, import it from {new} ") as caught:
        found = getattr(importlib.import_module(old), name)
    assert found is moved
    assert caught[0].filename == __file__  # the warning points at the line using the old path
    namespace: dict = {}
    with pytest.warns(DeprecationWarning, match=new):
        exec(f"from {old} import {name}", namespace)  # the import statement's own path
    assert namespace[name] is moved
    assert name not in vars(importlib.import_module(old))  # no copy left behind: every use goes through the warning


#: (old module, name, what replaces it) of every name deprecated without a new home of the same name
RENAMED = [("anonbandits.channel_flags", "EPOCH_DECOMPOSER", "anonbandits.channel_params", "DECOMPOSER")]


@pytest.mark.parametrize(("old", "name", "new", "new_name"), RENAMED)
def test_a_renamed_name_still_gives_the_new_object_with_a_warning_naming_it(old, name, new, new_name):
    renamed = getattr(importlib.import_module(new), new_name)
    with pytest.warns(DeprecationWarning, match=rf"^{old}\.{name} is deprecated, use {new}\.{new_name} ") as caught:
        found = getattr(importlib.import_module(old), name)
    assert found is renamed and caught[0].filename == __file__
    assert name not in vars(importlib.import_module(old))


def test_the_renamed_modules_import_silently_and_warn_at_each_name():
    """``anonymous.specs`` (now ``entries``: registry entries) and ``channel_flags`` (now ``channel_params``: library
    parameters) are shims: importing them warns nothing (the project imports every module), reading a name does."""
    code = "\n".join(
        [
            "import warnings",
            "warnings.simplefilter('error', DeprecationWarning)",
            "import anonbandits.anonymous.specs as s, anonbandits.channel_flags as f",
            "warnings.simplefilter('ignore', DeprecationWarning)",
            "from anonbandits.anonymous import entries",
            "from anonbandits import channel_params",
            "assert s.ALGORITHMS is entries.ALGORITHMS and f.epoch_params is channel_params.epoch_params",
        ]
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


#: (old module, name) of every result type the one ``Result`` replaced: still found for one release, with a warning
REPLACED_BY_RESULT = [
    ("anonbandits.dp", "BanditRun"),
    ("anonbandits.dp.common", "BanditRun"),
    ("anonbandits.dp.distributed", "EliminationResult"),
    ("anonbandits.dp.distributed.elimination", "EliminationResult"),
]


@pytest.mark.parametrize(("old", "name"), REPLACED_BY_RESULT)
def test_a_replaced_result_type_still_works_with_a_warning_naming_result(old, name):
    with pytest.warns(DeprecationWarning, match=rf"^{old}\.{name} is deprecated, use anonbandits\.Result ") as caught:
        found = getattr(importlib.import_module(old), name)
    assert caught[0].filename == __file__
    assert isinstance(found, type) and name not in vars(importlib.import_module(old))


#: the public names of the module ``anonbandits.privacy`` before it became a package, and the module of the package
#: that holds each now: ``from anonbandits.privacy import X`` still gives every one, without a warning
PRIVACY_NAMES = {
    "samplers": (
        "Size",
        "laplace",
        "discrete_laplace",
        "polya",
        "skellam",
        "discrete_gaussian",
        "discrete_gaussian_pmf",
        "discrete_gaussian_sum",
    ),
    "tails": (
        "discrete_laplace_tail",
        "discrete_laplace_radius",
        "skellam_radius",
        "subgaussian_radius",
        "discrete_laplace_sum_radius",
    ),
    "rounding": ("randomized_round",),
    "aggregation": (
        "secure_sum",
        "complete_pairs",
        "ring_pairs",
        "masked_messages",
        "split_and_mix",
        "modulus",
        "analyze",
    ),
    "accounting": (
        "DEFAULT_ORDERS",
        "skellam_rdp",
        "dist_rdp_se_rdp",
        "discrete_gaussian_sum_xi",
        "discrete_gaussian_sum_cdp",
        "rdp_to_dp",
        "zcdp_to_dp",
        "pure_dp_to_rdp",
        "advanced_composition_epsilon",
        "returning_users_dp",
    ),
}


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in PRIVACY_NAMES.items() for n in names])
def test_the_privacy_package_gives_every_name_of_the_old_module_from_its_own_module(module, name):
    import anonbandits.privacy as privacy

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = getattr(privacy, name)
    assert found is getattr(importlib.import_module(f"anonbandits.privacy.{module}"), name)
    assert name in privacy.__all__


def test_the_privacy_package_sits_below_the_families():
    """The privacy package imports only what is below every family (core, errors, validation, the docstring
    helpers and itself): never a family, a channel or the registry."""
    graph = _graph()
    allowed = (
        "anonbandits.privacy",
        "anonbandits.core",
        "anonbandits.errors",
        "anonbandits.validation",
        "anonbandits._docstrings",
    )
    bad = [
        f"{m} (line {graph[m][t]}) imports {t}"
        for m in graph
        if m == "anonbandits.privacy" or m.startswith("anonbandits.privacy.")
        for t in graph[m]
        if not any(t == a or t.startswith(a + ".") for a in allowed)
    ]
    assert not bad, "\n".join(bad)


def test_an_unknown_name_of_an_old_module_is_still_an_attribute_error():
    from anonbandits import registry

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        registry.Nope  # noqa: B018


def test_the_public_paths_and_the_project_itself_warn_nothing():
    """``from anonbandits import Result`` and the new paths are silent, and so is importing every module of the
    layer and a run of every family (in a fresh interpreter, where each module's import runs)."""
    code = "\n".join(
        [
            "import importlib, warnings",
            "warnings.simplefilter('error', DeprecationWarning)",
            "from anonbandits import Result, simulate",
            "from anonbandits.spec import AlgorithmSpec, DeprecatedParameterWarning, Param, parse_bool",
            "from anonbandits.results import Result as R",
            "from anonbandits.core.schedules import parse_confidence",
            "from anonbandits.privacy.protocols import PROTOCOLS",
            "from anonbandits.privacy.mechanisms import CentralLaplace, Distributed, guarantee",
            f"from anonbandits.privacy import {', '.join(PRIVACY_NAMES)}",
            "from anonbandits import registry",
            f"for m in {sorted(_modules())!r}:",
            "    importlib.import_module(m)",
            "assert R is Result and registry.get('se').resolve({})['horizon'] > 0",
            "assert simulate('dp-se', seed=0, horizon=1000).metrics['regret'] >= 0",
            "assert simulate('anon-etc', seed=0, users=20, arms=2, C=2, horizon=2000, privacy='distributed',"
            " epsilon=1.0).metrics['privacy_epsilon'] > 0",
        ]
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
