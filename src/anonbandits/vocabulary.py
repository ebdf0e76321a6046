"""The tables of docs/parameters.md, written from the registry and the results schema so they cannot go stale.

``python -m anonbandits.vocabulary docs/parameters.md`` rewrites the generated parts of the page (between the
``<!-- generated: NAME -->`` and ``<!-- end: NAME -->`` markers); a test checks that the page equals what
this module writes.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from anonbandits import registry, results


def _algorithms(names: set[str], specs: dict[str, registry.AlgorithmSpec]) -> str:
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


def parameter_table() -> str:
    """One row per parameter name and meaning: unit, default and the algorithms that take it."""
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
    """Every deprecated parameter name, its new name and the algorithms concerned."""
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
    """``text`` (the page) with every generated section replaced by what this module writes now."""
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n).*?(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"the page has no section {name!r}")
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + "\n" + m.group(2), text)
    return text


if __name__ == "__main__":
    page = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/parameters.md")
    page.write_text(render(page.read_text(encoding="utf-8")), encoding="utf-8")
