"""The tables of docs/parameters.md, written from the registry and the results schema so they cannot go stale.

``python -m anonbandits.vocabulary docs/parameters.md`` rewrites the generated parts of the page (between the
``<!-- generated: NAME -->`` and ``<!-- end: NAME -->`` markers); a test checks that the page equals what
this module writes.
"""

from __future__ import annotations

import functools
import re
import sys
from collections import defaultdict
from pathlib import Path

from anonbandits import registry, results
from anonbandits._docstrings import fill
from anonbandits.errors import ConfigError, _shown
from anonbandits.spec import AlgorithmSpec


def _algorithms(names: set[str], specs: dict[str, AlgorithmSpec]) -> str:
    """``names`` in words: a whole family by its family name, the rest one by one."""
    families: dict[str, list[str]] = defaultdict(list)
    for spec in specs.values():
        families[spec.family].append(spec.name)
    out, left = [], set(names)
    if left == set(specs):
        return "all"
    for family, members in families.items():
        if len(members) > 1 and set(members) <= left:
            out.append(f"{family} (all)")
            left -= set(members)
    return ", ".join(out + [f"`{n}`" for n in sorted(left)])


def _default(value: object) -> str:
    return '`""`' if value == "" else f"`{value}`"


@fill
def parameter_table() -> str:
    """The parameter table of docs/parameters.md, from the registry.

    Returns
    -------
    str
        A Markdown table: one row per parameter name and meaning, with its unit, default and the algorithms
        that take it.

    {{refs_parameters}}

    Examples
    --------
    >>> parameter_table().splitlines()[0]
    '| parameter | meaning | unit | default | algorithms |'
    """
    specs = registry.all_algorithms()
    rows: dict[tuple[str, str, str, str], set[str]] = defaultdict(set)
    for spec in specs.values():
        for p in spec.params:
            rows[(p.name, p.help, p.unit or "-", _default(p.default))].add(spec.name)
    lines = ["| parameter | meaning | unit | default | algorithms |", "| --- | --- | --- | --- | --- |"]
    for (name, meaning, unit, default), names in sorted(rows.items(), key=lambda kv: (kv[0][0].lower(), kv[0])):
        lines.append(f"| `{name}` | {meaning.replace('|', '/')} | {unit} | {default} | {_algorithms(names, specs)} |")
    return "\n".join(lines)


def renamed_table() -> str:
    """The table of deprecated parameter names of docs/parameters.md, from the registry.

    Returns
    -------
    str
        A Markdown table: every deprecated parameter name, its new name and the algorithms concerned.

    References
    ----------
    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023
    (its agents are now ``users``).

    Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019.

    Examples
    --------
    >>> [line for line in renamed_table().splitlines() if line.startswith("| `agents`")]
    ['| `agents` | `users` | multi-agent BAI (paper 003) (all), decentralized (all) |']
    """
    specs = registry.all_algorithms()
    rows: dict[tuple[str, str], set[str]] = defaultdict(set)
    for spec in specs.values():
        for p in spec.params:
            for alias in p.aliases:
                rows[(alias, p.name)].add(spec.name)
    lines = ["| deprecated name | new name | algorithms |", "| --- | --- | --- |"]
    lines += [f"| `{old}` | `{new}` | {_algorithms(names, specs)} |" for (old, new), names in sorted(rows.items())]
    return "\n".join(lines)


#: the generated sections of docs/parameters.md
SECTIONS = {"parameters": parameter_table, "renamed": renamed_table, "metrics": results.markdown_table}


def render(text: str) -> str:
    """The page ``text`` with every generated section replaced by what this module writes now.

    Parameters
    ----------
    text : str
        The page (docs/parameters.md), holding each section of ``SECTIONS`` between the markers
        ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``.

    Returns
    -------
    str
        The page with the tables written afresh; the rest is unchanged.

    Raises
    ------
    ConfigError
        (A ``ValueError``.) When ``text`` is not a str, or lacks a section's markers.

    References
    ----------
    The parameters and metrics are those of the algorithms of:

    Esfandiari, Mirrokni, Schneider, "Anonymous Bandits for Multi-User Systems", NeurIPS 2022.

    Hu, Huang, Mehta, "Near-Optimal Algorithms for Private Online Learning in a Stochastic Environment", arXiv
    preprint.

    Chowdhury, Zhou, "Distributed Differential Privacy in Multi-Armed Bandits", ICLR 2023.

    Rio, Barlier, Colin, Soare, "Multi-Agent Best Arm Identification with Private Communications", ICML 2023.

    Féraud, Alami, Laroche, "Decentralized Exploration in Multi-Armed Bandits", ICML 2019.

    Examples
    --------
    >>> page = "".join(f"<!-- generated: {name} -->\\n<!-- end: {name} -->\\n" for name in SECTIONS)
    >>> render(page).splitlines()[1]
    '| parameter | meaning | unit | default | algorithms |'
    >>> render("# no tables")
    Traceback (most recent call last):
    ...
    anonbandits.errors.ConfigError: text has no section 'parameters' (its markers <!-- generated: parameters --> ...
    """
    if not isinstance(text, str):
        raise ConfigError(f"text must be the page as a str, got {_shown(text)}")
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n).*?(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise ConfigError(
                f"text has no section {name!r} (its markers <!-- generated: {name} --> and <!-- end: {name} -->)"
            )
        text = pattern.sub(functools.partial(_section, make()), text)
    return text


def _section(table: str, match: re.Match[str]) -> str:
    """A generated section's markers around ``table``."""
    return match.group(1) + table + "\n" + match.group(2)


if __name__ == "__main__":
    page = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/parameters.md")
    page.write_text(render(page.read_text(encoding="utf-8")), encoding="utf-8")
