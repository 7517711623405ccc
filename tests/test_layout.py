"""The tree reads as the pipeline: imports point down the stages, never up, and never in a circle.

``MAY_IMPORT`` is the table: each stage of ``synth`` (a package, or a group of top-level modules)
and the stages it may import. Every import in ``synth/**.py`` counts, wherever it stands: at the
top, inside a function (lazy), or under ``if TYPE_CHECKING``. A module that imports a stage its
row does not list fails, as does a circle of modules, even inside one stage. A new top-level
module or package fails until it has a row (and the top level stays at most eight modules).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "synth"

SHARED = frozenset({"shared"})
MAY_IMPORT: dict[str, frozenset[str]] = {  # stage -> the stages it may import (besides itself)
    "shared": frozenset(),  # errors, defaults, progress, files: small pieces every stage uses
    "columns": SHARED,  # what a column is; the vocabulary of every stage above
    "tables": SHARED | {"columns"},  # reads tables; counts rows where they are (encoding them by their columns)
    "privacy": SHARED | {"columns"},  # the boundary: mechanisms, accounting, the curator
    "domains": SHARED | {"columns", "tables", "privacy"},  # profiles; domains found under DP, through the curator
    "model": SHARED | {"columns", "privacy"},  # graphical models fitted to measurements (privacy.measurement)
    "engines": SHARED | {"columns", "privacy", "model"},  # talk to the curator's Boundary, never to tables
    "release": SHARED | {"columns", "tables", "privacy", "domains", "model", "engines"},
    "generation": SHARED | {"columns", "model", "engines", "release"},  # reads the Description, never rows
    # a database under person-level DP: bounds each person's rows, then measures each table's part through
    # the curator and the engines, and generates through generation (beside release, above it)
    "relational": SHARED | {"columns", "tables", "privacy", "domains", "model", "engines", "release", "generation"},
    "pages": SHARED | {"release"},  # what the two HTML reports share
    # reads the original: not DP (a relational release too: its keys, its stored Descriptions)
    "evaluate": SHARED | {"columns", "tables", "domains", "release", "relational", "pages"},
    "inspect": SHARED | {"columns", "model", "engines", "release", "generation", "evaluate", "pages"},
    # the release card and signatures: the release folder alone (never tables, privacy or the curator)
    "sharing": SHARED | {"release", "relational", "pages"},
    "verbs": frozenset({"shared", "columns", "tables", "privacy", "domains", "model", "engines", "release",
                        "generation", "relational", "pages", "evaluate", "inspect", "sharing"}),  # the user's verbs
}
TOP_LEVEL = {  # top-level module -> its stage
    "__init__": "verbs", "__main__": "verbs", "api": "verbs", "cli": "verbs",
    "errors": "shared", "defaults": "shared", "progress": "shared", "files": "shared",
}
MAX_TOP_LEVEL_MODULES = 8


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` (a package's own name for its __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = (package.name, *path.relative_to(package).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) for each import of one of ``known`` in the module ``name`` at ``path``."""
    root = name.split(".")[0]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from its package upwards
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != root:
                continue
            while target not in known:  # an attribute of a module: the module
                target = target.rpartition(".")[0]
            if target != name:
                yield node.lineno, target


def stage(name: str, package: Path) -> str | None:
    """The stage of a module of ``package``: the subpackage it is in, or its row in TOP_LEVEL."""
    parts = name.split(".")
    if len(parts) == 1:
        return TOP_LEVEL["__init__"]
    if (package / parts[1]).is_dir():
        return parts[1]
    return TOP_LEVEL.get(parts[1])


def upward_imports(package: Path, table: Mapping[str, frozenset[str]]) -> list[str]:
    known = modules(package)
    found = []
    for name, path in known.items():
        for line, target in imported(name, path, known):
            here, there = stage(name, package), stage(target, package)
            if here != there and there not in table.get(here or "", frozenset()):
                found.append(f"{path.relative_to(package.parent)}:{line} imports {target}: stage {here!r} may "
                             f"not import {there!r}")
    return found


def circles(package: Path) -> list[list[str]]:
    """The import circles among ``package``'s modules (strongly connected sets of two or more)."""
    known = modules(package)
    graph = {name: sorted({target for _, target in imported(name, path, known)}) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for name in graph:
        if name not in index:
            visit(name)
    return found


def test_the_table_is_a_ladder() -> None:
    """The table itself has no circle: no two stages may import each other, directly or round about."""
    reach = {name: set(allowed) for name, allowed in MAY_IMPORT.items()}
    for _ in MAY_IMPORT:
        for name in reach:
            reach[name] |= {far for near in reach[name] for far in reach[near]}
    assert not [name for name in reach if name in reach[name]]
    assert set(TOP_LEVEL.values()) <= set(MAY_IMPORT) and all(set(v) <= set(MAY_IMPORT) for v in MAY_IMPORT.values())


def test_every_module_has_a_stage_and_the_top_level_stays_small() -> None:
    top = sorted(path.stem for path in PACKAGE.glob("*.py"))
    packages = sorted(path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file())
    assert [name for name in top if name not in TOP_LEVEL] == [], "give the new module a row in TOP_LEVEL"
    assert [name for name in packages if name not in MAY_IMPORT] == [], "give the new package a row in MAY_IMPORT"
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"{len(top)} modules at the top of synth/: {top}"


def test_imports_point_down_the_stages() -> None:
    found = upward_imports(PACKAGE, MAY_IMPORT)
    assert not found, "imports that run up the stages (see MAY_IMPORT in tests/test_layout.py):\n" + "\n".join(found)


def test_no_import_circles() -> None:
    assert circles(PACKAGE) == []


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A small package laid out like synth: columns below privacy, with one upward import (at the
    top of a function, as lazy imports are) and one circle inside columns."""
    package = tmp_path / "synth"
    files = {
        "__init__.py": "",
        "errors.py": "",
        "columns/__init__.py": "",
        "columns/kinds.py": "from synth.columns import cells\n",
        "columns/cells.py": ("from synth.columns.kinds import K\nfrom synth.errors import X\n\n\ndef f():\n"
                             "    from synth.privacy.mechanisms import laplace\n"),
        "columns/column.py": "from .kinds import Kind\n",
        "privacy/__init__.py": "",
        "privacy/mechanisms.py": "",
        "privacy/curator.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from synth.columns.column import C\n",
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    return package


def test_the_checks_catch_a_planted_upward_import_and_circle(planted: Path) -> None:
    found = upward_imports(planted, MAY_IMPORT)
    assert found == ["synth/columns/cells.py:6 imports synth.privacy.mechanisms: stage 'columns' may not import "
                     "'privacy'"]
    assert circles(planted) == [["synth.columns.cells", "synth.columns.kinds"]]
