"""The API reference builds (``make docs``: Sphinx with numpydoc, warnings as errors), and every object its
pages document carries what the docs promise: typed Parameters, Returns, Raises where it raises, Examples,
and References giving a paper's title and venue.

numpydoc's own checks (``numpydoc_validation_checks`` in docs/api/conf.py) fail the build on a missing or
untyped parameter, a missing Returns or Examples section; this file adds the two checks numpydoc lacks
(Raises and References) and checks that the pages list the whole public API of their modules.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
SPHINX_ARGS = ["-W", "--keep-going", "-b", "html", "docs/api", "build/docs"]
DIRECTIVE = re.compile(r"^\.\. auto(?:function|class|exception|method):: ([\w.]+)", re.M)
#: a References entry: authors, "title" in double quotes, then a venue and a year
CITATION = re.compile(r"\"[^\"]{10,}\",? [^\n]*?\b(?:19|20)\d\d\b")
#: modules that implement no paper's formula, so need no References
NO_PAPER = {"anonbandits.errors", "anondecomp.errors", "anondecomp.io"}


def _documented() -> list[str]:
    return sorted({name for page in API.glob("*.rst") for name in DIRECTIVE.findall(page.read_text())})


def _resolve(dotted: str):
    """(defining module, object) of a dotted name such as ``anondecomp.DemandGraph.from_batched``."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return sys.modules[obj.__module__], obj
    raise ImportError(dotted)


def test_sphinx_and_numpydoc_are_installed():
    """``make test`` installs them through the test extra; without them the API reference cannot build."""
    import numpydoc  # noqa: F401
    import sphinx  # noqa: F401


def test_make_docs_runs_the_build_this_file_checks():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^docs: .*\n\t(.*)$", makefile, re.M).group(1)
    assert recipe.split()[1:] == ["-m", "sphinx", *SPHINX_ARGS], recipe


@pytest.mark.slow
def test_the_api_reference_builds_with_warnings_as_errors(tmp_path):
    args = [*SPHINX_ARGS[:-1], str(tmp_path / "html")]
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", *args, "-d", str(tmp_path / "doctrees")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "html" / "privacy.html").exists()


def _raises(function, module, depth: int = 2) -> bool:
    """Whether ``function`` raises on purpose: a ``raise``, or a call of ``require`` or of a module-level helper
    that does (followed ``depth`` calls deep)."""
    source = textwrap.dedent(inspect.getsource(function))
    if re.search(r"\braise\b|\brequire\(", source.split('"""')[-1]):
        return True
    if depth == 0:
        return False
    called = {
        node.func.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return any(
        _raises(helper, module, depth - 1)
        for name in called
        if inspect.isfunction(helper := getattr(module, name, None)) and helper.__module__ == module.__name__
    )


@pytest.mark.parametrize("dotted", _documented())
def test_documented_object_has_raises_references_and_examples(dotted):
    from numpydoc.docscrape import ClassDoc, FunctionDoc

    module, obj = _resolve(dotted)
    doc = ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj)
    assert doc["Examples"], f"{dotted}: no Examples"
    for param in doc["Parameters"]:
        assert param.type, f"{dotted}: parameter {param.name} has no type"
    if inspect.isroutine(obj) and _raises(obj, module):
        assert doc["Raises"], f"{dotted} raises but has no Raises section"
    if module.__name__ not in NO_PAPER:
        assert CITATION.search(" ".join(doc["References"])), f"{dotted}: no References with a title and venue"


@pytest.mark.parametrize(
    "module_name",
    [
        "anondecomp",
        "anonbandits.privacy",
        "anonbandits.errors",
        "anonbandits.channels",
        "anonbandits.core",
        "anonbandits.anonymous",
        "anonbandits.core.learners",
        "anonbandits.core.indices",
        "anonbandits.core.regret",
        "anonbandits.core.votes",
        "anonbandits",
        "anonbandits.registry",
        "anonbandits.spec",
        "anonbandits.results",
        "anonbandits.validation",
        "anonbandits.vocabulary",
        "anonbandits.envs",
        "anonbandits.experiments",
        "anonbandits.dp",
        "anonbandits.dp.distributed",
        "anonbandits.multiagent.mase",
        "anonbandits.multiagent.decentralized",
    ],
)
def test_pages_list_every_public_object_of_their_module(module_name):
    module = importlib.import_module(module_name)
    public = getattr(module, "__all__", None) or [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module_name
    ]
    documented = set(_documented())
    missing = [
        name
        for name in public
        if f"{module_name}.{name}" not in documented
        and (inspect.isfunction(getattr(module, name)) or inspect.isclass(getattr(module, name)))
    ]
    assert not missing, f"{module_name}: not on the API pages: {missing}"


@pytest.mark.parametrize(
    "module_name",
    [
        "anonbandits.privacy.samplers",
        "anonbandits.privacy.tails",
        "anonbandits.privacy.rounding",
        "anonbandits.privacy.aggregation",
        "anonbandits.privacy.accounting",
    ],
)
def test_the_privacy_package_exports_and_documents_every_public_object_of_its_modules(module_name):
    """The pages document these modules' functions under the package's names (``anonbandits.privacy.polya``):
    each must be exported by the package, as the same object, and be on the pages."""
    package = importlib.import_module("anonbandits.privacy")
    module = importlib.import_module(module_name)
    public = [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module_name
    ]
    assert public
    documented = set(_documented())
    missing = [
        name
        for name in public
        if name not in package.__all__
        or getattr(package, name) is not getattr(module, name)
        or f"anonbandits.privacy.{name}" not in documented
    ]
    assert not missing, f"{module_name}: not exported by anonbandits.privacy or not on the API pages: {missing}"
    assert f".. automodule:: {module_name}\n" in (API / "privacy.rst").read_text()


_CLASS_OPTIONS = re.compile(r"^\.\. auto(?:class|exception):: ([\w.]+)\n((?:[ \t]+:[^\n]*\n)*)", re.M)


def _methods() -> list[str]:
    """Every public method a documented class defines itself (properties aside)."""
    out = []
    for dotted in _documented():
        _, obj = _resolve(dotted)
        if not inspect.isclass(obj):
            continue
        for name, member in vars(obj).items():
            function = member.__func__ if isinstance(member, classmethod | staticmethod) else member
            if not name.startswith("_") and inspect.isfunction(function):
                out.append(f"{dotted}.{name}")
    return sorted(set(out))


@pytest.mark.parametrize("dotted", _methods())
def test_public_methods_of_documented_classes_are_numpydoc(dotted):
    """The methods of a class on the pages are public API too: typed Parameters for every argument, Raises
    where they raise, and a checked example; the pages render them (``:members:``), so numpydoc validates them."""
    from numpydoc.docscrape import FunctionDoc

    module, method = _resolve(dotted)
    doc = FunctionDoc(method)
    arguments = [p for p in inspect.signature(method).parameters if p not in ("self", "cls")]
    documented = {name.strip() for param in doc["Parameters"] for name in param.name.split(",")}
    missing = set(arguments) - documented - {"args", "kwargs"}
    assert not missing, f"{dotted}: undocumented {sorted(missing)}"
    assert all(param.type for param in doc["Parameters"]), f"{dotted}: a parameter has no type"
    assert doc["Examples"], f"{dotted}: no Examples"
    if _raises(method, module):
        assert doc["Raises"], f"{dotted} raises but has no Raises section"
    owner, _, name = dotted.rpartition(".")
    cls = _resolve(owner)[1]
    pages = "".join(page.read_text() for page in API.glob("*.rst"))
    # rendered by an automethod line, or in the :members: of its class (maybe on the page under another name)
    rendered = f".. automethod:: {dotted}\n" in pages or any(
        (members := re.search(r":members:([^\n]*)", options))
        and _resolve(directive)[1] is cls
        and name in re.split(r"[\s,]+", members.group(1))
        for directive, options in _CLASS_OPTIONS.findall(pages)
    )
    assert rendered, f"{dotted}: not on the pages (:members: or automethod)"
