"""Sphinx configuration of the API reference (``make docs``: html in build/docs, warnings as errors).

The pages list the public API by hand (``autofunction`` / ``autoclass``), and numpydoc validates every object
they document: a missing or untyped parameter, a missing Returns or Examples section is a warning, and
``-W`` makes it an error. tests/test_api_docs.py builds the same pages and also requires Raises and
References sections, which numpydoc has no check for.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "solvers")]

project = "anonbandits"
author = "the anonbandits developers"
extensions = ["sphinx.ext.autodoc", "numpydoc"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
autodoc_typehints = "none"  # the types are written in the numpydoc Parameters / Returns sections
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
#: GL08 no docstring; SS01/SS03 no summary line / summary not ending in a period; PR01/PR02 a parameter
#: missing from / unknown to Parameters; PR04 a parameter without a type; PR07 without a description; PR10 a
#: missing space before the colon; RT01 no Returns section for a function that returns; RT03 a return value
#: without a description; EX01 no Examples section.
numpydoc_validation_checks = {"GL08", "SS01", "SS03", "PR01", "PR02", "PR04", "PR07", "PR10", "RT01", "RT03", "EX01"}
